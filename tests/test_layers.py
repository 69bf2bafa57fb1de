"""Layers that import one way: codec -> rules and reference semantics -> I/O fixtures ->
engine -> suites -> reports -> pipelines and the CLI (docs/STYLE.md, "Layers that read one
way").

The graph is built from the source, not from what Python happens to have loaded: every `.py`
file of every package named in pyproject's package-dir, every `import` and `from ... import`
(absolute or relative, at the top, inside a function or under `TYPE_CHECKING`). It fails on an
import from a lower layer to a higher one, on any cycle between modules and on any cycle between
packages (folders). There is no whitelist: `LAYERS` is the only place that says where a module
sits, and a module it does not place is itself an error.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first. A module belongs to the layer of its longest matching prefix; it may import its
# own layer and those below, never one above.
# `P.__init__` names package P's own file and nothing under it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # `kconform/__init__.py` holds only the docstring and `__version__`; errors.py the one error
    # hierarchy every layer raises from, exit_codes.py the command's exit codes,
    # outputs.py the checks and mode of every file a command writes, locations.py where
    # kconform's data and caches are (found with find_spec, which runs no package). They import
    # nothing of the harness above this layer; every layer may read them.
    (
        "package metadata and errors",
        (
            "kconform.__init__",
            "kconform.errors",
            "kconform.exit_codes",
            "kconform.outputs",
            "kconform.locations",
        ),
    ),
    ("codec", ("kconform.codecs",)),
    # fixtures/types.py: the plain data (capabilities, addresses, subscriptions, sink records)
    # that the reference broker and the targets both speak; it imports nothing of the harness.
    (
        "rules and reference semantics",
        ("kconform.rules", "kconform.fixtures.reference", "kconform.fixtures.types"),
    ),
    ("I/O fixtures", ("kconform.fixtures",)),
    ("engine", ("kconform.engine", "kconform.soak")),
    ("suites", ("kconform.suites",)),
    ("reports", ("kconform.reports", "kconform.baselines")),
    (
        "pipelines and CLI",
        (
            "kconform.pipelines",
            "kconform.plugin",
            "kconform.cli",
            "kconform.matrix",
            "kconform.runner",
        ),
    ),
)


@dataclass(frozen=True)
class Edge:
    """One import statement: `source` (a module) imports `target` at `path:line`."""

    source: str
    target: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}  ({self.path}:{self.line})"


def package_dirs(root: Path) -> dict[str, str]:
    """{package name: folder relative to `root`}, as pyproject's setuptools package-dir says."""
    with (root / "pyproject.toml").open("rb") as f:
        mapping: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    return mapping


def modules(root: Path, dirs: Mapping[str, str]) -> dict[str, Path]:
    """{dotted module name: file} for every `.py` file under the mapped folders.

    A folder maps to the most specific package that claims it (`codecs/` is `kconform.codecs`
    even though `kconform/` is mapped too); a package's `__init__.py` is the package itself.
    """
    folders = {(root / folder).resolve(): name for name, folder in dirs.items()}
    found: dict[str, Path] = {}
    for folder, package in folders.items():
        for path in sorted(folder.rglob("*.py")):
            if any(part.startswith(".") for part in path.relative_to(root).parts):
                continue
            owner = max((f for f in folders if path.is_relative_to(f)), key=lambda f: len(f.parts))
            if owner != folder:
                continue  # another mapped folder (nested) claims it
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _known(name: str, known: Mapping[str, Path]) -> str | None:
    """The module `name` denotes: itself, else its longest prefix that is a module we own."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _dynamic(call: ast.Call) -> str | None:
    """The module `importlib.import_module("a.b")` or `__import__("a.b")` names, if written out."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in ("import_module", "__import__") or not call.args:
        return None
    arg = call.args[0]
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def imports(root: Path, dirs: Mapping[str, str]) -> list[Edge]:
    """Every import between owned modules, wherever in the file it is written."""
    known = modules(root, dirs)
    edges: set[Edge] = set()
    for module, path in known.items():
        is_package = path.name == "__init__.py"
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=rel)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = module.split(".")
                    if not is_package:
                        anchor.pop()
                    drop = node.level - 1
                    anchor = anchor[: len(anchor) - drop] if drop else anchor
                    base = ".".join([*anchor, base] if base else anchor)
                # `from pkg import name` imports the submodule pkg.name when there is one.
                names = [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
                names = [n if n in known else base for n in names] or [base]
            elif isinstance(node, ast.Call) and (named := _dynamic(node)):
                names = [named]  # importlib.import_module("kconform.x")
            for name in names:
                target = _known(name, known)
                if target is not None and target != module:
                    edges.add(Edge(module, target, rel, getattr(node, "lineno", 0)))
    return sorted(edges, key=lambda e: (e.source, e.target, e.line))


def layer_of(module: str, layers: Sequence[tuple[str, Sequence[str]]]) -> int | None:
    """The index of the layer whose longest prefix matches `module`, or None."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, (_, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if prefix.endswith(".__init__"):
                hit = module == prefix.removesuffix(".__init__")
            else:
                hit = module == prefix or module.startswith(f"{prefix}.")
            if hit and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def _path(module: str, known: Mapping[str, Path]) -> tuple[str, ...]:
    """A module's place in the folder tree: a package's own file is `<package>.__init__`."""
    parts = tuple(module.split("."))
    return (*parts, "__init__") if known[module].name == "__init__.py" else parts


def folder_edge(source: str, target: str, known: Mapping[str, Path]) -> tuple[str, str]:
    """The edge an import makes inside the innermost package holding both ends: between that
    package's children, each a file (`P.__init__` for the package's own) or a whole sub-folder."""
    a, b = _path(source, known), _path(target, known)
    k = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    return ".".join(a[: k + 1]), ".".join(b[: k + 1])


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Each strongly connected component of more than one node, sorted (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        if a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a long import chain cannot exceed the recursion limit.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def violations(
    root: Path,
    dirs: Mapping[str, str],
    layers: Sequence[tuple[str, Sequence[str]]],
) -> list[str]:
    """Every breach of the layering, one readable line each (empty when the tree is clean)."""
    known = modules(root, dirs)
    edges = imports(root, dirs)
    out = [f"not in any layer: {m} ({known[m].relative_to(root)})" for m in known
           if layer_of(m, layers) is None]  # fmt: skip
    for edge in edges:
        low, high = layer_of(edge.source, layers), layer_of(edge.target, layers)
        if low is not None and high is not None and high > low:
            out.append(f"back-up import, {layers[low][0]} -> {layers[high][0]}: {edge}")
    where = {(e.source, e.target): e for e in edges}
    for component in cycles((e.source, e.target) for e in edges):
        inside = sorted(str(where[s, t]) for s, t in where if s in component and t in component)
        out.append("module cycle " + " <-> ".join(component) + ":\n    " + "\n    ".join(inside))
    # Folders: inside every package, its files and sub-folders (each taken whole) import one
    # way. A cycle of files only is the module cycle above; one through a sub-folder is new.
    by_folder: dict[tuple[str, str], list[Edge]] = {}
    for e in edges:
        by_folder.setdefault(folder_edge(e.source, e.target, known), []).append(e)

    def is_folder(node: str) -> bool:
        if node in known:
            return known[node].name == "__init__.py"
        return not node.endswith(".__init__")  # a folder without an __init__.py

    for component in cycles(by_folder):
        if not any(is_folder(node) for node in component):
            continue
        inside = sorted(
            f"{a} -> {b}: {len(es)} import(s), first {min(es, key=str)}"
            for (a, b), es in by_folder.items()
            if a in component and b in component
        )
        out.append("package cycle " + " <-> ".join(component) + ":\n    " + "\n    ".join(inside))
    return out


def test_layers_import_one_way() -> None:
    found = violations(ROOT, package_dirs(ROOT), LAYERS)
    assert not found, "the layers do not import one way:\n" + "\n".join(found)


def test_every_package_folder_is_read() -> None:
    known = modules(ROOT, package_dirs(ROOT))
    for module in ("kconform.pipelines.soak", "kconform.soak.judge", "kconform.engine.check",
                   "kconform.fixtures.targets.kraft_container", "kconform.plugin",
                   "kconform.suites", "kconform.codecs.schema"):  # fmt: skip
        assert module in known, module
    sources = {e.source for e in imports(ROOT, package_dirs(ROOT))}
    assert {"kconform.pipelines.soak", "kconform.soak.run", "kconform.cli"} <= sources


IO = ("asyncio", "socket", "threading", "subprocess", "pytest")
PURE = ("codec", "rules and reference semantics")


def test_pure_layers_do_no_io() -> None:
    """Sans-IO (docs/STYLE.md): the codec and the reference semantics never import I/O."""
    pure = {i for i, (name, _) in enumerate(LAYERS) if name in PURE}
    wrong = []
    for module, path in modules(ROOT, package_dirs(ROOT)).items():
        if layer_of(module, LAYERS) not in pure:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            wrong += [f"{module}: {n}" for n in names if n.split(".")[0] in IO]
    assert wrong == []


# The checker itself, on synthetic trees: each kind of breach is reported.

TOY_DIRS = {"toy": "toy", "toy.low": "low", "toy.high": "high"}
TOY_LAYERS = (("low", ("toy.low",)), ("high", ("toy.high",)), ("root", ("toy",)))


def _tree(tmp_path: Path, files: Mapping[str, str]) -> Path:
    for name in ("toy/__init__.py", "low/__init__.py", "high/__init__.py", *files):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files.get(name, ""), encoding="utf-8")
    return tmp_path


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "low/a.py": "import os\n",
        "low/b.py": "from . import a\nfrom .a import x\n",
        "high/c.py": "from toy.low import b\nimport toy.low.a\nfrom ..low.a import y\n",
    })  # fmt: skip
    assert violations(root, TOY_DIRS, TOY_LAYERS) == []
    edges = {(e.source, e.target) for e in imports(root, TOY_DIRS)}
    assert edges == {
        ("toy.low.b", "toy.low.a"),
        ("toy.high.c", "toy.low.b"),
        ("toy.high.c", "toy.low.a"),
    }


def test_a_back_up_import_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"low/a.py": "from toy.high.c import x\n", "high/c.py": ""})
    [found] = violations(root, TOY_DIRS, TOY_LAYERS)
    assert found.startswith("back-up import, low -> high: toy.low.a -> toy.high.c")
    assert "low/a.py:1" in found


def test_a_back_up_import_under_type_checking_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "low/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from ..high import c\n",
        "high/c.py": "",
    })  # fmt: skip
    assert [v.split(":")[0] for v in violations(root, TOY_DIRS, TOY_LAYERS)] == [
        "back-up import, low -> high"
    ]


def test_a_back_up_import_by_name_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "low/a.py": "import importlib\n\ndef late():\n"
                    "    return importlib.import_module('toy.high.c')\n",
        "high/c.py": "",
    })  # fmt: skip
    [found] = violations(root, TOY_DIRS, TOY_LAYERS)
    assert found.startswith("back-up import, low -> high: toy.low.a -> toy.high.c")


def test_a_relative_import_loop_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"low/a.py": "from . import b\n", "low/b.py": "from .a import x\n"})
    [found] = violations(root, TOY_DIRS, TOY_LAYERS)
    assert found.startswith("module cycle toy.low.a <-> toy.low.b")
    assert "toy.low.a -> toy.low.b  (low/a.py:1)" in found
    assert "toy.low.b -> toy.low.a  (low/b.py:1)" in found


def test_a_function_local_import_loop_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "low/a.py": "import toy.low.b\n",
        "low/b.py": "def late():\n    from toy.low import a\n    return a\n",
    })  # fmt: skip
    [found] = violations(root, TOY_DIRS, TOY_LAYERS)
    assert found.startswith("module cycle toy.low.a <-> toy.low.b")
    assert "(low/b.py:2)" in found


def test_a_package_loop_without_a_module_loop_is_reported(tmp_path: Path) -> None:
    dirs = {**TOY_DIRS, "toy.low.p": "low/p", "toy.low.q": "low/q"}
    root = _tree(tmp_path, {
        "low/p/__init__.py": "", "low/q/__init__.py": "",
        "low/p/one.py": "from ..q import two\n", "low/q/two.py": "",
        "low/q/three.py": "from toy.low.p.four import z\n", "low/p/four.py": "",
    })  # fmt: skip
    [found] = violations(root, dirs, TOY_LAYERS)
    assert found.startswith("package cycle toy.low.p <-> toy.low.q")


def test_a_module_no_layer_names_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"low/a.py": ""})
    assert violations(root, TOY_DIRS, (("high", ("toy.high",)),)) == [
        "not in any layer: toy (toy/__init__.py)",
        "not in any layer: toy.low (low/__init__.py)",
        "not in any layer: toy.low.a (low/a.py)",
    ]


@pytest.mark.parametrize(
    ("module", "layer"),
    [("kconform.codecs.schema", "codec"), ("kconform.fixtures.reference.checks",
      "rules and reference semantics"), ("kconform.fixtures.proxy.server", "I/O fixtures"),
     ("kconform.soak.run", "engine"), ("kconform.cli.soak", "pipelines and CLI")],
)  # fmt: skip
def test_the_longest_prefix_places_a_module(module: str, layer: str) -> None:
    index = layer_of(module, LAYERS)
    assert index is not None and LAYERS[index][0] == layer
