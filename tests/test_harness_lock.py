"""requirements.txt is the harness's whole dependency set: `make setup` installs it with
`--require-hashes` and resolves nothing. These tests keep it in step with pyproject.toml, so a
dependency added there cannot silently go unlocked (the install would then fail on a fresh
machine, or worse, pass on one whose cache happened to hold it)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s\\;]+)")


def _pins() -> dict[str, str]:
    return {
        canonicalize_name(m["name"]): m["version"]
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if (m := _PIN.match(line))
    }


def _entries() -> list[str]:
    """Each requirement with its continuation lines joined (`name==v \\ --hash=... \\ ...`)."""
    text = (ROOT / "requirements.txt").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    return [e.strip() for e in "\n".join(lines).replace("\\\n", " ").splitlines() if e.strip()]


def test_every_entry_is_pinned_with_hashes() -> None:
    entries = _entries()
    assert len(entries) > 40
    for entry in entries:
        assert _PIN.match(entry), f"not pinned with ==: {entry[:80]}"
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", entry), f"no sha256: {entry[:80]}"


def test_every_declared_dependency_is_locked_in_its_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    backend = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    pins = _pins()
    for text in [*declared, *backend]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is declared but not in requirements.txt"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"requirements.txt pins {name}=={pins[name]}, outside pyproject's {requirement}"
        )


def test_setup_installs_only_the_lock() -> None:
    """The Makefile's set-up installs with --require-hashes and kconform itself with no deps: a
    plain `pip install -e .[dev]` would resolve pyproject's ranges on the day."""
    makefile = (ROOT / "Makefile").read_text()
    rule = "$(STAMP): pyproject.toml setup.py requirements.txt"
    recipe = makefile.split(rule, 1)[1].split("\n\n")[0]
    assert "--require-hashes" in recipe and "-r requirements.txt" in recipe
    installs = [ln for ln in recipe.splitlines() if "pip install" in ln]
    assert installs and all("--require-hashes" in ln or "--no-deps" in ln for ln in installs)
    assert "--upgrade" not in recipe
