"""The static HTML report: matrix cells, case pages, escaping, self-containment, changes view."""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser
from pathlib import Path

from kconform.reports.common import fails_run
from kconform.reports.html import matrix_cell_id, write_html
from kconform.reports.html_case import case_file, hex_dump, subject_anchor
from kconform.reports.model import RunResults

VOID = {"meta", "link", "br", "hr", "img", "input", "col", "wbr"}


class _Balance(HTMLParser):
    """Fails on a closing tag that does not match the open one: catches broken markup."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids += [v for k, v in attrs if k == "id" and v]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()


def _check_markup(text: str) -> list[str]:
    parser = _Balance()
    parser.feed(text)
    parser.close()
    assert parser.stack == [], parser.stack
    assert len(parser.ids) == len(set(parser.ids)), "duplicate ids"
    return parser.ids


def _all_pages(out: Path) -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(out.rglob("*.html"))}


def test_index_has_one_cell_per_result_linking_to_its_case_page(run, tmp_path):
    index = write_html(run, tmp_path / "report")
    assert index == tmp_path / "report" / "index.html"
    text = index.read_text(encoding="utf-8")
    ids = _check_markup(text)
    for r in run.results:
        cell_id = matrix_cell_id(r.case_id, r.subject)
        assert cell_id in ids
        cell = re.search(rf'<td id="{re.escape(cell_id)}" class="([^"]*)"[^>]*>(.*?)</td>', text)
        assert cell is not None
        assert f"v-{r.verdict}" in cell.group(1).split()
        assert f'href="{case_file(r.case_id)}#{subject_anchor(r.subject)}"' in cell.group(2)
        page = (tmp_path / "report" / case_file(r.case_id)).read_text(encoding="utf-8")
        assert f'id="{subject_anchor(r.subject)}"' in page
    # a case a subject did not run is an explicit empty cell, not a missing one
    assert text.count('data-v="none"') == 3 * len({r.case_id for r in run.results}) - len(
        run.results
    )


def test_matrix_groups_rows_by_kip_and_shows_title_and_level(run, tmp_path):
    text = write_html(run, tmp_path).read_text(encoding="utf-8")
    kips = re.findall(r'<tbody class="kipgroup" data-kip="([^"]+)"', text)
    assert kips == ["KIP-511", "KIP-714", "KIP-977", "fuzz"]
    row = re.search(r'<tr class="case" id="row-kip714.push.cadence".*?</tr>', text)
    assert row is not None
    assert "Title of kip714.push.cadence" in row.group()
    assert '<span class="lvl lvl-SHOULD">SHOULD</span>' in row.group()


def test_subjects_side_by_side_with_their_kind(run, tmp_path):
    text = write_html(run, tmp_path).read_text(encoding="utf-8")
    assert re.findall(r'<th class="subj" data-subject="([^"]+)"', text) == [
        "reference", "librdkafka_mock", "confluent-kafka",
    ]  # fmt: skip
    assert '<th colspan="2">brokers</th><th colspan="1">clients</th>' in text
    assert "kconform reference broker" in text and "client_metrics_admin" in text


def test_summary_says_whether_ci_would_pass(run, tmp_path):
    text = write_html(run, tmp_path / "a").read_text(encoding="utf-8")
    assert 'id="ci-status">CI would FAIL<' in text
    assert "3 results fail the run" in text
    run.results = [r for r in run.results if not fails_run(r)]
    text = write_html(run, tmp_path / "b").read_text(encoding="utf-8")
    assert 'id="ci-status">CI would PASS<' in text
    assert "0.1.0" in text and "2026-11-18" in text  # version and start time (UTC)


def test_legend_explains_verdicts_and_levels(run, tmp_path):
    text = write_html(run, tmp_path).read_text(encoding="utf-8")
    legend = re.search(r'<div class="legend" id="legend-verdicts">.*?</div>', text)
    assert legend is not None
    for verdict in ("pass", "fail", "non-strict", "informational", "unsupported", "skipped"):
        assert f"v-{verdict}" in legend.group()
    assert "a violation is a fail and fails the run" in text  # MUST
    assert "a violation is non-strict" in text  # SHOULD


def test_filters_exist_but_are_hidden_until_javascript_runs(run, tmp_path):
    text = write_html(run, tmp_path).read_text(encoding="utf-8")
    assert '<form id="filters" hidden>' in text
    for verdict in ("pass", "fail", "error"):
        assert f'name="verdict" value="{verdict}" checked' in text
    for kip in ("KIP-511", "KIP-714", "KIP-977", "fuzz"):
        assert f'name="kip" value="{kip}" checked' in text
    assert "<script>" in text


def test_everything_is_escaped(run, nasty, tmp_path):
    run.results[0].title = 'A "quoted" <title> & more'
    run.results[1].expectations[0] = type(run.results[1].expectations[0])(
        what="<what>", expected="<exp>", observed={"k": "</td>"}, ok=False
    )
    run.results[1].wire_log[0]["note"] = "<note>"
    run.subjects[0]["capabilities"] = ["<cap>"]
    out = tmp_path / "report"
    write_html(run, out)
    for path, text in _all_pages(out).items():
        assert "<script>alert" not in text, path
        for raw in ("<title> &", "<what>", "<exp>", "<note>", "<cap>", "'</td>'"):
            assert raw not in text, (path, raw)
        _check_markup(text)
    page = (out / case_file("kip714.push.terminating")).read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;quoted&#x27;" in page


def test_no_external_references(sample_run, run, tmp_path):
    for name, results in (("fixture", run), ("sample", sample_run)):
        out = tmp_path / name
        write_html(results, out)
        for path, text in _all_pages(out).items():
            assert "http" not in text, path
            assert "//cdn" not in text, path
            for ref in re.findall(r'(?:src|href)="([^"]*)"', text):
                assert ref.startswith(("#", "cases/", "../index.html", "../rules.html", "data:")), (
                    path,
                    ref,
                )


def test_each_case_page_links_its_rules_into_the_reports_rule_book(run, tmp_path):
    from kconform.rules import RULES

    write_html(run, tmp_path)
    book = (tmp_path / "rules.html").read_text(encoding="utf-8")
    for rule_id in RULES:
        assert f'id="{rule_id}"' in book
    linked = 0
    for result in run.results:
        page = (tmp_path / "cases" / f"{result.case_id}.html").read_text(encoding="utf-8")
        for rule_id in result.rules:
            assert f'href="../rules.html#{rule_id}"' in page
            linked += 1
    assert linked, "the fixture run's results name their rules"


def test_interrupted_and_unfinished_runs_show_a_banner(run, tmp_path):
    run.interrupted = True
    text = write_html(run, tmp_path / "a").read_text(encoding="utf-8")
    assert 'id="interrupted"' in text and "interrupted" in text
    run.interrupted, run.finished = False, None
    text = write_html(run, tmp_path / "b").read_text(encoding="utf-8")
    assert 'id="unfinished"' in text
    run.finished = run.started + 1
    assert 'class="banner' not in write_html(run, tmp_path / "c").read_text(encoding="utf-8")


def test_empty_run_renders(tmp_path):
    empty = RunResults(kconform_version="0.1.0", started=1.0, finished=2.0)
    text = write_html(empty, tmp_path).read_text(encoding="utf-8")
    _check_markup(text)
    assert 'id="empty"' in text and "No case ran" in text
    assert list((tmp_path / "cases").iterdir()) == []


def test_changed_since_previous_run_lists_old_and_new(run, tmp_path):
    previous = copy.deepcopy(run)
    previous.results[0].verdict = "fail"  # kip511.apiversions.valid on reference
    text = write_html(run, tmp_path, previous=previous).read_text(encoding="utf-8")
    row = re.search(
        r'<tr class="change" data-case="kip511.apiversions.valid" data-subject="reference">'
        r".*?</tr>",
        text,
    )
    assert row is not None
    assert re.search(r"v-fail.*?→.*?v-pass.*?previous run", row.group())
    cell = matrix_cell_id("kip511.apiversions.valid", "reference")
    assert re.search(rf'id="{cell}" class="v v-pass chg"', text)
    page = (tmp_path / case_file("kip511.apiversions.valid")).read_text(encoding="utf-8")
    assert "previous run" in page


def test_changed_since_baseline_recorded_or_given(run, tmp_path):
    given = {"reference": {"kip714.push.cadence": "pass"}}
    text = write_html(run, tmp_path, baseline=given).read_text(encoding="utf-8")
    changed = re.findall(r'<tr class="change" data-case="([^"]+)" data-subject="([^"]+)"', text)
    assert ("kip714.configs.changed", "librdkafka_mock") in changed  # recorded in the result
    assert ("kip714.push.cadence", "reference") in changed  # given to write_html
    assert ("kip714.configs.invalid", "librdkafka_mock") not in changed  # as the baseline said


def test_case_page_shows_the_evidence(run, tmp_path):
    write_html(run, tmp_path)
    page = (tmp_path / case_file("kip511.apiversions.valid")).read_text(encoding="utf-8")
    _check_markup(page)
    assert "<code>kip511.apiversions.valid</code>" in page
    assert "Title of kip511.apiversions.valid" in page
    assert "KIP-714 Broker behaviour" in page and "lvl-MUST" in page
    assert "librdkafka mock cluster 2.16.0" in page
    assert '<td class="bad">✗ BAD</td>' in page and '<td class="ok">✓ ok</td>' in page
    assert "<pre>0</pre>" in page and "<pre>42</pre>" in page  # expected vs observed
    assert '<td class="t">+0.0 ms</td>' in page and '<td class="t">+3.0 ms</td>' in page
    assert 'class="dir d-req"' in page and 'class="dir d-resp"' in page
    assert "ApiVersions (18) v3" in page and "case1-&gt;broker 1" in page
    assert '<span class="note">throttled</span>' in page
    assert "<details><summary>raw, 28 bytes</summary>" in page
    assert "00000000  00 12 00 03" in page
    assert 'href="../index.html#row-kip511.apiversions.valid"' in page


def test_case_page_of_an_unsupported_result_explains_it(run, tmp_path):
    write_html(run, tmp_path)
    page = (tmp_path / case_file("kip714.push.cadence")).read_text(encoding="utf-8")
    assert "needs capability telemetry_sink" in page
    assert "No expectation was recorded" in page and "No frames were exchanged" in page


def test_hex_dump_reads_like_xxd():
    assert hex_dump("41424300ff") == f"00000000  41 42 43 00 ff{' ' * 33}  ABC.."
    assert hex_dump("zz") == "zz"
    assert len(hex_dump("00" * 40).splitlines()) == 3


def test_stale_case_pages_are_removed(run, tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "kip1.old.html").write_text("old")
    write_html(run, tmp_path)
    assert not (tmp_path / "cases" / "kip1.old.html").exists()


def test_sample_run_renders_every_result(sample_run, tmp_path):
    text = write_html(sample_run, tmp_path).read_text(encoding="utf-8")
    ids = set(_check_markup(text))
    assert all(matrix_cell_id(r.case_id, r.subject) in ids for r in sample_run.results)
    assert len(list((tmp_path / "cases").glob("*.html"))) == len(
        {r.case_id for r in sample_run.results}
    )


def test_thousands_of_cases_keep_the_index_small(run, make_result, tmp_path):
    big = "ApiVersionsResponse v3 " + "{ApiKey=1 MinVersion=0 MaxVersion=16}, " * 40
    results = []
    for i in range(2000):
        for subject, verdict in (("reference", "pass"), ("librdkafka_mock", "fail")):
            r = make_result(f"kip714.bulk.case{i:04d}", subject, verdict)
            r.wire_log = [dict(e, summary=f"WIRE{i} {big}") for e in r.wire_log * 2]
            results.append(r)
    run.results = results
    index = write_html(run, tmp_path)
    text = index.read_text(encoding="utf-8")
    assert "WIRE1 " not in text  # wire logs live on the case pages only
    assert index.stat().st_size < 2000 * 1000  # about 1 KB per case row
    assert "WIRE1999 " in (tmp_path / case_file("kip714.bulk.case1999")).read_text()


def test_extra_sections_such_as_the_volume_comparison_end_the_index(run, tmp_path):
    from kconform.runner import _volume_sections

    section = '<section id="volumes"><h2>Volumes</h2></section>'
    index = write_html(run, tmp_path, extra_sections=[section]).read_text()
    assert section in index and index.index(section) < index.index("</body>")
    (tmp_path / "volumes" / "reference").mkdir(parents=True)
    (tmp_path / "volumes" / "reference" / "volumes-summary.json").write_text("{not json")
    assert _volume_sections(tmp_path) == []  # an unreadable summary is reported, not fatal


def test_case_pages_show_values_as_a_person_reads_them(tmp_path):
    """Not Python's repr: expected `'(recorded)'`, observed `{'n': 3, 'min': 0.9}` (issue 41)."""
    from kconform.engine.results import RECORDED, CaseResult, Expectation
    from kconform.reports.html_case import case_file

    result = CaseResult(
        "kip714.client.cadence.x", "t", "s", "INFO", "KIP-714", "java", "client", "i", "1",
        "informational", expectations=[
            Expectation("gaps", RECORDED, {"n": 3, "min": 0.9, "max": 1.1}, True),
            Expectation("ErrorCode", "NONE (0)", "NONE (0)", True),
            Expectation("ids", [], ["kc-1", "kc-2"], False),
        ],
    )  # fmt: skip
    write_html(RunResults("0", 0.0, results=[result]), tmp_path)
    page = (tmp_path / case_file(result.case_id)).read_text(encoding="utf-8")
    assert "(recorded)" not in page and "{" not in page.split("<tbody>")[1].split("</tbody>")[0]
    assert '<td class="muted">recorded</td>' in page and "nothing: only recorded" in page
    assert "<pre>n: 3\nmin: 0.9\nmax: 1.1</pre>" in page
    assert "<pre>NONE (0)</pre>" in page and "&#x27;" not in page.split('class="expect"')[1]
    assert "<pre>(none)</pre>" in page and "<pre>kc-1, kc-2</pre>" in page
