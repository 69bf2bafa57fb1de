"""A subject built from a committed dependency lock shows the lock's digest beside its version
in every report (terminal, HTML, JUnit, results.json), so a verdict names the code it judged;
a subject built from none (an embedded target) shows nothing in its place."""

from __future__ import annotations

from pathlib import Path

from kconform.reports.html import write_html
from kconform.reports.junit import junit_tree
from kconform.reports.model import RunResults
from kconform.reports.summary import summary_table

DIGEST = "sha256:0123456789abcdef"


def _locked(run: RunResults) -> RunResults:
    for described in run.subjects:
        if described["name"] == "reference":
            continue
        described["lock"] = DIGEST
        return run
    raise AssertionError("the sample run has no subject but the reference")


def test_the_digest_is_in_every_report(run: RunResults, tmp_path: Path) -> None:
    run = _locked(run)
    name = next(d["name"] for d in run.subjects if d.get("lock"))
    assert f"{name} {DIGEST}" in summary_table(run)
    assert f"lock {DIGEST}" in write_html(run, tmp_path).read_text()
    props = {
        (suite.get("name"), p.get("name")): p.get("value")
        for suite in junit_tree(run).iter("testsuite")
        for p in suite.iter("property")
    }
    assert props[(name, "lock")] == DIGEST
    assert ("reference", "lock") not in props


def test_no_lock_no_digest(run: RunResults, tmp_path: Path) -> None:
    assert "dependency locks" not in summary_table(run)
    assert "lock sha256:" not in write_html(run, tmp_path).read_text()
    assert not [p for p in junit_tree(run).iter("property") if p.get("name") == "lock"]
