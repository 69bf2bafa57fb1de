"""Locked builds with the real tools and no network: `go` against a module served from a local
folder as a Go module proxy (`GOPROXY=file://...`), `pip` against a wheel in a local folder
(`PIP_NO_INDEX`, `PIP_FIND_LINKS`). Each writes its lock the way `kconform clients lock` does,
builds from it, and then refuses the same lock with one hash changed: the point of a lock is
that code other than what it names is not built. A few seconds each.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.fixtures import lockfiles
from kconform.fixtures.clients import create_driver, gobuild, parse_clients, versions

MODULE, VERSION = "example.com/dep", "v1.0.0"
MAIN_GO = """package main

import (
	"fmt"

	"example.com/dep"
)

func main() {
	fmt.Printf("{\\"implementation\\": \\"tiny\\", \\"version\\": %q, \\"capabilities\\": []}\\n",
		dep.Version)
}
"""


def _serve_module(proxy: Path) -> None:
    """`example.com/dep@v1.0.0` laid out as a module proxy serves it."""
    folder = proxy / MODULE / "@v"
    folder.mkdir(parents=True)
    mod = f"module {MODULE}\n\ngo 1.21\n"
    (folder / "list").write_text(f"{VERSION}\n")
    info = {"Version": VERSION, "Time": "2024-01-01T00:00:00Z"}
    (folder / f"{VERSION}.info").write_text(json.dumps(info))
    (folder / f"{VERSION}.mod").write_text(mod)
    with zipfile.ZipFile(folder / f"{VERSION}.zip", "w") as z:
        z.writestr(f"{MODULE}@{VERSION}/go.mod", mod)
        z.writestr(f"{MODULE}@{VERSION}/dep.go", f'package dep\n\nconst Version = "{VERSION}"\n')


@pytest.fixture
def go_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A real `go` whose only module proxy is a local folder, caches and locks under tmp, and a
    tiny driver (`go-driver/tiny/main.go`) importing the one module it serves."""
    if shutil.which("go") is None:
        pytest.skip("no `go` on PATH")
    _serve_module(tmp_path / "proxy")
    drivers = tmp_path / "go-driver"
    (drivers / "tiny").mkdir(parents=True)
    (drivers / "tiny" / "main.go").write_text(MAIN_GO)
    (drivers / "contract.go").write_text("package main\n")
    monkeypatch.setattr(gobuild, "GO_DIR", drivers)
    monkeypatch.setattr(gobuild, "CONTRACT", drivers / "contract.go")
    monkeypatch.setenv("GOPROXY", (tmp_path / "proxy").as_uri())
    monkeypatch.setenv("GOSUMDB", "off")  # nothing to ask: the lock's go.sum is the authority
    monkeypatch.setenv("GOMODCACHE", str(tmp_path / "gomodcache"))
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(lockfiles.SEARCH_ENV, str(tmp_path / "locks"))
    yield drivers
    subprocess.run(["go", "clean", "-modcache"], env=versions.go_environment(), check=False)


def _tiny() -> gobuild.GoDriver:
    return gobuild.GoDriver("tiny@v1.0.0", "tiny", MODULE, VERSION, "tiny", VERSION)


def test_go_builds_from_its_lock_and_refuses_a_tampered_go_sum(go_offline: Path) -> None:
    lock = gobuild.lock("tiny", MODULE, VERSION, "tiny", VERSION)
    go_sum = (lock / "go.sum").read_text()
    assert f"{MODULE} {VERSION} h1:" in go_sum and f"{MODULE} {VERSION}/go.mod h1:" in go_sum
    built = _tiny()
    assert built.unavailable_reason() is None and built.version == VERSION
    assert built.lock == lockfiles.digest(lock)

    zip_hash = next(line.split()[2] for line in go_sum.splitlines() if "/go.mod" not in line)
    forged = "h1:" + ("A" if zip_hash[3] != "A" else "B") + zip_hash[4:]
    (lock / "go.sum").write_text(go_sum.replace(zip_hash, forged))
    refused = _tiny()
    reason = refused.unavailable_reason() or ""
    assert refused.folder != built.folder and refused.lock != built.lock
    assert "checksum mismatch" in reason and "is not the code go.sum in the lock" in reason


def test_go_says_to_lock_again_when_the_driver_imports_beyond_its_lock(go_offline: Path) -> None:
    gobuild.lock("tiny", MODULE, VERSION, "tiny", VERSION)
    main_go = go_offline / "tiny" / "main.go"
    main_go.write_text(MAIN_GO.replace('"example.com/dep"', '"example.com/dep"\n\t"example.com/x"')
                       .replace("dep.Version)", "dep.Version, x.X)"))  # fmt: skip
    reason = _tiny().unavailable_reason() or ""
    assert "-mod=readonly" in reason and "example.com/x" in reason
    assert "`kconform clients lock tiny@v1.0.0` writes it again" in reason


def _wheel(folder: Path) -> Path:
    """A wheel named confluent-kafka 2.8.2 whose module answers what the driver's
    `--describe` asks of the real one."""
    folder.mkdir()
    path = folder / "confluent_kafka-2.8.2-py3-none-any.whl"
    info = "confluent_kafka-2.8.2.dist-info"
    files = {
        "confluent_kafka/__init__.py": "def version(): return ('2.8.2', 0x2080200)\n"
        "def libversion(): return ('2.8.2', 0x20802ff)\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: confluent-kafka\nVersion: 2.8.2\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: kconform-test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as z:
        for name, text in {**files, f"{info}/RECORD": record}.items():
            z.writestr(name, text)
    return path


def test_pip_installs_from_its_lock_and_refuses_a_hash_the_wheel_does_not_have(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _wheel(tmp_path / "wheels")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "wheels"))
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(lockfiles.SEARCH_ENV, str(tmp_path / "locks"))
    assert main(["clients", "lock", "confluent-kafka@2.8.2"]) == 0, capsys.readouterr().out
    requirements = tmp_path / "locks" / "confluent-kafka" / "2.8.2" / "requirements.txt"
    text = requirements.read_text()
    assert "confluent-kafka==2.8.2 \\\n    --hash=sha256:" in text
    assert "# resolved for CPython 3." in text

    (spec,) = parse_clients("confluent-kafka@2.8.2")
    installed = create_driver(spec)
    assert installed.unavailable_reason() is None and installed.version == "2.8.2"
    assert installed.lock == lockfiles.digest(requirements.parent)

    sha = text.split("--hash=sha256:")[1][:64]
    requirements.write_text(text.replace(sha, "0" * 64))
    refused = create_driver(spec)
    reason = refused.unavailable_reason() or ""
    assert refused.lock != installed.lock and refused.folder != installed.folder
    assert "the lock's hashes do not match the wheels the index serves for" in reason, reason
    assert "(the lock was resolved for CPython 3." in reason and "Expected sha256 000" in reason
    assert "`kconform clients lock confluent-kafka@2.8.2`" in reason
    assert os.path.isdir(installed.folder)  # the good build is kept beside the refused one
