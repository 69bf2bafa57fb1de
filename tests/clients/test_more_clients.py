"""confluent-kafka-go, aiokafka and rdkafka as kinds, offline: their `--client` syntax, the
registries' listings as captured here, their build recipes and locks with fake `go`/`cargo`, and
their `kconform clients` rows. The real builds and runs are in test_versioned_clients.py."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.fixtures import lockfiles
from kconform.fixtures.clients import create_driver, parse_clients, versions
from kconform.fixtures.clients.cargobuild import (
    CargoDriver,
    cargo_versions,
    index_entry_path,
    index_versions,
)
from kconform.fixtures.clients.gobuild import GoDriver
from kconform.fixtures.targets.base import Capability

# what `go list -m -versions` answers for confluent-kafka-go through the proxy here (3 of 18)
GO_LIST = "github.com/confluentinc/confluent-kafka-go/v2 v2.3.0 v2.6.1 v2.11.1"
FAKE_GO = r"""#!/bin/sh
echo "$* CGO_ENABLED=$CGO_ENABLED" >> "$FAKE_LOG"
case "$1" in
  list) echo "GO_LIST"; exit 0 ;;
  mod)
    [ -n "$FAKE_FAIL" ] && { echo "$FAKE_FAIL" >&2; exit 1; }
    [ "$2" = tidy ] && [ -z "$FAKE_NO_SUM" ] && awk '/^require [^(]/ {print $2, $3, "h1:x="}' \
      go.mod > go.sum
    exit 0 ;;
  build)
    version=$(awk '/^require [^(]/ {print $3}' go.mod)
    id='{"implementation": "fake", "version": "'$version'", "capabilities": ["telemetry"]}'
    printf '#!/bin/sh\necho %s\n' "'$id'" > driver
    chmod +x driver; exit 0 ;;
esac
exit 2
""".replace("GO_LIST", GO_LIST)
FAKE_CARGO = r"""#!/bin/sh
echo "$*" >> "$FAKE_LOG"
case "$1" in
  info) exit 0 ;;
  generate-lockfile)
    [ -n "$FAKE_FAIL" ] && { echo "$FAKE_FAIL" >&2; exit 101; }
    version=$(sed -n 's/^rdkafka = { version = "=\([^"]*\)".*/\1/p' Cargo.toml)
    printf '[[package]]\nname = "rdkafka"\nversion = "%s"\n' "$version" > Cargo.lock; exit 0 ;;
  build)
    [ -n "$FAKE_BUILD_FAIL" ] && { echo "$FAKE_BUILD_FAIL" >&2; exit 101; }
    version=$(sed -n '/^name = "rdkafka"/{n;s/version = "\(.*\)"/\1/p}' Cargo.lock)
    mkdir -p "$CARGO_TARGET_DIR/release"
    id='{"implementation": "fake", "version": "'$version'", "capabilities": ["telemetry"]}'
    printf '#!/bin/sh\necho %s\n' "'$id'" > "$CARGO_TARGET_DIR/release/driver"
    chmod +x "$CARGO_TARGET_DIR/release/driver"; exit 0 ;;
esac
exit 2
"""


def _entry(version: str, yanked: bool = False) -> bytes:
    return json.dumps({"name": "rdkafka", "vers": version, "yanked": yanked}).encode()


# the layout of cargo's sparse-index cache file for rdkafka, cut down to four entries
INDEX_CACHE = b"\0".join([b"\x03\x02\x00\x00\x00Unknown", b"0.37.0", _entry("0.37.0"),
                          b"0.36.3", _entry("0.36.3", yanked=True), b"0.38.0", _entry("0.38.0"),
                          b"0.39.0", _entry("0.39.0")]) + b"\0"  # fmt: skip


@pytest.fixture
def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`go` and `cargo` that log their arguments to the returned file; caches under tmp."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, script in (("go", FAKE_GO), ("cargo", FAKE_CARGO)):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "tools.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.delenv("FAKE_FAIL", raising=False)
    monkeypatch.delenv("FAKE_BUILD_FAIL", raising=False)
    monkeypatch.delenv("FAKE_NO_SUM", raising=False)
    monkeypatch.setenv(lockfiles.SEARCH_ENV, str(tmp_path / "locks"))  # then the committed ones
    for name in ("KCONFORM_CACHE", "GOMODCACHE", "CARGO_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    return log


@pytest.mark.parametrize(
    ("text", "label"),
    [("confluent-kafka-go@2.15.0", "confluent-kafka-go@v2.15.0"),  # Go versions carry a `v`
     ("confluent-kafka-go@v2.5.0", "confluent-kafka-go@v2.5.0"),
     ("aiokafka@v0.14.0", "aiokafka@0.14.0"), ("rdkafka@0.39.0", "rdkafka@0.39.0")],
)  # fmt: skip
def test_a_version_is_normalised_as_its_registry_spells_it(text: str, label: str) -> None:
    assert [s.label for s in parse_clients(text)] == [label]


@pytest.mark.parametrize("text", ["confluent-kafka-go", "aiokafka", "rdkafka", "aiokafka@0.14",
                                  "rdkafka@latest", "confluent-kafka-go@v2.16.0-rc1"])  # fmt: skip
def test_each_kind_needs_a_release_version(text: str) -> None:
    with pytest.raises(ValueError, match="version"):
        parse_clients(text)


def test_go_listing_adds_the_versions_the_module_cache_resolved(fake_tools: Path) -> None:
    """The proxy here lists 3 of the 18 tags it serves; those it answered before count too."""
    info = Path(os.environ["GOMODCACHE"], "cache/download/github.com/confluentinc",
                "confluent-kafka-go/v2/@v")  # fmt: skip
    info.mkdir(parents=True)
    for tag in ("v2.5.0", "v2.15.0"):
        (info / f"{tag}.info").write_text("{}")
    (info / "v2.13.2.lock").write_text("")  # asked for, never served: no .info
    listed = versions.go_versions("github.com/confluentinc/confluent-kafka-go/v2")
    assert listed == ["v2.3.0", "v2.5.0", "v2.6.1", "v2.11.1", "v2.15.0"]


def test_go_module_cache_paths_escape_capitals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOMODCACHE", str(tmp_path))
    (tmp_path / "cache/download/github.com/!i!b!m/sarama/@v").mkdir(parents=True)
    (tmp_path / "cache/download/github.com/!i!b!m/sarama/@v/v1.61.1.info").write_text("{}")
    assert versions.go_cached_versions("github.com/IBM/sarama") == ["v1.61.1"]


def test_crates_index_cache_is_read_without_yanked_versions(fake_tools: Path) -> None:
    assert index_entry_path("rdkafka") == "rd/ka/rdkafka"
    assert (index_entry_path("syn"), index_entry_path("cc")) == ("3/s/syn", "2/cc")
    assert index_versions(INDEX_CACHE) == ["0.37.0", "0.38.0", "0.39.0"]
    entry = Path(os.environ["CARGO_HOME"], "registry/index/index.crates.io-x/.cache/rd/ka/rdkafka")
    entry.parent.mkdir(parents=True)
    entry.write_bytes(INDEX_CACHE)
    assert cargo_versions("rdkafka") == ["0.37.0", "0.38.0", "0.39.0"]
    assert fake_tools.read_text().splitlines() == ["info rdkafka"]


def test_confluent_kafka_go_builds_with_cgo_on(
    fake_tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CGO_ENABLED", "0")  # cgo off in the environment: the build turns it on
    driver = create_driver(parse_clients("confluent-kafka-go@v2.15.0")[0])
    assert isinstance(driver, GoDriver) and driver.unavailable_reason() is None
    assert (driver.version, driver.capabilities) == ("v2.15.0", frozenset({Capability.TELEMETRY}))
    go_mod = (driver.folder / "go.mod").read_text()
    assert "require github.com/confluentinc/confluent-kafka-go/v2 v2.15.0" in go_mod
    assert "confluent-kafka-go/v2/kafka" in (driver.folder / "main.go").read_text()
    committed = lockfiles.COMMITTED / "confluent-kafka-go" / "v2.15.0"
    assert (driver.folder / "go.sum").read_bytes() == (committed / "go.sum").read_bytes()
    assert driver.lock == lockfiles.digest(committed)
    assert fake_tools.read_text().splitlines() == [
        "mod verify CGO_ENABLED=1",
        "build -mod=readonly -trimpath -o driver . CGO_ENABLED=1",
    ]


def test_a_go_lock_is_written_by_tidy_and_then_builds(
    fake_tools: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kconform clients lock` runs tidy in a scratch folder and writes go.mod and go.sum; the
    build then takes both from there and resolves nothing."""
    monkeypatch.delenv("CGO_ENABLED", raising=False)
    (spec,) = parse_clients("confluent-kafka-go@v2.14.0")
    reason = create_driver(spec).unavailable_reason() or ""
    assert "`kconform clients lock confluent-kafka-go@v2.14.0`" in reason
    assert not fake_tools.exists()  # no lock: go never ran
    monkeypatch.setenv("FAKE_NO_SUM", "1")
    assert main(["clients", "lock", "confluent-kafka-go@v2.14.0"]) == 2
    assert "`go mod tidy` left no go.sum" in capsys.readouterr().out
    monkeypatch.delenv("FAKE_NO_SUM")
    assert main(["clients", "lock", "confluent-kafka-go@v2.14.0"]) == 0
    lock = lockfiles.write_root() / "confluent-kafka-go" / "v2.14.0"
    assert [p.name for p in lockfiles.files(lock)] == ["go.mod", "go.sum"]
    assert "confluent-kafka-go/v2 v2.14.0 h1:x=" in (lock / "go.sum").read_text()
    driver = create_driver(spec)
    assert driver.unavailable_reason() is None and driver.lock == lockfiles.digest(lock)
    assert fake_tools.read_text().splitlines() == [
        "mod tidy CGO_ENABLED=", "mod tidy CGO_ENABLED=", "mod verify CGO_ENABLED=1",
        "build -mod=readonly -trimpath -o driver . CGO_ENABLED=1"]  # fmt: skip


def test_an_unserved_go_version_or_no_c_compiler_is_unavailable_with_the_reason(
    fake_tools: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unserved = "go: github.com/confluentinc/confluent-kafka-go/v2@v2.13.2: 404 Not Found"
    monkeypatch.setenv("FAKE_FAIL", unserved)
    assert main(["clients", "lock", "confluent-kafka-go@v2.13.2"]) == 2
    out = capsys.readouterr().out
    assert "`go mod tidy` exited 1" in out and "404 Not Found" in out
    assert not (lockfiles.write_root() / "confluent-kafka-go").exists()  # nothing half-written
    monkeypatch.delenv("FAKE_FAIL")
    monkeypatch.setenv("CC", "no-such-cc")
    reason = create_driver(parse_clients("confluent-kafka-go@v2.15.0")[0]).unavailable_reason()
    assert reason is not None and "needs cgo" in reason and "no-such-cc" in reason
    reason = create_driver(parse_clients("confluent-kafka-go@v2.4.0")[0]).unavailable_reason()
    assert reason is not None and "v2.5.0 or newer" in reason


def test_rdkafka_is_built_with_cargo_against_the_exact_version(fake_tools: Path) -> None:
    driver = create_driver(parse_clients("rdkafka@0.39.0")[0])
    assert isinstance(driver, CargoDriver) and driver.unavailable_reason() is None
    assert driver.version == "0.39.0" and Capability.TELEMETRY in driver.capabilities
    manifest = (driver.folder / "Cargo.toml").read_text()
    assert 'rdkafka = { version = "=0.39.0"' in manifest and "{version}" not in manifest
    assert {p.name for p in driver.folder.iterdir()} >= {"main.rs", "build.rs", "driver"}
    committed = lockfiles.COMMITTED / "rdkafka" / "0.39.0"
    assert (driver.folder / "Cargo.lock").read_bytes() == (committed / "Cargo.lock").read_bytes()
    assert driver.lock == lockfiles.digest(committed)
    assert fake_tools.read_text().splitlines() == ["build --release --locked"]  # no resolution
    assert (driver.folder.parent / "target").is_dir()  # shared by the kind's builds


def test_rdkafka_versions_unknown_or_without_kip714_are_unavailable(
    fake_tools: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reason = create_driver(parse_clients("rdkafka@0.37.0")[0]).unavailable_reason() or ""
    assert "0.38.0 or newer" in reason and not fake_tools.exists()  # cargo never ran
    reason = create_driver(parse_clients("rdkafka@0.40.0")[0]).unavailable_reason() or ""
    assert "`kconform clients lock rdkafka@0.40.0`" in reason and not fake_tools.exists()
    monkeypatch.setenv("FAKE_FAIL", 'failed to select a version for `rdkafka = "=0.40.0"`')
    assert main(["clients", "lock", "rdkafka@0.40.0"]) == 2
    out = capsys.readouterr().out
    assert "`cargo generate-lockfile` exited 101" in out and "=0.40.0" in out


def test_an_rdkafka_lock_is_written_once_and_a_changed_one_rebuilds(
    fake_tools: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["clients", "lock", "rdkafka@0.40.0"]) == 0
    lock = lockfiles.write_root() / "rdkafka" / "0.40.0" / "Cargo.lock"
    assert 'version = "0.40.0"' in lock.read_text() and str(lock.parent) in capsys.readouterr().out
    (spec,) = parse_clients("rdkafka@0.40.0")
    before = create_driver(spec)
    assert isinstance(before, CargoDriver) and before.unavailable_reason() is None
    assert before.lock == lockfiles.digest(lock.parent)
    lock.write_text(lock.read_text() + '\n[[package]]\nname = "libc"\nversion = "0.2.1"\n')
    after = create_driver(spec)
    assert isinstance(after, CargoDriver) and after.unavailable_reason() is None
    assert after.lock != before.lock and after.folder != before.folder
    assert fake_tools.read_text().splitlines() == [
        "generate-lockfile", "build --release --locked", "build --release --locked"]  # fmt: skip


def test_a_cargo_lock_the_manifest_has_outgrown_says_to_lock_again(
    fake_tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BUILD_FAIL", "error: the lock file Cargo.lock needs to be updated "
                                          "but --locked was passed to prevent this")  # fmt: skip
    reason = create_driver(parse_clients("rdkafka@0.39.0")[0]).unavailable_reason() or ""
    assert "needs to be updated" in reason
    assert "`kconform clients lock rdkafka@0.39.0` writes it again" in reason
    monkeypatch.setenv("FAKE_BUILD_FAIL", "error: failed to verify the checksum of `libc v0.2.1`")
    reason = create_driver(parse_clients("rdkafka@0.39.0")[0]).unavailable_reason() or ""
    assert "failed to verify the checksum" in reason and "clients lock" not in reason


def test_a_cargo_missing_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    reason = create_driver(parse_clients("rdkafka@0.39.0")[0]).unavailable_reason() or ""
    assert "no `cargo` on PATH" in reason


def test_the_clients_listing_shows_each_kinds_versions_from_its_floor(
    fake_tools: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listings = versions.clients_cache() / "listings"
    listings.mkdir(parents=True)
    captured = {
        "confluent-kafka-go": ["v2.4.0", "v2.5.0", "v2.15.0"],
        "aiokafka": ["0.8.1", "0.9.0", "0.11.0", "0.14.0"],
        "rdkafka": ["0.37.0", "0.38.0", "0.39.0"],
    }
    for name, listed in captured.items():
        (listings / f"{name}.json").write_text(json.dumps({"t": time.time(), "versions": listed}))
    assert main(["clients"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    assert "v2.5.0 v2.15.0" in rows["confluent-kafka-go@<version>"]
    assert "v2.4.0" not in rows["confluent-kafka-go@<version>"]
    assert "0.9.0 0.11.0 0.14.0" in rows["aiokafka@<version>"]
    assert "0.8.1" not in rows["aiokafka@<version>"]
    assert "0.38.0 0.39.0" in rows["rdkafka@<version>"] and "0.37" not in rows["rdkafka@<version>"]
    asked = fake_tools.read_text() if fake_tools.exists() else ""  # franz-go and sarama ask
    assert "confluent-kafka-go" not in asked and "rdkafka" not in asked  # the kept listings
