"""The npm kinds (`kafkajs@`, `platformatic-kafka@`, `confluent-kafka-javascript@`): how a
version is locked, installed from its lock and identified, offline (a fake `npm` on PATH, the
real `node` and driver files), and their drivers against the reference broker for real.

The fake `npm` answers `view` with a captured version list, `install --package-lock-only` by
writing a package-lock.json of the exact pins (each with the `engines.node` of
`FAKE_NPM_ENGINES`), and `ci` by writing what the lock names into node_modules (a `node-<os>-
<cpu>` package as the real `node` under its name), so the recipe (`npm ci` of the committed
lock, a changed lock installed again, no lock no install, the Node a lock names first on PATH,
one install per version under the lock, a driver copied again without reinstalling, failures
that name their step, the `--describe` check) runs without a registry. The real tests lock and
install into kconform's own cache (a build of confluent-kafka-javascript takes minutes, once)
and skip, saying why, when node, npm or the registry is missing or an install fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.codecs.framing import decode_request
from kconform.fixtures import lockfiles
from kconform.fixtures.clients import (
    ClientDriver,
    ClientUnavailable,
    Scenario,
    create_driver,
    node_engines,
    nodejs,
    parse_clients,
)
from kconform.fixtures.clients.driver import ClientRun
from kconform.fixtures.clients.npmbuild import (
    CONTRACT,
    NpmDriver,
    node_headers,
    package_json,
    parse_npm_versions,
)
from kconform.fixtures.clients.registry import client_kinds
from kconform.fixtures.targets.base import Capability
from kconform.fixtures.targets.reference import ReferenceTarget

NODE = pytest.mark.skipif(shutil.which("node") is None, reason="no `node` on PATH")
KINDS = ("confluent-kafka-javascript", "kafkajs", "platformatic-kafka")
# `npm view kafkajs versions --json`, shortened (betas and a single-digit major included)
KAFKAJS_VIEW = '[\n  "0.1.0",\n  "1.16.0",\n  "2.0.0-beta.1",\n  "2.2.3",\n  "2.2.4",\n' \
    '  "2.3.0-beta.3"\n]\n'  # fmt: skip

FAKE_NPM = r"""
import json, os, pathlib, shutil, sys, time
args = sys.argv[1:]
env = os.environ
if args[0] == "view":
    sys.stdout.write(env["FAKE_NPM_NODE_VIEW" if args[1].startswith("node-") else "FAKE_NPM_VIEW"])
    sys.exit(0)
node = shutil.which("node") or ""
with open(env["FAKE_NPM_LOG"], "a") as log:
    print(" ".join(args), f"CKJS_LINKING={env.get('CKJS_LINKING', '')}",
          f"nodedir={env.get('npm_config_nodedir', '')}", f"node={node}", file=log)
if env.get("FAKE_NPM_FAIL"):
    sys.exit(f"npm error {env['FAKE_NPM_FAIL']}")
here = pathlib.Path.cwd()
if "--package-lock-only" in args:  # resolve: each dependency at its exact version
    deps = json.loads((here / "package.json").read_text())["dependencies"]
    packages = {"": {"dependencies": deps}}
    for name, version in deps.items():
        entry = {"version": version, "integrity": "sha512-fake"}
        if env.get("FAKE_NPM_ENGINES") and not name.startswith("node-"):
            entry["engines"] = {"node": env["FAKE_NPM_ENGINES"]}
        packages[f"node_modules/{name}"] = entry
    lock = {"lockfileVersion": 3, "requires": True, "packages": packages}
    (here / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    sys.exit(0)
if args[0] != "ci" or not (here / "package-lock.json").is_file():
    sys.exit("npm error the fake npm runs `ci` from a package-lock.json only")
lock = json.loads((here / "package-lock.json").read_text())
for path, entry in lock["packages"].items():
    if not path:
        continue
    folder = here / path
    name = path.removeprefix("node_modules/")
    version = entry["version"] if name.startswith("node-") else \
        env.get("FAKE_NPM_VERSION") or entry["version"]
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": version}))
    (folder / "index.js").write_text(
        "module.exports = {librdkafkaVersion: '9.9.9', Kafka: function () {}}\n")
    if name.startswith("node-"):  # a Node binary: the real one, under the locked version's name
        (folder / "bin").mkdir()
        (folder / "bin" / "node").write_text(f"#!/bin/sh\nexec {env['FAKE_REAL_NODE']} \"$@\"\n")
        (folder / "bin" / "node").chmod(0o755)
        (folder / "include" / "node").mkdir(parents=True)
        (folder / "include" / "node" / "node_api.h").write_text("")
time.sleep(0.2)
"""
FAKE_NODE_VIEW = '["20.20.2", "22.9.0", "22.22.0", "22.23.3", "24.6.0", "24.11.0", "25.0.0"]'
LOCKED = ("kafkajs@2.2.4", "platformatic-kafka@2.12.1", "confluent-kafka-javascript@1.10.1")
PACKAGES = {"kafkajs": "kafkajs", "platformatic-kafka": "@platformatic/kafka",
            "confluent-kafka-javascript": "@confluentinc/kafka-javascript"}  # fmt: skip


def write_lock(locks: Path, label: str, engines: str | None = None, node: str | None = None,
               integrity: str = "sha512-fake") -> Path:  # fmt: skip
    """A lock for `label` as `kconform clients lock` writes one, into the `locks` folder."""
    kind, _, version = label.partition("@")
    package = PACKAGES[kind]
    entry: dict[str, object] = {"version": version, "integrity": integrity}
    if engines is not None:
        entry["engines"] = {"node": engines}
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {package: version}},
                                               f"node_modules/{package}": entry}}  # fmt: skip
    folder = locks / kind / version
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(package_json(package, version, node))
    (folder / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    return folder


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `npm` on PATH, its log, and locks for `LOCKED` in `$KCONFORM_LOCKFILES`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(f"#!{sys.executable}\n{FAKE_NPM}")
    (bin_dir / "npm").chmod(0o755)
    log = tmp_path / "npm.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NPM_LOG", str(log))
    monkeypatch.setenv("FAKE_NPM_VIEW", KAFKAJS_VIEW)
    monkeypatch.setenv("FAKE_NPM_NODE_VIEW", FAKE_NODE_VIEW)
    monkeypatch.setenv("FAKE_REAL_NODE", shutil.which("node") or "node")
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KCONFORM_LOCKFILES", str(tmp_path / "locks"))
    for name in ("FAKE_NPM_FAIL", "FAKE_NPM_VERSION", "FAKE_NPM_ENGINES", "CKJS_LINKING"):
        monkeypatch.delenv(name, raising=False)
    for label in LOCKED:
        write_lock(tmp_path / "locks", label)
    return log


def _installs(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@NODE
def test_a_version_is_installed_once_from_its_lock_and_identified(
    fake_npm: Path, tmp_path: Path
) -> None:
    (spec,) = parse_clients("kafkajs@2.2.4")
    drivers: list[ClientDriver] = []
    threads = [threading.Thread(target=lambda: drivers.append(create_driver(spec)))
               for _ in range(3)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    driver = drivers[0]
    assert isinstance(driver, NpmDriver) and driver.unavailable_reason() is None
    assert (driver.implementation, driver.version, driver.capabilities) == (
        "kafkajs", "2.2.4", frozenset())  # fmt: skip
    (install,) = _installs(fake_npm)  # three drivers, one install
    assert install.split(" CKJS_LINKING=")[0] == (
        "ci --omit=dev --no-audit --no-fund --foreground-scripts --engine-strict"
    )
    headers = node_headers(shutil.which("node") or "node")  # node-gyp builds against these
    assert f" nodedir={headers or ''} " in install
    lock = tmp_path / "locks" / "kafkajs" / "2.2.4"
    for name in ("package.json", "package-lock.json"):  # the committed lock, byte for byte
        assert (driver.packages / name).read_bytes() == (lock / name).read_bytes()
    assert driver.lock == lockfiles.digest(lock) and driver.describe()["lock"] == driver.lock
    assert driver.packages.name == f"2.2.4-{driver.lock.partition(':')[2]}"
    assert (driver.folder / "node_modules").resolve() == driver.packages / "node_modules"
    assert (driver.folder / "contract.js").read_text() == CONTRACT.read_text()
    assert driver.executable() == [shutil.which("node"), str(driver.folder / "driver.js")]


@NODE
def test_a_changed_lock_is_installed_again(fake_npm: Path, tmp_path: Path) -> None:
    (spec,) = parse_clients("kafkajs@2.2.4")
    before = create_driver(spec)
    lock = tmp_path / "locks" / "kafkajs" / "2.2.4"
    digest = lockfiles.digest(lock)
    write_lock(tmp_path / "locks", "kafkajs@2.2.4", integrity="sha512-another")
    assert lockfiles.digest(lock) != digest
    after = create_driver(spec)
    assert isinstance(before, NpmDriver) and isinstance(after, NpmDriver)
    assert after.unavailable_reason() is None and after.lock == lockfiles.digest(lock)
    assert after.packages != before.packages and after.folder != before.folder
    assert "sha512-another" in (after.packages / "package-lock.json").read_text()
    assert (after.folder / "node_modules").resolve() == after.packages / "node_modules"
    assert len(_installs(fake_npm)) == 2


def test_a_version_without_a_lock_is_unavailable_and_never_resolved(fake_npm: Path) -> None:
    driver = create_driver(parse_clients("kafkajs@2.2.3")[0])  # no lock, here or committed
    reason = driver.unavailable_reason() or ""
    assert "kafkajs@2.2.3 has no committed dependency lock" in reason
    assert "`kconform clients lock kafkajs@2.2.3`" in reason
    assert _installs(fake_npm) == [] and driver.lock == ""


@NODE
def test_clients_lock_writes_the_lock_a_build_then_installs(
    fake_npm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["clients", "lock", "kafkajs@2.2.4"]) == 0
    folder = tmp_path / "locks" / "kafkajs" / "2.2.4"
    assert (
        f"kafkajs@2.2.4: {lockfiles.digest(folder)} written to {folder}" in capsys.readouterr().out
    )
    (resolve,) = _installs(fake_npm)
    assert resolve.startswith("install --package-lock-only --ignore-scripts --omit=dev "
                              "--save-exact ")  # fmt: skip
    assert (folder / "package.json").read_text() == package_json("kafkajs", "2.2.4")
    assert not (tmp_path / "locks" / nodejs.package_name()).exists()  # this Node will do
    driver = create_driver(parse_clients("kafkajs@2.2.4")[0])
    assert driver.unavailable_reason() is None and driver.lock == lockfiles.digest(folder)
    assert _installs(fake_npm)[1].startswith("ci ")


@NODE
def test_a_lock_whose_engines_this_node_fails_runs_on_the_node_it_names(
    fake_npm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_ENGINES", ">= 22.22.0 || >= 24.6.0")  # @platformatic/kafka 2.x
    here = nodejs.machine_node()
    if here is None or node_engines.satisfies(here, ">= 22.22.0 || >= 24.6.0"):
        pytest.skip(f"this machine's Node ({here}) already satisfies the range")
    assert main(["clients", "lock", "platformatic-kafka@2.12.1"]) == 0
    folder = tmp_path / "locks" / "platformatic-kafka" / "2.12.1"
    manifest = json.loads((folder / "package.json").read_text())
    assert manifest["kconform"] == {"node": "22.23.3"}  # newest of the oldest fitting major
    node_lock = tmp_path / "locks" / nodejs.package_name() / "22.23.3"
    node_manifest = json.loads((node_lock / "package.json").read_text())
    assert node_manifest["dependencies"] == {nodejs.package_name(): "22.23.3"}
    driver = create_driver(parse_clients("platformatic-kafka@2.12.1")[0])
    assert driver.unavailable_reason() is None
    assert isinstance(driver, NpmDriver) and driver.node_bin is not None
    node = str(driver.node_bin / "node")
    assert driver.executable()[0] == node
    assert driver.environment()["PATH"].split(os.pathsep)[0] == str(driver.node_bin)
    node_ci, client_ci = _installs(fake_npm)[-2:]  # that Node first, then the client on it
    assert node_ci.startswith("ci ") and "--ignore-scripts" in node_ci
    assert client_ci.startswith("ci ") and client_ci.endswith(f" node={node}")
    assert f" nodedir={driver.node_bin.parent.resolve()} " in client_ci  # its own headers


@NODE
def test_engines_no_node_on_npm_satisfies_leave_the_release_unlocked(
    fake_npm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("FAKE_NPM_ENGINES", ">=26")
    assert main(["clients", "lock", "platformatic-kafka@2.12.0"]) == 2
    out = capsys.readouterr().out
    assert "platformatic-kafka@2.12.0: not locked" in out and "no Node on npm satisfies" in out
    assert "@platformatic/kafka@2.12.0 needs Node >=26" in out
    assert not (tmp_path / "locks" / "platformatic-kafka" / "2.12.0").exists()


@NODE
def test_a_node_listing_that_is_not_json_leaves_the_release_unlocked(
    fake_npm: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_ENGINES", ">=26")
    monkeypatch.setenv("FAKE_NPM_NODE_VIEW", "npm error code E404")
    assert main(["clients", "lock", "platformatic-kafka@2.12.0"]) == 2
    out = capsys.readouterr().out
    assert f"npm printed no JSON list of {nodejs.package_name()}'s versions" in out


@NODE
def test_a_lock_whose_engines_the_machines_node_fails_is_refused_before_npm(
    fake_npm: Path, tmp_path: Path
) -> None:
    write_lock(tmp_path / "locks", "platformatic-kafka@2.12.1", engines=">=99.0.0")
    reason = create_driver(parse_clients("platformatic-kafka@2.12.1")[0]).unavailable_reason()
    assert reason is not None and "cannot run on Node" in reason
    assert "leaves to this machine" in reason
    assert "@platformatic/kafka@2.12.1 needs Node >=99.0.0" in reason
    assert "`kconform clients lock platformatic-kafka@2.12.1`" in reason
    write_lock(tmp_path / "locks", "platformatic-kafka@2.12.1", engines=">=99.0.0", node="22.23.3")
    reason = create_driver(parse_clients("platformatic-kafka@2.12.1")[0]).unavailable_reason()
    assert reason is not None and "cannot run on Node 22.23.3, the Node its lock names" in reason
    assert _installs(fake_npm) == []  # neither that Node nor the client is installed


@NODE
def test_a_changed_driver_is_copied_again_without_reinstalling(
    fake_npm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (spec,) = parse_clients("kafkajs@2.2.4")
    before = create_driver(spec)
    edited = tmp_path / "contract.js"
    edited.write_text(CONTRACT.read_text() + "// edited\n")
    monkeypatch.setattr("kconform.fixtures.clients.npmbuild.CONTRACT", edited)
    after = create_driver(spec)
    assert isinstance(before, NpmDriver) and isinstance(after, NpmDriver)
    assert after.unavailable_reason() is None and after.folder != before.folder
    assert (after.folder / "contract.js").read_text().endswith("// edited\n")
    assert len(_installs(fake_npm)) == 1


@NODE
def test_a_kinds_install_environment_reaches_npm(fake_npm: Path) -> None:
    driver = create_driver(parse_clients("confluent-kafka-javascript@1.10.1")[0])
    assert driver.unavailable_reason() is None
    assert " CKJS_LINKING=dynamic " in _installs(fake_npm)[0]
    assert driver.implementation == "confluent-kafka-javascript (librdkafka 9.9.9)"
    assert driver.capabilities == frozenset({Capability.TELEMETRY})
    assert driver.describe()["bundles"] == {"librdkafka": "9.9.9"}  # as the binding reports it


@NODE
def test_a_failed_install_names_npm_and_is_tried_again(
    fake_npm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_FAIL", "code EBADENGINE")
    reason = create_driver(parse_clients("platformatic-kafka@2.12.1")[0]).unavailable_reason()
    assert reason is not None and "installing @platformatic/kafka@2.12.1 from its lock" in reason
    assert "npm error code EBADENGINE" in reason and "exited 1" in reason
    monkeypatch.delenv("FAKE_NPM_FAIL")
    assert create_driver(parse_clients("platformatic-kafka@2.12.1")[0]).unavailable_reason() is None
    assert len(_installs(fake_npm)) == 2  # a failed install is not kept


@NODE
def test_an_install_that_reports_another_version_is_refused(
    fake_npm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_VERSION", "2.2.3")
    reason = create_driver(parse_clients("kafkajs@2.2.4")[0]).unavailable_reason() or ""
    assert "asked for 2.2.4" in reason and "2.2.3" in reason


def test_versions_before_the_drivers_floor_are_unavailable_without_npm(fake_npm: Path) -> None:
    reason = create_driver(parse_clients("kafkajs@1.15.0")[0]).unavailable_reason() or ""
    assert "needs kafkajs 1.16.0 or newer" in reason
    assert _installs(fake_npm) == []


def test_without_node_the_reason_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    reason = create_driver(parse_clients("kafkajs@2.2.4")[0]).unavailable_reason() or ""
    assert "no `node` and `npm` on PATH" in reason


def test_npm_version_listings_parse_to_releases_oldest_first() -> None:
    assert parse_npm_versions(KAFKAJS_VIEW) == ["0.1.0", "1.16.0", "2.2.3", "2.2.4"]
    assert parse_npm_versions('"1.0.0"') == ["1.0.0"]  # npm prints one version as a string
    for junk in ("npm error 404", '{"error": {}}'):
        with pytest.raises(ClientUnavailable, match="npm printed"):
            parse_npm_versions(junk)


def test_the_kinds_list_their_registrys_versions_from_their_floor(fake_npm: Path) -> None:
    (kind,) = [k for k in client_kinds() if k.name == "kafkajs"]
    assert kind.versions is not None and kind.versions() == ["1.16.0", "2.2.3", "2.2.4"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_kinds_need_a_release_and_label_it(kind: str) -> None:
    for text in (kind, f"{kind}@latest", f"{kind}@2.2"):
        with pytest.raises(ValueError, match="version"):
            parse_clients(text)
    assert [s.label for s in parse_clients(f"{kind}@v1.2.3")] == [f"{kind}@1.2.3"]


def test_clients_rows_list_what_npm_serves_and_what_is_installed(
    fake_npm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    listings = tmp_path / "cache" / "clients" / "listings"
    listings.mkdir(parents=True)
    versions = {"kafkajs": ["1.15.0", "2.2.4"], "platformatic-kafka": ["1.35.0", "2.12.1"]}
    for name, listed in versions.items():
        (listings / f"{name}.json").write_text(json.dumps({"t": time.time(), "versions": listed}))
    built = tmp_path / "cache" / "clients" / "kafkajs" / "2.2.4-abc"
    built.mkdir(parents=True)
    (built / ".kconform-complete").write_text("")
    monkeypatch.setenv("FAKE_NPM_VIEW", '["1.0.0", "1.10.1"]')  # not cached: npm is asked
    assert main(["clients"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    assert "the registry lists: 2.2.4;" in rows["kafkajs@<version>"]  # 1.15.0: before `since`
    assert "locked, so built on first use: 1.16.0 2.2.4 (" in rows["kafkajs@<version>"]
    assert rows["kafkajs@<version>"].endswith("; built here: 2.2.4")
    assert "1.35.0 2.12.1" in rows["platformatic-kafka@<version>"]
    assert "1.0.0 1.10.1" in rows["confluent-kafka-javascript@<version>"]
    assert _installs(fake_npm) == []  # listing never installs


# --- for real, with npm and its registry ----------------------------------------------------


def test_a_real_lock_is_written_and_installed_with_npm_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("no `node` and `npm` on PATH")
    try:
        probe = subprocess.run([npm, "view", "kafkajs@2.2.4", "version"], capture_output=True,
                               text=True, timeout=60, cwd=tmp_path)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.skip("the npm registry did not answer `npm view kafkajs@2.2.4` within 60 s")
    if probe.returncode != 0 or "2.2.4" not in probe.stdout:
        pytest.skip(f"the npm registry does not serve kafkajs@2.2.4 here: {probe.stderr[-300:]}")
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KCONFORM_LOCKFILES", str(tmp_path / "locks"))
    assert main(["clients", "lock", "kafkajs@2.2.4"]) == 0
    folder = tmp_path / "locks" / "kafkajs" / "2.2.4"
    entry = json.loads((folder / "package-lock.json").read_text())["packages"]
    committed = lockfiles.COMMITTED / "kafkajs" / "2.2.4" / "package-lock.json"
    assert entry["node_modules/kafkajs"]["version"] == "2.2.4"
    assert entry == json.loads(committed.read_text())["packages"]  # same tarball, same integrity
    driver = create_driver(parse_clients("kafkajs@2.2.4")[0])
    assert isinstance(driver, NpmDriver) and driver.unavailable_reason() is None
    assert driver.lock == lockfiles.digest(folder) and driver.version == "2.2.4"
    assert driver.packages.is_relative_to(tmp_path / "cache")
    installed = driver.packages / "node_modules" / "kafkajs" / "package.json"
    assert json.loads(installed.read_text())["version"] == "2.2.4"
    lock = json.loads((folder / "package-lock.json").read_text())  # another tarball's integrity
    lock["packages"]["node_modules/kafkajs"]["integrity"] = "sha512-" + "A" * 86 + "=="
    (folder / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    reason = create_driver(parse_clients("kafkajs@2.2.4")[0]).unavailable_reason() or ""
    assert " ci --omit=dev " in reason and "EINTEGRITY" in reason, reason


# --- for real, against the reference broker ------------------------------------------------

REAL = {  # one release of each, from its committed lock, and what its ApiVersions carries
    "kafkajs@2.2.4": (2, None),
    "platformatic-kafka@1.35.0": (3, "platformatic-kafka"),
    "confluent-kafka-javascript@1.10.1": (3, "confluent-kafka-javascript"),
}
# @platformatic/kafka implements FindCoordinator v4-v6 only (dist/apis/metadata) and the
# reference advertises v0-v3 (librdkafka's mock): its consumer cannot find a group coordinator
CANNOT_CONSUME = {"platformatic-kafka@1.35.0": "PLT_KFK_UNSUPPORTED_API"}


@pytest.fixture(scope="module")
def reference() -> Iterator[ReferenceTarget]:
    with ReferenceTarget(brokers=1) as target:
        yield target


def _real(name: str) -> ClientDriver:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("no `node` and `npm` on PATH")
    driver = create_driver(parse_clients(name)[0])
    reason = driver.unavailable_reason()
    if reason is not None:
        pytest.skip(f"{name} unavailable here: {reason}")
    return driver


async def _run(driver: ClientDriver, bootstrap: str, config: dict[str, str],
               scenario: Scenario, stop_after: float | None = None) -> ClientRun:  # fmt: skip
    run = await driver.start(bootstrap, config, scenario)
    if stop_after is not None:
        await asyncio.sleep(stop_after)
        await run.close_window()
    await run.wait(scenario.seconds + 30)
    return run


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_real_driver_produces_and_consumes_through_the_reference(
    name: str, reference: ReferenceTarget
) -> None:
    driver = _real(name)
    topic = f"t-{name.split('@')[0]}-{time.monotonic_ns()}"
    reference.create_topic(topic, 1)
    config = {"client.id": "kc-node", "kconform.no.such.key": "1"}
    produced = asyncio.run(
        _run(driver, reference.bootstrap, config, Scenario.produce(topic, rate=5, seconds=3))
    )
    names = [e.event for e in produced.events]
    assert produced.returncode == 0 and produced.fault() is None, produced.stderr_tail()
    assert names[0] == "config_ignored" and names[-2:] == ["closing", "closed"], names
    assert produced.events[0].data["key"] == "kconform.no.such.key"
    started = produced.named("started")[0].data
    assert (started["version"], started["scenario"]) == (driver.version, "produce")
    offsets = sorted(e.data["offset"] for e in produced.named("delivered"))
    assert len(offsets) >= 5 and produced.named("error") == [], produced.events
    assert all(e.data["topic"] == topic for e in produced.named("delivered"))
    assert produced.other_output == []  # stdout holds the contract's events only
    consumed = asyncio.run(_run(driver, reference.bootstrap, {"client.id": "kc-node"},
                                Scenario.consume(topic, group=topic, seconds=12)))  # fmt: skip
    assert consumed.returncode == 0 and consumed.fault() is None, consumed.stderr_tail()
    seen = {e.data["offset"] for e in consumed.named("consumed") if e.data["topic"] == topic}
    if name in CANNOT_CONSUME:  # the library's own error, reported, and still a clean close
        assert [e.data["code"] for e in consumed.named("error")] == [CANNOT_CONSUME[name]]
        assert not seen and consumed.named("closed")
        return
    assert seen >= set(offsets), (seen, offsets, consumed.stderr_tail())


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_real_driver_connects_as_its_client_id_and_closes_on_sigterm(
    name: str, reference: ReferenceTarget
) -> None:
    driver = _real(name)
    client_id = f"kc-sigterm-{time.monotonic_ns()}"
    mark = reference.wire_log.mark()
    run = asyncio.run(_run(driver, reference.bootstrap, {"client.id": client_id},
                           Scenario.idle(seconds=120), stop_after=6.0))  # fmt: skip
    names = [e.event for e in run.events]
    assert names[0] == "started" and names[-2:] == ["closing", "closed"], names
    assert run.returncode == 0 and not run.timed_out and run.fault() is None
    assert run.named("closed")[0].data["seconds"] < 60  # ended by SIGTERM, not the window
    requests = [decode_request(e.raw) for e in reference.wire_log.since(mark)
                if e.direction == "client->broker" and e.raw]  # fmt: skip
    own = [r for r in requests if r.header.client_id == client_id]
    assert own, "no request carried the client.id given with --config"
    version, software = REAL[name]
    api_versions = [r for r in own if int(r.header.request_api_key) == 18]
    assert api_versions and int(api_versions[0].header.request_api_version) == version
    if software is not None:
        assert api_versions[0].body is not None
        assert api_versions[0].body.client_software_name == software
        assert str(api_versions[0].body.client_software_version).startswith(driver.version)
