"""Target kind names are spelled in their kind files only (issue 42): everywhere else the code asks
the declarations (`fixtures/targets/kind.py`: `default`, `variant_is_mutants`, `jvm_agent`, ...),
so a new kind is one file, not a hunt through the harness for `== "reference"`.

The scan reads the source, not what is loaded: every `.py` of every package pyproject's
package-dir names (as tests/test_layers.py does), but the kind files themselves
(`fixtures/targets/kinds/`, `fixtures/clients/kinds/`). It looks at string constants (f-string
pieces included) that are a target entry: a kind's name, `<kind>:` or `<kind>:<variant>`, or a
comma list of those. Docstrings and prose (`"kraft: docker not found"`, `"the reference
broker"`) are not target entries, so they pass; the kind names come from the declarations, so a
kind added later is covered the day it is declared.

A kind's implementation names its own kind (the target's `name`, a container label): the
modules one kind file alone imports (`kinds/apache.py` -> `targets/apache.py`, `kafka_dist.py`)
may spell that kind, and only it. A module two kind files import is shared and spells none.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from kconform.fixtures.targets.registry import target_kinds

ROOT = Path(__file__).resolve().parents[1]
KIND_FILES = ("fixtures/targets/kinds/", "fixtures/clients/kinds/")


def source_files() -> list[Path]:
    """Every `.py` of the installed packages (pyproject's package-dir), kind files left out."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    folders = sorted(set(config["tool"]["setuptools"]["package-dir"].values()))
    found = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith(KIND_FILES):
                found.append(path)
    return found


def implementations() -> dict[Path, str]:
    """Module file -> the one target kind whose kind file imports it (its implementation)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dirs: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    owners: dict[Path, set[str]] = {}
    for kind_file in sorted((ROOT / KIND_FILES[0]).glob("*.py")):
        tree = ast.parse(kind_file.read_text(encoding="utf-8"))
        declared = _declared_name(tree)
        if declared is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                for path in filter(None, (_module_file(m, package_dirs) for m in modules)):
                    owners.setdefault(path, set()).add(declared)
    return {path: kinds.pop() for path, kinds in owners.items() if len(kinds) == 1}


def _declared_name(tree: ast.Module) -> str | None:
    """The `name=` of a kind file's `KIND = TargetKind(...)`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "TargetKind":
            for keyword in node.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return None


def _module_file(module: str, package_dirs: dict[str, str]) -> Path | None:
    """`kconform.fixtures.targets.apache` -> fixtures/targets/apache.py (None: not ours)."""
    package = max((p for p in package_dirs if module == p or module.startswith(p + ".")),
                  key=len, default=None)  # fmt: skip
    if package is None:
        return None
    rest = module[len(package) :].lstrip(".").replace(".", "/")
    base = ROOT / package_dirs[package] / rest if rest else ROOT / package_dirs[package]
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def is_target_entry(text: str, kinds: frozenset[str]) -> bool:
    """`reference`, `apache:`, `apache:4.1.0`, `reference,librdkafka_mock`: yes. `kraft: no
    docker`, `the reference broker`, `reference-3brokers`: no (prose, or not an entry)."""
    entries = [e.lstrip() for e in text.split(",")]
    return bool(entries) and all(_entry(e, kinds) for e in entries)


def _entry(text: str, kinds: frozenset[str]) -> bool:
    """`<kind>`, `<kind>:<variant>` or `<kind>@<version>` (as client names are spelled)."""
    name, sep, variant = _split(text)
    return name in kinds and not (sep and variant[:1].isspace())


def _split(text: str) -> tuple[str, str, str]:
    parts = re.split(r"([:@])", text, maxsplit=1)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else (text, "", "")


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring constants (module, class, function): prose, allowed."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def violations(source: str, kinds: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(line, text) of each string constant of `source` that is a target entry."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and is_target_entry(node.value, kinds)
        ):
            yield node.lineno, node.value


def kind_names() -> frozenset[str]:
    return frozenset(k.name for k in target_kinds())


def test_the_scan_finds_what_it_must_and_only_that() -> None:
    """The checker itself: entries in code found, prose and docstrings left alone."""
    kinds = frozenset({"reference", "apache"})
    planted = (
        '"""The reference broker."""\n'
        'def f(x):\n    """reference"""\n    return x == "reference"\n'
        'a = x.startswith("apache:")\n'
        'b = f"apache:{x}"\n'
        'c = "reference,apache:4.1.0"\n'
        'd = "apache: no JDK"\n'
        'e = "the reference broker"\n'
        'g = f"reference-{x}"\n'
        'h = "reference@1.2.3"\n'
    )
    assert sorted(line for line, _ in violations(planted, kinds)) == [4, 5, 6, 7, 11]


def test_an_implementation_is_its_kind_s_alone() -> None:
    """The exemption is narrow: a kind's own target module, never a module kinds share."""
    owned = {p.relative_to(ROOT).as_posix(): k for p, k in implementations().items()}
    assert owned.get("fixtures/targets/apache.py") == "apache"
    assert "fixtures/targets/kind.py" not in owned and "fixtures/targets/base.py" not in owned


def test_no_target_kind_name_outside_the_kind_files() -> None:
    kinds = kind_names()
    assert kinds, "no target kind declared"
    owned = implementations()
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in source_files()
        for line, text in sorted(
            violations(path.read_text(encoding="utf-8"), kinds - {owned.get(path, "")})
        )
    ]
    assert not found, (
        "target kind names outside fixtures/targets/kinds/ (ask the declaration instead: "
        "fixtures/targets/kind.py):\n" + "\n".join(found)
    )
