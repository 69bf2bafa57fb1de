"""What determines a matrix result, as a key stored beside it (issue 44): the case and a digest
of its source and of the rules it judges, the subject's kind, version and lock digest, and
kconform's version. A result whose key is unchanged in the current tree needs no new run;
`changed` lists the (case, subject) pairs that do (a new case included).

The case's source is the module that declares it and the suite folder's `helpers*.py`: coarse
on purpose, a change there re-runs every case of the module, never too few. The lock is the
subject's committed dependency lock (`fixtures/lockfiles/<kind>/<version>/`, an Apache release's
`kafka/<version>/`), "" for a subject built from none.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from kconform import __version__
from kconform.engine.model import CASE_MODULES, CASES
from kconform.errors import UsageError
from kconform.fixtures import lockfiles
from kconform.fixtures.targets.release_lock import LOCK_KIND
from kconform.reports.expectations import case_requirements
from kconform.reports.model import RunResults
from kconform.rules import RULES
from kconform.rules.digest import book_digest

__all__ = ["KEYS", "changed", "result_key", "write_keys"]

KEYS = "keys.json"  # beside a subject's results.json in a matrix run's folder


@cache
def _source_digest(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    path = Path(spec.origin)
    h = hashlib.sha256()
    for part in [path, *sorted(path.parent.glob("helpers*.py"))]:
        h.update(part.name.encode() + b"\0" + part.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()[:16]


@cache
def _lock_digest(kind: str, version: str) -> str:
    for name in (kind, LOCK_KIND):
        try:
            return lockfiles.digest(lockfiles.find(name, version))
        except lockfiles.LockMissing:
            continue
    return ""


def result_key(case_id: str, subject: str) -> dict[str, str]:
    """The parts that determine `case_id`'s verdict on `subject` in the current tree."""
    case_requirements()  # the suites imported: their modules are known
    info = CASES.get(case_id)
    rules = [RULES[r] for r in info.rules if r in RULES] if info else []
    parts = re.split(r"[:@]", subject, maxsplit=1)
    kind, version = parts[0], parts[1] if len(parts) == 2 else ""
    return {
        "case": case_id,
        "source": _source_digest(CASE_MODULES.get(case_id, "")),
        "rules": book_digest(rules) if rules else "",
        "kind": kind,
        "version": version,
        "lock": _lock_digest(kind, version) if version else "",
        "kconform": __version__,
    }


def _read_keys(path: Path) -> dict[str, dict[str, dict[str, object]]]:
    """A keys.json as written; UsageError naming the file otherwise (a folder edited by hand)."""
    try:
        keys = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable ({exc}); `matrix run --all` writes it anew") from None
    if not isinstance(keys, dict) or not all(
        isinstance(cases, dict) and all(isinstance(k, dict) for k in cases.values())
        for cases in keys.values()
    ):
        raise UsageError(f"{path}: not a {{subject: {{case id: key}}}} object")
    return keys


def write_keys(
    folder: Path, run: RunResults, absent: Mapping[str, Iterable[str]] | None = None
) -> Path:
    """`<folder>/keys.json`: {subject: {case id: key}}, over what the file held (a run of some
    cases keeps the others' keys): each result's key, and each case of `absent` ({subject:
    cases asked for that gave no result}) as `held: false`, not to be asked for again."""
    path = folder / KEYS
    keys = _read_keys(path) if path.is_file() else {}
    for r in run.results:
        keys.setdefault(r.subject, {})[r.case_id] = {**result_key(r.case_id, r.subject)}
    for subject, cases in (absent or {}).items():
        for case_id in cases:
            keys.setdefault(subject, {})[case_id] = {**result_key(case_id, subject),
                                                     "held": False}  # fmt: skip
    path.write_text(json.dumps(keys, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def changed(stored: Path) -> list[tuple[str, str]]:
    """(case id, subject) of every pair in a stored matrix result (its `*/keys.json`, or one
    folder's) whose key differs in the current tree, that ended in `error` (the harness's
    defect, never a result to keep), and of every declared case of a stored subject's kind
    (broker or client) that it holds no result for: what a run must redo."""
    paths = [stored / KEYS] if (stored / KEYS).is_file() else sorted(stored.glob(f"*/{KEYS}"))
    case_requirements()  # every case declared, before a folder with no key asks which exist
    out: set[tuple[str, str]] = set()
    for path in paths:
        results_path = path.parent / "results.json"
        results = RunResults.read(results_path).results if results_path.is_file() else []
        kinds = {(r.subject, r.subject_kind) for r in results}
        out |= {(r.case_id, r.subject) for r in results if r.verdict == "error"}
        keys = _read_keys(path)
        for subject, cases in keys.items():
            for case_id, key in cases.items():  # `held: false`: asked for, gave no result
                if result_key(case_id, subject) != {k: v for k, v in key.items() if k != "held"}:
                    out.add((case_id, subject))
            for held, kind in kinds:
                if held == subject:
                    out |= {(c.id, subject) for c in CASES.values()
                            if c.kind == kind and c.id not in cases}  # fmt: skip
    return sorted(out)
