"""The wheel's packages and data files, computed from the tree so that no list can drift.

`pyproject.toml`'s `[tool.setuptools.package-dir]` maps each top-level folder (codecs, rules,
fixtures, ...) into `kconform.*`; this file reads that mapping and ships everything under those
folders: every folder whose path is all identifiers is a package (with or without
`__init__.py`: setuptools warns about, and will stop shipping, importable data folders that are
not named as packages), and every other file (the Java, Go, Node.js and Rust drivers' sources,
the sink plugin, lock files, schemas, baselines, the fuzz corpus) is that package's data, down
through folders that are not identifiers (`node-driver/`, `lockfiles/<kind>/4.4.0/`).
`tests/test_packaging.py` builds the wheel and compares it with `git ls-files`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent

# Never shipped: bytecode, and what builds, runs and tools leave beside the sources (the same
# names .gitignore keeps out of the repository).
SKIP_DIRS = {"__pycache__", "node_modules", "target", "hypothesis-db", ".mypy_cache"}
SKIP_PATHS = {"reports/out"}  # the default report folder of a run from a checkout
SKIP_SUFFIXES = {".pyc", ".pyo"}


def package_dir() -> dict[str, str]:
    """`[tool.setuptools.package-dir]`: import name -> folder."""
    with (HERE / "pyproject.toml").open("rb") as f:
        return dict(tomllib.load(f)["tool"]["setuptools"]["package-dir"])


def _skipped(path: Path) -> bool:
    rel = path.relative_to(HERE).as_posix()
    return (
        path.name in SKIP_DIRS
        or path.suffix in SKIP_SUFFIXES
        or any(rel == p or rel.startswith(p + "/") for p in SKIP_PATHS)
    )


def _data(folder: Path, base: Path) -> list[str]:
    """Every file under `folder` (not a package itself), relative to its package's `base`."""
    found: list[str] = []
    for path in sorted(folder.iterdir()):
        if _skipped(path):
            continue
        if path.is_dir():
            found += _data(path, base)
        else:
            found.append(path.relative_to(base).as_posix())
    return found


def discover() -> tuple[list[str], dict[str, list[str]]]:
    """(packages, package_data) of every mapped folder."""
    packages: list[str] = []
    data: dict[str, list[str]] = {}

    def walk(name: str, folder: Path) -> None:
        packages.append(name)
        files: list[str] = []
        for path in sorted(folder.iterdir()):
            if _skipped(path):
                continue
            if path.is_dir() and path.name.isidentifier():
                if f"{name}.{path.name}" not in mapped:  # mapped elsewhere: walked from there
                    walk(f"{name}.{path.name}", path)
            elif path.is_dir():
                files += _data(path, folder)
            elif path.suffix != ".py":
                files.append(path.name)
        if files:
            data[name] = files

    mapped = package_dir()
    for name, folder in mapped.items():
        walk(name, HERE / folder)
    return packages, data


PACKAGES, PACKAGE_DATA = discover()

if __name__ == "__main__":
    setup(packages=PACKAGES, package_data=PACKAGE_DATA)
