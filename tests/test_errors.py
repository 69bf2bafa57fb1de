"""One error hierarchy (kconform.errors): every exception kconform raises on purpose says by its
base whose fault it is, so no raise site may use a builtin exception class.

Read from the source, as tests/test_layers.py reads imports: every `.py` file of every package
named in pyproject's package-dir. Two rules, no whitelist of sites:

- A `raise` of a builtin Exception class (`raise ValueError(...)`, `raise KeyError`) fails,
  whatever its message. A bare `raise`, a raise of a name the module binds (a caught exception,
  a class of the hierarchy, `cls.X`) and another library's protocol exception that its caller
  expects (`argparse.ArgumentTypeError`, `pytest.UsageError`, `re.error`) pass. So do the builtin
  signals that are not Exceptions (KeyboardInterrupt, SystemExit: control flow, not errors) and
  the iteration protocol's StopIteration.
- Every exception class the packages define derives from `KconformError`, or, if it is a signal
  that must pass code treating every Exception as its own, from BaseException and not Exception
  and is one of `SIGNALS`.

Bases are resolved through each module's imports (absolute or relative, aliases included) to the
class they name: in a package module, by its class definitions; elsewhere (builtins, the standard
library, dependencies) by importing the named module.
"""

from __future__ import annotations

import ast
import builtins
import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_layers import modules, package_dirs

ROOT = Path(__file__).resolve().parents[1]
ROOT_ERROR = "kconform.errors.KconformError"

SIGNALS = frozenset(
    {
        "kconform.engine.fuzz.engine.BudgetSpent",
        "kconform.engine.fuzz.engine.DefectEscape",
        "kconform.fixtures.clients.contract.Interrupted",
        "kconform.fixtures.targets.mock_process._Terminate",
    }
)
"""BaseException signals (not Exceptions): each says in its docstring what it must pass through."""

PROTOCOL = frozenset({"StopIteration", "StopAsyncIteration"})
"""Builtin Exceptions that are protocol, not errors: raising them is how iteration ends."""


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module
    bindings: Mapping[str, str]  # local name -> qualified name it denotes
    classes: Mapping[str, ast.ClassDef]  # every class defined in the file, by its name

    def where(self, node: ast.AST, root: Path) -> str:
        return f"{self.path.relative_to(root).as_posix()}:{getattr(node, 'lineno', 0)}"


def _bindings(name: str, tree: ast.Module, is_package: bool) -> dict[str, str]:
    """What each name imported or defined at the top of the module denotes, qualified."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    out[head] = head
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                if not is_package:
                    anchor.pop()
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                out[alias.asname or alias.name] = f"{base}.{alias.name}"
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = f"{name}.{node.name}"
    return out


def load(root: Path, dirs: Mapping[str, str]) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for name, path in modules(root, dirs).items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        bindings = _bindings(name, tree, path.name == "__init__.py")
        found[name] = Module(name, path, tree, bindings, classes)
    return found


def _dotted(expr: ast.expr) -> list[str] | None:
    """`a.b.C` -> ["a", "b", "C"]; None for anything else (a call, a subscript)."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.insert(0, expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return [expr.id, *parts]


class Classes:
    """Resolves class expressions of the packages' source to what they name."""

    def __init__(self, mods: Mapping[str, Module]) -> None:
        self.mods = mods

    def qualify(self, module: Module, expr: ast.expr) -> str | None:
        """The qualified name `expr` denotes in `module` (`builtins.X` for a builtin)."""
        parts = _dotted(expr)
        if parts is None:
            return None
        head, rest = parts[0], parts[1:]
        if head in module.bindings:
            return ".".join([module.bindings[head], *rest])
        if head in module.classes:  # a class defined inside a function or a class
            return ".".join([f"{module.name}.{head}", *rest])
        if hasattr(builtins, head):
            return ".".join(["builtins", head, *rest])
        return None

    def _owned(self, qualified: str) -> tuple[Module, ast.ClassDef] | None:
        """A class the packages define, following re-exports (`from .kind import X`)."""
        for _ in range(10):
            module_name, _, attr = qualified.rpartition(".")
            module = self.mods.get(module_name)
            if module is None:
                return None
            target = module.bindings.get(attr)
            if target is None or target == qualified:
                node = module.classes.get(attr)
                return (module, node) if node is not None else None
            qualified = target
        return None

    def _foreign(self, qualified: str) -> type | None:
        module_name, _, attr = qualified.rpartition(".")
        try:
            value = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError):
            return None
        return value if isinstance(value, type) else None

    def ancestors(self, qualified: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """`qualified` and every class it derives from, qualified (foreign ones by their MRO)."""
        if qualified in seen:
            return set()
        owned = self._owned(qualified)
        if owned is None:
            foreign = self._foreign(qualified)
            if foreign is None:
                return {qualified}
            return {f"{c.__module__}.{c.__qualname__}" for c in foreign.__mro__}
        module, node = owned
        here = f"{module.name}.{node.name}"
        out = {here}
        for base in node.bases:
            name = self.qualify(module, base)
            if name is not None:
                out |= self.ancestors(name, seen | {qualified, here})
        return out


def builtin_raises(mods: Mapping[str, Module], root: Path) -> list[str]:
    """`path:line: raise X` for every raise of a builtin Exception class."""
    out = []
    for module in mods.values():
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if not isinstance(target, ast.Name) or target.id in PROTOCOL:
                continue
            if target.id in module.bindings or target.id in module.classes:
                continue  # the module's own name, not the builtin
            value = getattr(builtins, target.id, None)
            if isinstance(value, type) and issubclass(value, Exception):
                out.append(f"{module.where(node, root)}: raise {target.id}")
    return sorted(out)


def stray_exceptions(mods: Mapping[str, Module], root: Path) -> list[str]:
    """`path:line: class X` for every exception class outside the hierarchy."""
    resolve = Classes(mods)
    out = []
    for module in mods.values():
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.ClassDef):
                continue
            qualified = f"{module.name}.{node.name}"
            bases: set[str] = set()
            for base in node.bases:
                name = resolve.qualify(module, base)
                if name is not None:
                    bases |= resolve.ancestors(name)
            if "builtins.BaseException" not in bases:
                continue  # not an exception class
            if ROOT_ERROR in bases or qualified == ROOT_ERROR:
                continue
            if "builtins.Exception" not in bases and qualified in SIGNALS:
                continue
            why = "a signal not in SIGNALS" if "builtins.Exception" not in bases else "no base"
            out.append(f"{module.where(node, root)}: class {node.name} ({why} in kconform.errors)")
    return sorted(out)


@pytest.fixture(scope="module")
def packages() -> dict[str, Module]:
    return load(ROOT, package_dirs(ROOT))


def test_no_raise_site_uses_a_builtin_exception(packages: dict[str, Module]) -> None:
    found = builtin_raises(packages, ROOT)
    assert not found, "raise a class of kconform.errors instead:\n" + "\n".join(found)


def test_every_exception_class_is_in_the_hierarchy(packages: dict[str, Module]) -> None:
    found = stray_exceptions(packages, ROOT)
    assert not found, "derive from a class of kconform.errors:\n" + "\n".join(found)


def test_the_signals_exist_and_are_not_exceptions(packages: dict[str, Module]) -> None:
    resolve = Classes(packages)
    for signal in SIGNALS:
        assert resolve._owned(signal) is not None, f"{signal} is gone: drop it from SIGNALS"
        ancestors = resolve.ancestors(signal)
        assert "builtins.BaseException" in ancestors and "builtins.Exception" not in ancestors


# --- the checks themselves, on small trees -------------------------------------------------


def _tree(tmp_path: Path, files: Mapping[str, str]) -> dict[str, Module]:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"kconform" = "kconform"\n"kconform.codecs" = "codecs"\n'
    )
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return load(tmp_path, package_dirs(tmp_path))


ERRORS = "class KconformError(Exception): ...\nclass UsageError(KconformError, ValueError): ...\n"


def _lines(found: list[str]) -> Iterator[str]:
    return (line.split(": ", 1)[1] for line in found)


def test_a_builtin_raise_is_found_and_a_hierarchy_raise_is_not(tmp_path: Path) -> None:
    mods = _tree(
        tmp_path,
        {
            "kconform/__init__.py": "",
            "kconform/errors.py": ERRORS,
            "codecs/__init__.py": "",
            "codecs/a.py": (
                "from kconform.errors import UsageError\n"
                "import argparse\n"
                "def f(x):\n"
                "    if x == 1: raise ValueError('bad')\n"
                "    if x == 2: raise KeyError\n"
                "    if x == 3: raise UsageError('bad')\n"
                "    if x == 4: raise argparse.ArgumentTypeError('bad')\n"
                "    if x == 5: raise KeyboardInterrupt\n"
                "    if x == 6: raise StopIteration\n"
                "    try:\n"
                "        pass\n"
                "    except OSError as exc:\n"
                "        raise exc\n"
                "    except Exception:\n"
                "        raise\n"
                "    raise AssertionError('x') from None\n"
            ),
            "codecs/b.py": "class TypeError(Exception): ...\ndef g(): raise TypeError('own')\n",
        },
    )
    assert sorted(_lines(builtin_raises(mods, tmp_path))) == [
        "raise AssertionError",
        "raise KeyError",
        "raise ValueError",
    ]


def test_an_exception_class_outside_the_hierarchy_is_found(tmp_path: Path) -> None:
    mods = _tree(
        tmp_path,
        {
            "kconform/__init__.py": "",
            "kconform/errors.py": ERRORS,
            "codecs/__init__.py": "from .wire import Shown as Shown\n",
            "codecs/wire.py": (
                "from kconform import errors\n"
                "from kconform.errors import UsageError as Usage\n"
                "import enum, json\n"
                "class Shown(errors.KconformError): ...\n"
                "class Bad(Usage): ...\n"
                "class Plain(json.JSONDecodeError): ...\n"
                "class Loose(RuntimeError): ...\n"
                "class Stop(BaseException): ...\n"
                "class Kind(enum.Enum): A = 1\n"
            ),
            "codecs/c.py": (
                "from kconform.codecs import Shown\n"
                "from . import wire\n"
                "class Again(Shown): ...\n"
                "class Twice(wire.Loose): ...\n"
                "def f():\n"
                "    class Local(LookupError): ...\n"
            ),
        },
    )
    assert sorted(_lines(stray_exceptions(mods, tmp_path))) == [
        "class Local (no base in kconform.errors)",
        "class Loose (no base in kconform.errors)",
        "class Plain (no base in kconform.errors)",
        "class Stop (a signal not in SIGNALS in kconform.errors)",
        "class Twice (no base in kconform.errors)",
    ]
