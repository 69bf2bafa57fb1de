"""The kconform pytest plugin, split by concern as pytest-xdist's is:

- `options`: the `--target`, `--client`, `--cases`... options, the markers, the Hypothesis budgets
- `state`: what one session keeps (targets, results, baselines), created and closed by its hooks
- `fixtures`: `target`, `client`, `runtime`, `check`, and running `async def` cases
- `verdicts`: a case's outcome as its verdict, recorded, and as the pytest outcome CI sees
- `scheduling`: which cases run, in what order, and how `-j N` workers share them
- `workers` and `progress`: the worker processes of `kconform run -j N`, one line per case

Loaded through the `pytest11` entry point when kconform is installed, and by the repository's
conftest.py for in-repo runs; plain `pytest` and the `kconform` command therefore behave alike.
Conformance cases (`@case`, `kconform.engine.model`) get a `check` and, for broker cases, a
`target` parametrized over `--target`.
"""

from __future__ import annotations

# pytest registers each of these as a plugin of its own when it registers this one; in this
# order, each is imported by pytest before another imports it (its asserts can be rewritten).
pytest_plugins = [
    "kconform.plugin.options",
    "kconform.plugin.coverage",
    "kconform.plugin.state",
    "kconform.plugin.verdicts",
    "kconform.plugin.fixtures",
    "kconform.plugin.scheduling",
]
