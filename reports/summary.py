"""The few lines the terminal shows after a run: verdict counts per subject and what failed.

A person reading a CI log should see at once whether the run passed, which subject broke it
and which case ids to open in the HTML report; everything else is in the report itself.
"""

from __future__ import annotations

from kconform.reports.common import failure_reason, run_passes, subjects
from kconform.reports.model import VERDICTS, RunResults

COLUMN = {
    "pass": "pass",
    "fail": "fail",
    "non-strict": "n-strict",
    "informational": "info",
    "unsupported": "unsupp",
    "not-applicable": "n/a",
    "skipped": "skip",
    "error": "error",
}
MAX_FAILING_SHOWN = 5


def summary_table(results: RunResults, *, max_failing: int = MAX_FAILING_SHOWN) -> str:
    """A plain-text table: one row per subject, its failing case ids under it, then the status."""
    rows = subjects(results)
    if not rows:
        note = " (interrupted)" if results.interrupted else ""
        return f"kconform {results.kconform_version}: no cases ran{note}\n"
    width = max(len("subject"), *(len(s.name) for s in rows))
    cols = {v: max(len(COLUMN[v]), 4) for v in VERDICTS}
    header = f"{'subject':<{width}}  {'kind':<6}" + "".join(
        f" {COLUMN[v]:>{cols[v]}}" for v in VERDICTS
    )
    lines = [header + f" {'total':>6}  CI", "-" * (len(header) + 11)]
    failing_total = 0
    for subject in rows:
        counts = "".join(f" {subject.counts.get(v, 0):>{cols[v]}}" for v in VERDICTS)
        status = "FAIL" if subject.failing else "NOT RUN" if subject.not_run else "ok"
        lines.append(
            f"{subject.name:<{width}}  {subject.kind:<6}{counts} {subject.total:>6}  {status}"
        )
        failing_total += len(subject.failing)
        for result in subject.failing[:max_failing]:
            lines.append(f"    {result.case_id} [{result.level}]: {failure_reason(result)}")
        if len(subject.failing) > max_failing:
            lines.append(f"    ... and {len(subject.failing) - max_failing} more")
    lines.append("")
    if results.interrupted:
        lines.append("run INTERRUPTED: results are partial, CI fails")
    verdict = "PASS" if run_passes(results) else "FAIL"
    unjudged = [s.name for s in rows if s.not_run]
    if unjudged and not results.interrupted:
        lines.append(f"not judged at all (every case skipped): {', '.join(unjudged)}: CI fails")
    lines.append(
        f"overall: {verdict} ({len(results.results)} results, {failing_total} failing the run)"
    )
    return "\n".join(lines) + "\n"
