"""Only what changed (issue 44): a matrix run into a folder that holds an earlier run's results
runs again, per subject, just the cases whose key changed (reports.matrix_keys: the case's source
and rules, the subject's version and lock, kconform's version), that it holds nothing for or
that ended in `error` (the harness's defect, never a result to keep), and keeps the other
results; a subject with nothing changed does not run at all. `--all` runs
everything, as a first run does.

A case a run asked for that gave no result there (its suite or level leaves it out) is written
to the keys as `held: false`, so that it is not asked for again until its key changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kconform.engine.model import CASES, matches_pattern
from kconform.matrix.plan import Run
from kconform.reports.matrix_keys import KEYS, changed, result_key
from kconform.reports.model import RunResults

__all__ = ["KEPT", "Redo", "absent_cases", "merge_kept", "plan_redo", "write_run_keys"]

KEPT = "results-kept.json"  # an incremental run's earlier results, while the run is under way


@dataclass(frozen=True)
class Redo:
    """A run of the matrix, and the cases it must run (empty: all of them)."""

    run: Run
    cases: tuple[str, ...] = ()


def _selected(case_id: str, selection: str) -> bool:
    patterns = [p.strip() for p in selection.split(",") if p.strip()]
    info = CASES.get(case_id)
    return not patterns or (info is not None and any(matches_pattern(info, p) for p in patterns))


def plan_redo(runs: Sequence[Run], out: Path, selection: str) -> tuple[list[Redo], list[Run]]:
    """(what to run, what is up to date) of `runs` against what `out` holds: a run whose folder
    has no results or keys runs whole; else only its subject's changed cases within `selection`
    (the run's --cases), and none at all when nothing changed."""
    todo: list[Redo] = []
    fresh: list[Run] = []
    for run in runs:
        folder = out / run.name
        if not (folder / KEYS).is_file() or not (folder / "results.json").is_file():
            todo.append(Redo(run))
            continue
        stored = RunResults.read(folder / "results.json").results
        errors = {(r.case_id, r.subject) for r in stored if r.verdict == "error"}  # a defect's
        ids = sorted({c for c, subject in {*changed(folder), *errors}
                      if subject == run.subject and _selected(c, selection)})  # fmt: skip
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
    return sorted(c.id for c in CASES.values() if c.kind == kind and _selected(c.id, selection))


def write_run_keys(folder: Path, run: RunResults, absent: dict[str, list[str]]) -> Path:
    """`<folder>/keys.json`: the earlier keys of cases not run again, each result's key, and
    each case asked for that gave none (`held: false`)."""
    path = folder / KEYS
    keys: dict[str, dict[str, dict[str, object]]] = {}
    if path.is_file():
        keys = json.loads(path.read_text(encoding="utf-8"))
    for r in run.results:
        keys.setdefault(r.subject, {})[r.case_id] = {**result_key(r.case_id, r.subject)}
    for subject, cases in absent.items():
        for case_id in cases:
            keys.setdefault(subject, {})[case_id] = {**result_key(case_id, subject),
                                                     "held": False}  # fmt: skip
    path.write_text(json.dumps(keys, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path
