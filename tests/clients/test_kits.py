"""The driver kits (docs/drivers/) are the shipped drivers' own folders: the module files their
tools open are where the builders start from, and the builders still install only what the
committed locks name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform.fixtures.clients import cargobuild, gobuild, nodejs, npmbuild
from kconform.fixtures.clients.driver import ClientUnavailable

LOCKS = Path(__file__).resolve().parents[2] / "fixtures" / "lockfiles"


def test_the_go_kit_module_is_the_one_locks_start_from() -> None:
    locked = (LOCKS / "franz-go" / "v1.22.3" / "go.mod").read_text()
    assert locked.startswith("module kconform.local/driver\n")
    assert gobuild.go_mod("m", "v1") == "module kconform.local/driver\n\ngo 1.21\n\nrequire m v1\n"


def test_the_node_kit_package_is_the_one_locks_start_from() -> None:
    for lock in sorted(LOCKS.glob("*/*/package-lock.json")):
        if lock.parent.parent.name.startswith("node-"):
            continue  # a Node.js runtime's lock (nodejs.py), not a driver's install
        shipped = (lock.parent / "package.json").read_text()
        manifest = json.loads(shipped)
        ((package, version),) = manifest["dependencies"].items()
        node = manifest.get(nodejs.FIELD, {}).get("node")
        assert npmbuild.package_json(package, version, node) == shipped, lock


def test_the_rust_kit_manifest_is_pinned_to_the_version_built() -> None:
    manifest = (cargobuild.RUST_DIR / "rdkafka" / "Cargo.toml").read_text()
    assert 'rdkafka = { version = "=0.39.0"' in manifest  # cargo opens the kit as it is
    assert (LOCKS / "rdkafka" / "0.39.0" / "Cargo.lock").is_file()
    built = cargobuild.pinned(manifest, "rdkafka", "0.38.1")
    assert 'rdkafka = { version = "=0.38.1"' in built and "0.39.0" not in built
    with pytest.raises(ClientUnavailable, match="0 lines"):
        cargobuild.pinned(manifest, "kafka", "1.0.0")
