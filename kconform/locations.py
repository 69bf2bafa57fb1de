"""Where kconform's own data and its caches are: one function each, the same in a checkout and
in an installed wheel.

The data (baselines, the suites and their fuzz corpus) is found through the import system, by
the folder of the package that holds it, never from a checkout's layout: installed, the
top-level folders are `site-packages/kconform/<name>/`, in a checkout they are beside
`kconform/`, and counting parent folders up from a module is right in only one of the two.
`find_spec` locates a package without running it, so this module (below every layer) imports
nothing above.

What kconform *writes* never goes into its own package: reports go to `--out` or
`reports/out/` under the current folder, caches to `cache_root()`, a fuzz finding on a real
target to the committed corpus only when running from a checkout (`checkout()`), and the
commands that rewrite committed files (`kconform matrix`, `make docs`) take their paths relative
to the current folder.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from kconform.errors import HarnessDefect, UsageError

__all__ = [
    "CACHE_ENV",
    "baselines",
    "cache_problem",
    "cache_root",
    "checkout",
    "fuzz_regressions",
    "suites",
]

CACHE_ENV = "KCONFORM_CACHE"


def package_folder(name: str) -> Path:
    """The folder of package `name` (e.g. `kconform.baselines`), wherever it is installed."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise HarnessDefect(f"kconform is incompletely installed: no package {name}")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def baselines() -> Path:
    """The committed expectations (`baselines/<kind>/<version>.json`, `baselines/whys.json`)."""
    return package_folder("kconform.baselines")


def suites() -> Path:
    """The suites (`suites/broker`, `suites/client`, ...), which a run hands to pytest."""
    return package_folder("kconform.suites")


def fuzz_regressions() -> Path:
    """The committed fuzz corpus (`suites/fuzz/regressions`): data of the fuzz suite."""
    return suites() / "fuzz" / "regressions"


def checkout() -> Path | None:
    """The source checkout kconform runs from (an editable install), or None when installed: a
    checkout's `baselines/` sits beside its `pyproject.toml`, an installed one in `kconform/`."""
    root = baselines().parent
    return root if (root / "pyproject.toml").is_file() else None


def cache_root() -> Path:
    """kconform's cache: `$KCONFORM_CACHE`, else `$XDG_CACHE_HOME/kconform`, else
    `~/.cache/kconform` (Kafka releases, built client drivers, JaCoCo, a fuzz corpus)."""
    own = os.environ.get(CACHE_ENV)
    if own:
        problem = cache_problem(Path(own).expanduser())
        if problem:
            raise UsageError(f"${CACHE_ENV}={own}: {problem}")
        return Path(own).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kconform"


def cache_problem(folder: Path) -> str | None:
    """Why `folder` cannot be kconform's cache (it keeps Kafka releases and client builds there),
    or None: it, or the nearest folder above it that exists, must be a writable folder."""
    existing = folder.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return (f"{existing} is not writable; kconform keeps Kafka releases and client builds "
                "there: name a folder it can write, or unset it (~/.cache/kconform)")  # fmt: skip
    return None
