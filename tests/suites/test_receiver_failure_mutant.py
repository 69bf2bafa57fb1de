"""The receiver-failure mutant is killed by its case and by nothing else.

`receiver_failure_swallowed` answers NONE to a push the reference's receiver throws on; only
kip714.push.receiver_failure.throws asks the receiver to throw (RECEIVER_THROW_METRIC), so the
whole broker suite against that mutant must fail that case and pass everything it passes on the
pristine reference. A second case that failed would mean the mutant breaks more than its rule,
or the new metric name leaks into other payloads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kconform.reports.model import RunResults

SUITES = Path(__file__).resolve().parents[2] / "suites" / "broker"
MUTANT = "receiver_failure_swallowed"
CASE = "kip714.push.receiver_failure.throws"


@pytest.mark.slow
def test_only_the_receiver_failure_case_kills_its_mutant(tmp_path: Path) -> None:
    results_path = tmp_path / "results.json"
    process = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITES), "-p", "no:cacheprovider", "-q",
         "--target", f"reference,reference:{MUTANT}", "--brokers", "2",
         "--kconform-results", str(results_path)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert results_path.exists(), process.stdout[-3000:] + process.stderr[-3000:]
    results = RunResults.read(results_path).results
    pristine = {r.case_id: r.verdict for r in results if r.subject == "reference"}
    mutant = {r.case_id: r for r in results if r.subject == f"reference:{MUTANT}"}
    assert pristine[CASE] == "pass" and set(pristine) == set(mutant)
    changed = sorted(c for c, r in mutant.items() if r.verdict != pristine[c])
    assert changed == [CASE], changed
    killed = mutant[CASE]
    assert (killed.verdict, killed.level) == ("fail", "MUST")
    assert [e.what for e in killed.expectations if not e.ok] == ["push the receiver throws on"]
