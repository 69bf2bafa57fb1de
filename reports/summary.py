"""The few lines the terminal shows after a run: verdict counts per subject and what failed.

A person reading a CI log should see at once whether the run passed, which subject broke it
and which case ids to open in the HTML report; everything else is in the report itself.
"""

from __future__ import annotations

from kconform.reports.common import (
    Subject,
    failure_reason,
    interruption,
    run_passes,
    subjects,
)
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
EXPECTED_MARK = "e"  # "0+18e": no unexpected fail, 18 the baseline expects


def _count(subject: Subject, verdict: str) -> str:
    """A count cell: the unexpected ones, then `+Ne` for those a baseline expects, so a known
    deviation never reads like a new one."""
    expected = subject.expected.get(verdict, 0)
    if not expected:
        return str(subject.counts.get(verdict, 0))
    return f"{subject.unexpected(verdict)}+{expected}{EXPECTED_MARK}"


def summary_table(
    results: RunResults, *, max_failing: int = MAX_FAILING_SHOWN, overall: bool = True
) -> str:
    """A plain-text table: one row per subject, its failing case ids under it, then the status
    (`overall`: the CI column and line; `kconform certify` leaves both to its certificate, whose
    headline is the run's one verdict)."""
    rows = subjects(results)
    if not rows:
        note = f" (interrupted {interruption(results)})" if results.interrupted else ""
        return f"kconform {results.kconform_version}: no cases ran{note}\n"
    width = max(len("subject"), *(len(s.name) for s in rows))
    cols = {v: max(len(COLUMN[v]), 4, *(len(_count(s, v)) for s in rows)) for v in VERDICTS}
    header = f"{'subject':<{width}}  {'kind':<6}" + "".join(
        f" {COLUMN[v]:>{cols[v]}}" for v in VERDICTS
    )
    ci = "  CI" if overall else ""  # certify: the certificate is the one verdict
    lines = [header + f" {'total':>6}{ci}", "-" * (len(header) + 7 + len(ci))]
    failing_total = 0
    for subject in rows:
        counts = "".join(f" {_count(subject, v):>{cols[v]}}" for v in VERDICTS)
        status = "FAIL" if subject.failing else "NOT RUN" if subject.not_run else "ok"
        status = f"  {status}" if overall else ""
        lines.append(
            f"{subject.name:<{width}}  {subject.kind:<6}{counts} {subject.total:>6}{status}"
        )
        failing_total += len(subject.failing)
        for result in subject.failing[:max_failing]:
            lines.append(f"    {result.case_id} [{result.level}]: {failure_reason(result)}")
        if len(subject.failing) > max_failing:
            lines.append(f"    ... and {len(subject.failing) - max_failing} more")
    lines.append("")
    locked = [f"{s.name} {s.lock}" for s in rows if s.lock]
    if locked:
        lines.append(f"built from their committed dependency locks: {', '.join(locked)}")
    expected = sum(sum(s.expected.values()) for s in rows)
    if expected:
        lines.append(
            f"n+M{EXPECTED_MARK}: n unexpected, M as the baseline expects ({expected} known "
            + ("deviations, which do not fail the run)" if overall else "deviations)")
        )
    if results.interrupted:
        fails = ", CI fails" if overall else ""
        lines.append(f"run INTERRUPTED {interruption(results)}: results are partial{fails}")
    verdict = "PASS" if run_passes(results) else "FAIL"
    unjudged = [s.name for s in rows if s.not_run]
    if unjudged and not results.interrupted:
        lines.append(
            "not judged at all (every case unsupported, not applicable or skipped): "
            f"{', '.join(unjudged)}" + (": CI fails" if overall else "")
        )
    if overall:
        lines.append(
            f"overall: {verdict} ({len(results.results)} results, {failing_total} failing the run)"
        )
    return "\n".join(lines) + "\n"
