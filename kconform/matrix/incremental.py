"""Only what changed (issue 44): a matrix run into a folder that holds an earlier run's results
runs again, per subject, just the pairs `reports.matrix_keys.changed` lists (a key changed, no
result held, or an `error`), and keeps the other results; a subject with nothing changed does
not run at all. `--all` runs everything, as a first run does.

A case a run asked for that gave no result there (its suite or level leaves it out) is written
to the keys as `held: false`, so that it is not asked for again until its key changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kconform.engine.model import CASES, select_cases
from kconform.matrix.plan import Run
from kconform.reports.expectations import case_requirements
from kconform.reports.matrix_keys import KEYS, changed
from kconform.reports.model import RunResults

__all__ = ["KEPT", "Redo", "absent_cases", "asked_cases", "merge_kept", "plan_redo"]

KEPT = "results-kept.json"  # an incremental run's earlier results, while the run is under way


@dataclass(frozen=True)
class Redo:
    """A run of the matrix, and the cases it must run (empty: all of them)."""

    run: Run
    cases: tuple[str, ...] = ()


def _selection(selection: str) -> set[str] | None:
    """The case ids a `--cases` value selects, as every command selects them (select_cases:
    case ids, prefixes, wildcards, else the rule ids named); None: no selection, every case."""
    patterns = [p.strip() for p in selection.split(",") if p.strip()]
    if not patterns:
        return None
    case_requirements()  # every case declared before any is selected
    return set().union(*select_cases(CASES.values(), patterns).values())


def plan_redo(runs: Sequence[Run], out: Path, selection: str) -> tuple[list[Redo], list[Run]]:
    """(what to run, what is up to date) of `runs` against what `out` holds: a run whose folder
    has no results or keys runs whole; else only its subject's changed cases within `selection`
    (the run's --cases), and none at all when nothing changed."""
    chosen = _selection(selection)
    todo: list[Redo] = []
    fresh: list[Run] = []
    for run in runs:
        folder = out / run.name
        if not (folder / KEYS).is_file() or not (folder / "results.json").is_file():
            todo.append(Redo(run))
            continue
        ids = sorted({c for c, subject in changed(folder) if subject == run.subject
                      and (chosen is None or c in chosen)})  # fmt: skip
        if ids:
            todo.append(Redo(run, tuple(ids)))
        else:
            fresh.append(run)
    return todo, fresh


def merge_kept(folder: Path) -> RunResults:
    """The run's results: what it just gave, and of the earlier results (`KEPT`) every one it
    did not run again; written to `results.json`, and `KEPT` removed."""
    now = RunResults.read(folder / "results.json")
    kept_path = folder / KEPT
    if kept_path.is_file():
        ran = {r.key for r in now.results}
        kept = RunResults.read(kept_path)
        now.results = [*(r for r in kept.results if r.key not in ran), *now.results]
        now.results.sort(key=lambda r: (r.subject, r.case_id))
        now.write(folder / "results.json")
        kept_path.unlink()
    return now


def absent_cases(run: RunResults, subject: str, asked: Iterable[str]) -> list[str]:
    """The cases of `asked` that gave `subject` no result in `run`."""
    held = {r.case_id for r in run.results if r.subject == subject}
    return sorted(set(asked) - held)


def asked_cases(kind: str, selection: str) -> list[str]:
    """Every declared case of `kind` (broker or client) within `selection`: what a whole run
    asks for."""
    chosen = _selection(selection)
    case_requirements()
    return sorted(c.id for c in CASES.values()
                  if c.kind == kind and (chosen is None or c.id in chosen))  # fmt: skip
