"""The volume cases catch a broker that miscounts partition meters (`kip977_partition_miscount`).

One pytest process runs suites/volumes against the pristine reference and the mutant, as
`kconform run` would: the pristine reference must pass every volume case, the mutant must fail
the MUST case on the meters while its end offsets (the log itself is right) still pass.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kconform.reports.model import RunResults

SUITE = Path(__file__).resolve().parents[2] / "suites" / "volumes"
MUTANT = "reference:kip977_partition_miscount"


@pytest.mark.slow
@pytest.mark.spark
def test_the_partition_miscount_mutant_fails_a_must_case(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(SUITE),
            "-p",
            "no:cacheprovider",
            "-q",
            "--target",
            f"reference,{MUTANT}",
            "--brokers",
            "2",
            "--kconform-results",
            str(results),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert results.exists(), process.stdout[-3000:] + process.stderr[-3000:]
    verdicts = {(r.subject, r.case_id): r for r in RunResults.read(results).results}

    pristine = {c: r.verdict for (s, c), r in verdicts.items() if s == "reference"}
    assert pristine == {
        "kip977.volumes.records_match_end_offsets": "pass",
        "kip977.volumes.meters_match_ledger": "pass",
        "kip977.volumes.hot_partitions_visible": "pass",
    }, process.stdout[-3000:]
    caught = verdicts[MUTANT, "kip977.volumes.meters_match_ledger"]
    assert (caught.level, caught.verdict) == ("MUST", "fail")
    bad = [e for e in caught.expectations if not e.ok]
    assert bad and all("MessagesInPerSec" in e.what for e in bad)
    assert all(e.observed == int(e.expected) + 1 for e in bad)  # one message too many each
    assert verdicts[MUTANT, "kip977.volumes.records_match_end_offsets"].verdict == "pass"
    assert process.returncode == 1  # the mutant's MUST fail fails the run
