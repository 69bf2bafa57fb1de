"""How `kind@version` drivers are built, offline: a fake `go` on PATH, a fake pip step.

The fake `go` records its arguments, and its `build` writes a driver that describes itself with
the version the lock's go.mod requires, so the whole recipe (the committed lock copied, verify,
a read-only build, the `--describe` check, one build per version under the lock, failures that
name their step) runs without a toolchain or a registry. `test_locked_builds.py` builds against
a real `go` and `pip` from a local module proxy and a local wheel.
"""

from __future__ import annotations

import os
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from kconform.fixtures import lockfiles
from kconform.fixtures.clients import create_driver, parse_clients, versions
from kconform.fixtures.clients import venv as venv_module
from kconform.fixtures.clients.gobuild import CONTRACT, GoDriver
from kconform.fixtures.clients.registry import client_kinds
from kconform.fixtures.targets.base import Capability

FAKE_GO = r"""#!/bin/sh
echo "$*" >> "$FAKE_GO_LOG"
echo "CGO_ENABLED=$CGO_ENABLED GOFLAGS=$GOFLAGS" >> "$FAKE_GO_LOG.env"
case "$1" in
  mod) [ -n "$FAKE_GO_TIDY_FAIL" ] && { echo "$FAKE_GO_TIDY_FAIL" >&2; exit 1; }; exit 0 ;;
  list) echo "github.com/twmb/franz-go v1.18.0 v1.19.0 v1.22.3-rc1 v1.22.3"; exit 0 ;;
  build)
    [ -n "$FAKE_GO_FAIL" ] && { echo "$FAKE_GO_FAIL" >&2; exit 1; }
    version=$(awk '/^require [^(]/ {print $3}' go.mod)
    [ -n "$FAKE_GO_VERSION" ] && version=$FAKE_GO_VERSION
    identity='{"implementation": "fake", "version": "'$version'", "capabilities": ["telemetry"]}'
    printf '#!/bin/sh\necho %s\n' "'$identity'" > driver
    chmod +x driver; sleep 0.2; exit 0 ;;
esac
exit 2
"""


@pytest.fixture
def fake_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "go").write_text(FAKE_GO)
    (bin_dir / "go").chmod(0o755)
    log = tmp_path / "go.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GO_LOG", str(log))
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GOMODCACHE", str(tmp_path / "gomodcache"))  # not this machine's
    monkeypatch.delenv(lockfiles.SEARCH_ENV, raising=False)  # the committed locks only
    for name in ("FAKE_GO_FAIL", "FAKE_GO_VERSION", "FAKE_GO_TIDY_FAIL"):
        monkeypatch.delenv(name, raising=False)
    return log


def test_a_go_driver_is_built_once_against_the_version_asked(fake_go: Path) -> None:
    (spec,) = parse_clients("franz-go@1.22.3")  # `v` added: Go module versions carry it
    assert spec.label == "franz-go@v1.22.3"
    drivers: list[object] = []
    threads = [threading.Thread(target=lambda: drivers.append(create_driver(spec)))
               for _ in range(3)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    driver = drivers[0]
    assert isinstance(driver, GoDriver) and driver.unavailable_reason() is None
    assert (driver.version, driver.capabilities) == ("v1.22.3", frozenset({Capability.TELEMETRY}))
    committed = lockfiles.COMMITTED / "franz-go" / "v1.22.3"
    for name in ("go.mod", "go.sum"):  # the committed lock, as it is
        assert (driver.folder / name).read_bytes() == (committed / name).read_bytes()
    assert "require github.com/twmb/franz-go v1.22.3" in (driver.folder / "go.mod").read_text()
    assert driver.lock == lockfiles.digest(committed) and driver.describe()["lock"] == driver.lock
    assert (driver.folder / "main.go").read_text().startswith("// Command franzgo")
    assert (driver.folder / "contract.go").read_text() == CONTRACT.read_text()
    steps = ["mod verify", "build -mod=readonly -trimpath -o driver ."]
    assert fake_go.read_text().splitlines() == steps
    env = Path(f"{fake_go}.env").read_text()
    assert "-mod=readonly" in env and "-mod=mod" not in env  # GOFLAGS agrees with the flag


def _lock_of(committed: str, into: Path, kind: str, version: str) -> Path:
    """A copy of the committed lock `committed` (`kind/version`) as the lock of `kind@version`
    in `into`, a folder `$KCONFORM_LOCKFILES` names."""
    folder = into / kind / version
    folder.mkdir(parents=True)
    for path in lockfiles.files(lockfiles.COMMITTED / committed):
        text = path.read_text().replace(committed.split("/")[1], version)
        (folder / path.name).write_text(text)
    return folder


def test_a_go_version_without_a_committed_lock_is_unavailable_unbuilt(fake_go: Path) -> None:
    driver = create_driver(parse_clients("franz-go@v1.22.9")[0])
    reason = driver.unavailable_reason() or ""
    assert "no committed dependency lock" in reason
    assert "`kconform clients lock franz-go@v1.22.9`" in reason
    assert not fake_go.exists() and driver.lock == ""  # nothing resolved afresh


def test_a_changed_go_lock_is_another_build(
    fake_go: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(lockfiles.SEARCH_ENV, str(tmp_path / "locks"))
    lock = _lock_of("franz-go/v1.22.3", tmp_path / "locks", "franz-go", "v1.22.4")
    (spec,) = parse_clients("franz-go@v1.22.4")
    before = create_driver(spec)
    assert isinstance(before, GoDriver) and before.unavailable_reason() is None
    with (lock / "go.sum").open("a") as sum_file:
        sum_file.write("example.com/more v1.0.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")
    after = create_driver(spec)
    assert isinstance(after, GoDriver) and after.unavailable_reason() is None
    assert after.lock != before.lock and after.folder != before.folder
    assert (after.folder / "go.sum").read_bytes() == (lock / "go.sum").read_bytes()
    assert fake_go.read_text().count("build -mod=readonly") == 2  # built again


def test_a_lock_the_driver_has_outgrown_says_to_lock_again(
    fake_go: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GO_FAIL", "main.go:9:2: missing go.sum entry for module providing "
                                       "package github.com/twmb/franz-go/pkg/sasl")  # fmt: skip
    reason = create_driver(parse_clients("franz-go@v1.22.3")[0]).unavailable_reason() or ""
    assert "missing go.sum entry" in reason and "`go build -mod=readonly" in reason
    assert "`kconform clients lock franz-go@v1.22.3` writes it again" in reason


def test_the_build_folder_changes_with_the_shared_contract_file(
    fake_go: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (spec,) = parse_clients("sarama@v1.61.1")
    before = create_driver(spec)
    assert isinstance(before, GoDriver)
    edited = tmp_path / "contract.go"
    edited.write_text(CONTRACT.read_text() + "// edited\n")
    monkeypatch.setattr("kconform.fixtures.clients.gobuild.CONTRACT", edited)
    after = create_driver(spec)
    assert isinstance(after, GoDriver) and after.folder != before.folder
    assert (after.folder / "contract.go").read_text().endswith("// edited\n")


def test_a_failed_build_is_unavailable_naming_the_step(
    fake_go: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(lockfiles.SEARCH_ENV, str(tmp_path / "locks"))
    _lock_of("franz-go/v1.22.3", tmp_path / "locks", "franz-go", "v1.22.9")
    monkeypatch.setenv("FAKE_GO_FAIL", "unknown revision v1.22.9")
    reason = create_driver(parse_clients("franz-go@v1.22.9")[0]).unavailable_reason() or ""
    assert "building franz-go@v1.22.9" in reason and "go build" in reason
    assert "unknown revision v1.22.9" in reason and "clients lock" not in reason
    monkeypatch.delenv("FAKE_GO_FAIL")
    assert create_driver(parse_clients("franz-go@v1.22.9")[0]).unavailable_reason() is None


def test_a_build_that_reports_another_version_is_refused(
    fake_go: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GO_VERSION", "v1.20.0")
    reason = create_driver(parse_clients("sarama@v1.61.1")[0]).unavailable_reason() or ""
    assert "asked for v1.61.1" in reason and "v1.20.0" in reason


def test_versions_before_the_drivers_floor_are_unavailable_without_a_build(fake_go: Path) -> None:
    reason = create_driver(parse_clients("franz-go@v1.18.0")[0]).unavailable_reason() or ""
    assert "v1.19.0 or newer" in reason
    assert not fake_go.exists()  # go never ran


def test_without_go_the_reason_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    reason = create_driver(parse_clients("sarama@v1.61.1")[0]).unavailable_reason() or ""
    assert "no `go` on PATH" in reason


def test_go_versions_come_from_go_list(fake_go: Path) -> None:
    assert versions.go_versions("github.com/twmb/franz-go") == ["v1.18.0", "v1.19.0", "v1.22.3"]
    (kind,) = [k for k in client_kinds() if k.name == "franz-go"]
    assert kind.versions is not None and kind.versions() == ["v1.19.0", "v1.22.3"]


@pytest.mark.parametrize("text", ["franz-go", "sarama", "franz-go@latest", "sarama@1.61"])
def test_go_kinds_need_a_release(text: str) -> None:
    with pytest.raises(ValueError, match="version"):
        parse_clients(text)


def test_a_confluent_kafka_venv_installs_its_locked_wheels_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The venv recipe with pip replaced: a fake `confluent_kafka` stands in for the wheel."""
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(lockfiles.SEARCH_ENV, raising=False)
    steps: list[list[str]] = []
    real = versions.run_tool

    def fake_run_tool(argv: list[str], what: str, **kw: object) -> str:
        steps.append(argv)
        if "pip" not in argv:
            return real(argv, what, cwd=kw["cwd"])  # type: ignore[arg-type]
        if "index" in argv:  # PyPI's listing, asked for an unlocked version (never cached here)
            return "confluent-kafka (2.8.2)\nAvailable versions: 2.8.2, 2.8.0\n"
        venv = Path(argv[argv.index("--python") + 1]).parents[1]
        site = next((venv / "lib").glob("*/site-packages"))
        (site / "confluent_kafka").mkdir()
        (site / "confluent_kafka" / "__init__.py").write_text(
            textwrap.dedent("""
            def version(): return ("2.8.2", 0x2080200)
            def libversion(): return ("2.8.2", 0x20802ff)
        """)
        )
        return ""

    monkeypatch.setattr(venv_module.versions, "run_tool", fake_run_tool)
    driver = create_driver(parse_clients("confluent-kafka@2.8.2")[0])
    assert driver.unavailable_reason() is None
    assert (driver.implementation, driver.version) == (
        "confluent-kafka-python (librdkafka 2.8.2)", "2.8.2")  # fmt: skip
    committed = lockfiles.COMMITTED / "confluent-kafka" / "2.8.2"
    assert driver.lock == lockfiles.digest(committed)
    pip = next(s for s in steps if "pip" in s and "install" in s)
    assert pip[0] == sys.executable
    assert {"--require-hashes", "--no-deps", "--only-binary=:all:"} <= set(pip)
    requirements = Path(pip[pip.index("-r") + 1])
    assert requirements.read_bytes() == (committed / "requirements.txt").read_bytes()
    assert not any(a.startswith("confluent-kafka==") for a in pip)  # only what the lock names
    # the driver runs with the venv's interpreter, not the harness's
    assert Path(driver.executable()[0]).is_relative_to(tmp_path / "cache")
    missing = create_driver(parse_clients("confluent-kafka@2.8.0")[0]).unavailable_reason() or ""
    assert "`kconform clients lock confluent-kafka@2.8.0`" in missing
    assert len([s for s in steps if "pip" in s and "install" in s]) == 1  # no lock, no install
