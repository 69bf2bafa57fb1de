"""JaCoCo XML read, per-case attribution and the report section, on a small synthesized XML
shaped like `jacococli report --xml` (one class with a method, a lambda and an inner class)."""

from __future__ import annotations

from kconform.reports.coverage import (
    attribute,
    build_model,
    method_spans,
    missed_branches,
    parse_xml,
)
from kconform.reports.html_coverage import render_coverage_page, render_coverage_section

MANAGER = "org/apache/kafka/server/ClientMetricsManager"
FILE = "org/apache/kafka/server/ClientMetricsManager.java"


def xml(lines: dict[int, tuple[int, int, int, int]], branch: tuple[int, int] = (2, 2)) -> bytes:
    """A report of ClientMetricsManager: push (lines 10-14, a lambda at 13), close (20-21),
    an inner class method at 30; `lines`: nr -> (mi, ci, mb, cb)."""
    line_xml = "".join(
        f'<line nr="{nr}" mi="{mi}" ci="{ci}" mb="{mb}" cb="{cb}"/>'
        for nr, (mi, ci, mb, cb) in sorted(lines.items())
    )

    def method(name: str, line: int, br: tuple[int, int] | None = None) -> str:
        counter = f'<counter type="BRANCH" missed="{br[0]}" covered="{br[1]}"/>' if br else ""
        return (f'<method name="{name}" desc="()V" line="{line}">'
                f'<counter type="LINE" missed="1" covered="1"/>{counter}</method>')  # fmt: skip

    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd">'
        '<report name="t"><package name="org/apache/kafka/server">'
        f'<class name="{MANAGER}" sourcefilename="ClientMetricsManager.java">'
        + method("processPushTelemetryRequest", 10, branch)
        + method("lambda$processPushTelemetryRequest$0", 13)
        + method("close", 20)
        + "</class>"
        f'<class name="{MANAGER}$ExpirationTimerTask" sourcefilename="ClientMetricsManager.java">'
        + method("run", 30)
        + '</class><sourcefile name="ClientMetricsManager.java">'
        + line_xml
        + "</sourcefile></package></report>"
    ).encode()


RUN = parse_xml(xml({10: (0, 5, 0, 0), 11: (0, 3, 2, 2), 13: (0, 2, 0, 0), 20: (4, 0, 0, 0),
                     30: (0, 1, 0, 0)}))  # fmt: skip
PUSH = parse_xml(xml({10: (0, 5, 0, 0), 11: (0, 3, 3, 1), 13: (0, 2, 0, 0), 20: (4, 0, 0, 0),
                      30: (3, 0, 0, 0)}))  # fmt: skip
THROTTLE = parse_xml(xml({10: (0, 5, 0, 0), 11: (0, 3, 3, 1), 13: (2, 0, 0, 0), 20: (4, 0, 0, 0),
                          30: (3, 0, 0, 0)}))  # fmt: skip
BETWEEN = parse_xml(xml({10: (5, 0, 0, 0), 11: (3, 0, 4, 0), 13: (2, 0, 0, 0), 20: (4, 0, 0, 0),
                         30: (0, 1, 0, 0)}))  # fmt: skip


def test_parse_reads_classes_methods_and_lines() -> None:
    cls = RUN.classes[MANAGER]
    assert cls.sourcefile == FILE
    assert cls.methods[0].name == "processPushTelemetryRequest"
    assert cls.methods[0].counters["BRANCH"] == (2, 2)
    line = RUN.lines[FILE][11]
    assert (line.mi, line.ci, line.mb, line.cb, line.status) == (0, 3, 2, 2, "partly")
    assert RUN.lines[FILE][20].status == "missed" and RUN.lines[FILE][10].status == "covered"


def test_spans_end_at_the_next_method_not_at_a_lambda() -> None:
    spans = method_spans(RUN)
    # the line after their last code (13, 20): not the code-less lines up to the next method
    assert spans[(MANAGER, "processPushTelemetryRequest", "()V")] == (10, 14)
    assert spans[(MANAGER, "close", "()V")] == (20, 21)
    assert spans[(f"{MANAGER}$ExpirationTimerTask", "run", "()V")] == (30, 30)


def test_each_line_names_the_cases_that_reached_it() -> None:
    cases = attribute([("kip714.push.accepted", PUSH), ("kip714.push.throttle.early", THROTTLE),
                       ("(between cases)", BETWEEN)])  # fmt: skip
    assert cases[(FILE, 11)] == [("kip714.push.accepted", 1), ("kip714.push.throttle.early", 1)]
    assert cases[(FILE, 13)] == [("kip714.push.accepted", 0)]  # the throttled push stops before
    assert cases[(FILE, 30)] == [("(between cases)", 0)]  # the expiry timer runs on its own
    assert (FILE, 20) not in cases


def test_model_keeps_chosen_methods_with_their_lambdas() -> None:
    model = build_model(RUN, attribute([("kip714.push.accepted", PUSH)]),
                        sources={FILE: "\n".join(f"line {i}" for i in range(1, 41))})  # fmt: skip
    manager, timer = model["classes"]
    assert timer["name"] == f"{MANAGER}$ExpirationTimerTask"
    assert [m["name"] for m in manager["methods"]] == ["processPushTelemetryRequest", "close"]
    push = manager["methods"][0]
    assert push["counters"]["BRANCH"] == [2, 2] and push["lines"] == [[10, 14]]
    row = model["files"][FILE]["lines"]["11"]
    assert row["text"] == "line 11" and row["status"] == "partly"
    assert row["cases"] == [["kip714.push.accepted", 1]]
    assert model["totals"]["BRANCH"] == [2, 2]
    assert missed_branches(model) == [(MANAGER, "processPushTelemetryRequest", 11, 2, 2)]


def test_section_and_page_show_counts_marks_and_cases() -> None:
    model = build_model(RUN, attribute([("kip714.push.accepted", PUSH)]), sources={FILE: None})
    model.update(target="apache:4.4.0", jacoco="0.8.13", nodes=1, cases=["kip714.push.accepted"],
                 sources_missing=["kafka-server"], release="4.4.0", lost=[])  # fmt: skip
    section = render_coverage_section([model])
    assert 'id="coverage"' in section and "ClientMetricsManager" in section
    assert "50% <span" in section  # 2 of 4 branches
    page = render_coverage_page(model)
    assert '<tr class="partly"><td class="nr">11</td><td class="br">2/4</td>' in page
    assert '<tr class="missed"><td class="nr">20</td>' in page
    assert "kip714.push.accepted (1 br)" in page
    assert "no -sources jar of kafka-server" in page
