"""The first screen tells the truth (issue 33, deliverable 6): known deviations drawn apart from
new ones, the failing subject first on its case page, a verdict banner on the soak page and the
volumes section, every planned subject in an interrupted run's table, and a subject with
nothing judged NOT RUN in every report."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kconform.engine.results import CaseResult
from kconform.reports.html import matrix_cell_id, write_html
from kconform.reports.html_case import render_case
from kconform.reports.model import RunResults
from kconform.reports.soak import render as render_soak
from kconform.reports.summary import summary_table
from kconform.reports.volumes_section import render_volumes_section


def result(case: str, subject: str, verdict: str, *, baseline: str | None = None,
           kind: str = "broker") -> CaseResult:  # fmt: skip
    return CaseResult(case, f"title of {case}", "KIP-714 §x", "MUST", "KIP-714", subject, kind,
                      "impl", "1.0", verdict, message=f"{verdict} on {subject}",
                      started=1_795_000_000.0, baseline=baseline)  # fmt: skip


def run_of(*results: CaseResult, interrupted: bool = False, **extra: Any) -> RunResults:
    return RunResults("0.1", 1_795_000_000.0, 1_795_000_010.0, results=list(results),
                      interrupted=interrupted, **extra)  # fmt: skip


def _row(table: str, subject: str) -> str:
    (line,) = [x for x in table.splitlines() if x.startswith(subject + " ")]
    return line


def test_a_baselined_fail_is_drawn_apart_from_a_new_one(tmp_path: Path) -> None:
    known = result("kip714.push.a", "librdkafka_mock", "fail", baseline="fail")
    new = result("kip714.push.b", "librdkafka_mock", "fail")
    run = run_of(known, new, result("kip714.push.a", "reference", "pass"))
    # the console: one unexpected fail, one the baseline expects, counted apart
    table = summary_table(run)
    assert " 1+1e " in _row(table, "librdkafka_mock"), table
    assert "as the baseline expects" in table
    # the matrix: the known one muted and marked, the new one as loud as ever
    text = write_html(run, tmp_path).read_text(encoding="utf-8")

    def cell(case: str) -> tuple[list[str], str]:
        cell_id = re.escape(matrix_cell_id(case, "librdkafka_mock"))
        found = re.search(rf'<td id="{cell_id}" class="([^"]*)"[^>]*><a [^>]*>(.*?)</a>', text)
        assert found is not None
        return found.group(1).split(), found.group(2)

    assert cell("kip714.push.a") == (["v", "v-fail", "exp"], "fail exp.")
    assert cell("kip714.push.b") == (["v", "v-fail"], "FAIL")
    assert "+1 expected" in text  # the subjects table's count


def test_the_failing_subject_comes_first_on_its_case_page() -> None:
    by_subject = {
        "reference": result("kip714.push.a", "reference", "pass"),
        "confluent-kafka": result("kip714.push.a", "confluent-kafka", "pass", kind="client"),
        "librdkafka_mock": result("kip714.push.a", "librdkafka_mock", "fail"),
    }
    page = render_case("kip714.push.a", by_subject, list(by_subject), {}, {})
    sections = re.findall(r'<section class="subject[^"]*" id="s-([^"]+)"', page)
    assert sections[0] == "librdkafka_mock", sections


def _soak_summary(verdicts: list[str]) -> dict[str, Any]:
    slos = [{"id": f"soak.slo.s{i}", "title": f"slo {i}", "level": "MUST", "verdict": v,
             "value": None, "unit": ""} for i, v in enumerate(verdicts)]  # fmt: skip
    return {"target": {"name": "reference"}, "clients": 4, "measured_s": 10, "duration_s": 10,
            "slos": slos}  # fmt: skip


def _banner(page: str, id: str = "verdict") -> str:
    found = re.search(rf'<div class="banner (\w+)" id="{id}">(.*?)</div>', page)
    assert found is not None, page[:2000]
    return f"{found.group(1)}: {found.group(2)}"


def test_the_soak_page_opens_with_its_verdict() -> None:
    failed = render_soak(_soak_summary(["pass", "fail"]), [], {})
    assert _banner(failed).startswith("fail: SOAK FAILED") and "soak.slo.s1" in _banner(failed)
    passed = render_soak(_soak_summary(["pass", "pass"]), [], {})
    assert _banner(passed).startswith("pass: SOAK PASSED")
    # the outcome recorded with baselines applied wins over the raw SLO verdicts
    known = _soak_summary(["fail"]) | {"outcome": {"passes": True, "failing": []}}
    assert _banner(render_soak(known, [], {})).startswith("pass: SOAK PASSED")
    # the banner comes before the facts and the SLO table
    assert failed.index('id="verdict"') < failed.index('id="slos"')


def test_the_volumes_section_opens_with_its_verdict() -> None:
    source = {"source": "sink", "metric": "bytes", "quantity": "bytes", "rows": 4, "ok": 3,
              "mismatch": 1, "missing": 0, "hot_ledger": 0, "hot_disagreements": 0}  # fmt: skip
    off = {"totals": {"mismatch": 1, "missing": 0}, "sources": [source]}
    assert _banner(render_volumes_section(off), "volumes-verdict").startswith("fail: VOLUMES")
    agree = {"totals": {"mismatch": 0, "missing": 0}, "sources": [source | {"mismatch": 0}]}
    assert _banner(render_volumes_section(agree), "volumes-verdict").startswith("pass: VOLUMES")
    none: dict[str, Any] = {"totals": {}, "sources": []}
    assert _banner(render_volumes_section(none), "volumes-verdict").startswith("notrun:")


def test_an_interrupted_run_lists_the_subject_it_had_not_reached(tmp_path: Path) -> None:
    planned = [
        {"name": "reference", "kind": "broker"},
        {"name": "librdkafka_mock", "kind": "broker"},
    ]
    run = run_of(result("kip714.push.a", "reference", "pass"), interrupted=True, planned=planned)
    table = summary_table(run)
    assert _row(table, "librdkafka_mock").endswith("NOT RUN"), table
    text = write_html(run, tmp_path).read_text(encoding="utf-8")
    assert '<tr data-subject="librdkafka_mock">' in text
    written = tmp_path / "results.json"
    run.write(written)
    assert RunResults.read(written).planned == planned


def test_a_subject_with_nothing_judged_is_not_run_everywhere(tmp_path: Path) -> None:
    from kconform.reports.certificate import certify, render_text

    run = run_of(
        result("kip714.client.a", "confluent-kafka", "pass", kind="client"),
        result("kip714.client.a", "java", "not-applicable", kind="client"),
        result("kip714.client.b", "java", "not-applicable", kind="client"),
    )
    table = summary_table(run)
    assert _row(table, "java").endswith("NOT RUN") and "overall: FAIL" in table, table
    text = write_html(run, tmp_path).read_text(encoding="utf-8")
    (row,) = re.findall(r'<tr data-subject="java">.*?</tr>', text)
    assert "NOT RUN" in row and ">ok<" not in row
    certificate = render_text(certify(run))
    assert ": INCOMPLETE\n  nothing judged: 2 not-applicable" in certificate, certificate


def test_a_baselined_soak_slo_fail_is_drawn_as_expected_under_its_banner() -> None:
    """The soak page's SLO table draws a fail the baseline expects as `fail exp.` (it fails no
    run, as the banner says) and one that fails the run as a plain FAIL."""
    from kconform.reports.soak import _slo_table

    slos = [{"id": "soak.throttle.bound", "title": "t", "level": "MUST", "verdict": "fail",
             "value": 4.8, "unit": "%"}]  # fmt: skip
    expected = _slo_table(slos, {"failing": [], "passes": True})
    assert "fail exp." in expected
    news = _slo_table(slos, {"failing": ["soak.throttle.bound"], "passes": False})
    assert "fail exp." not in news and 'class="chip v-fail"' in news
