"""The static HTML report: a matrix of cases and subjects and a page of evidence per case.

Modelled on Autobahn|Testsuite's report: one compact matrix with a coloured cell per case and
implementation, so a reader sees at once where implementations disagree, then clicks a cell for
expected-vs-observed and the decoded wire log. The directory is self-contained (inline CSS and
JS, no network reference), so a CI artifact opens as it is. The index never embeds wire logs:
it stays small with thousands of cases.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from kconform.engine.results import CaseResult
from kconform.reports.common import (
    LEVEL_MEANING,
    VERDICT_LEGEND,
    VERDICT_MEANING,
    VERDICT_SHORT,
    Change,
    Subject,
    case_groups,
    changes,
    expected_non_pass,
    fails_run,
    interruption,
    not_judged,
    run_passes,
    slug,
    subjects,
)
from kconform.reports.html_case import case_file, render_case, subject_anchor
from kconform.reports.html_style import FILTER_JS, chip, esc, level_badge, page
from kconform.reports.model import VERDICTS, RunResults, baseline_allows
from kconform.reports.rulebook import render_html

CHANGES_OPEN_UP_TO = 40  # a longer list starts collapsed so the matrix stays near the top


def write_html(
    results: RunResults,
    out_dir: Path,
    *,
    previous: RunResults | None = None,
    baseline: dict[str, dict[str, str]] | None = None,
    extra_sections: Sequence[str] = (),
    lead: str = "",
) -> Path:
    """Write `index.html`, `cases/*.html` and `rules.html` (the rule book every case page
    links to) under `out_dir`; return the index's path.

    `previous` is an earlier run to diff verdicts against; `baseline` is {subject: {case_id:
    verdict}} (as baseline files say), on top of the baseline recorded in each result.
    `extra_sections` are HTML fragments appended to the index (the volume comparison);
    `lead` one shown first, in place of the CI status (`kconform certify`'s certificate, whose
    headline is the run's answer: a second one beside it would contradict it).
    """
    out_dir = Path(out_dir)
    cases_dir = out_dir / "cases"
    cases_dir.mkdir(parents=True, exist_ok=True)
    baseline = baseline or {}
    columns = subjects(results)
    order = [s.name for s in columns]
    groups = case_groups(results.results)
    moved = changes(results, previous, baseline)
    before = {(c.case_id, c.subject): c.old for c in moved if c.against == "previous run"}
    previous_verdicts = {k: v for k, v in before.items() if v is not None}
    written = set()
    for cases in groups.values():
        for case_id, by_subject in cases.items():
            name = case_file(case_id)
            written.add(Path(name).name)
            html_text = render_case(case_id, by_subject, order, previous_verdicts, baseline)
            _write(out_dir / name, html_text)
    for stale in cases_dir.glob("*.html"):  # pages of cases this run no longer has
        if stale.name not in written:
            stale.unlink()
    _write(out_dir / "rules.html", render_html())
    index = out_dir / "index.html"
    comparable = previous is not None or bool(baseline)
    page = render_index(results, columns, groups, moved, comparable, lead)
    if extra_sections:  # inside <main>, so they get the page's margins as the matrix does
        head, end, tail = page.rpartition("</main>")
        page = head + "".join(extra_sections) + end + tail
    _write(index, page)
    return index


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def render_index(
    results: RunResults,
    columns: list[Subject],
    groups: dict[str, dict[str, dict[str, CaseResult]]],
    moved: list[Change],
    comparable: bool,
    lead: str = "",
) -> str:
    """The index page: summary, changes, legend, filters and the matrix (no wire logs)."""
    body = [
        "<h1>kconform conformance report</h1>",
        _banner(results),
        lead,
        _run_summary(results, ci=not lead),
        _subjects_table(columns, ci=not lead),
        _changes(moved, comparable or any(r.baseline is not None for r in results.results)),
        _matrix(columns, groups, {(c.case_id, c.subject) for c in moved}),
    ]
    return page("kconform report", "\n".join(b for b in body if b), script=FILTER_JS)


def _banner(results: RunResults) -> str:
    if results.interrupted:
        return (
            '<div class="banner warn" id="interrupted">⚠ This run was interrupted '
            f"{interruption(results)}: the results are partial. Cases that had not run yet are "
            "missing from the matrix; a subject none of whose cases had run is listed as NOT "
            "RUN.</div>"
        )
    if results.finished is None:
        return (
            '<div class="banner warn" id="unfinished">⚠ This run has not finished (or stopped '
            "without saying so): the results are partial.</div>"
        )
    return ""


def _when(unix: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(unix)) if unix else "—"


def _run_summary(results: RunResults, *, ci: bool = True) -> str:
    """When, how long, which kconform; and (`ci`) whether CI would pass, with why."""
    ok = run_passes(results)
    failing = sum(fails_run(r) for r in results.results)
    unjudged = not_judged(results)
    if ok:
        why = "no result fails the run"
    elif failing:
        why = f"{failing} result{'s' * (failing != 1)} fail the run"
    elif results.interrupted or unjudged is None:
        why = "the run did not complete"
    else:
        why = unjudged
    status = "CI would PASS" if ok else "CI would FAIL"
    duration = f"{results.finished - results.started:.1f} s" if results.finished else "—"
    cases = len({r.case_id for r in results.results})
    verdict = (f'<span class="status {"ok" if ok else "bad"}" id="ci-status">{status}</span>'
               f"<span>{esc(why)}</span>") if ci else ""  # fmt: skip
    return (
        '<div class="runmeta">'
        f"{verdict}"
        f"<span><b>started</b> {esc(_when(results.started))}</span>"
        f"<span><b>finished</b> {esc(_when(results.finished))}</span>"
        f"<span><b>duration</b> {esc(duration)}</span>"
        f"<span><b>kconform</b> {esc(results.kconform_version)}</span>"
        f"<span><b>{cases}</b> cases, <b>{len(results.results)}</b> results</span>"
        "</div>"
    )


def _subjects_table(columns: list[Subject], *, ci: bool = True) -> str:
    """A row per subject; `ci`: its CI column (a certify run's certificate is its one verdict)."""
    if not columns:
        return '<p class="muted" id="empty">No case ran: there is nothing to show.</p>'
    head = "".join(f'<th title="{esc(VERDICT_MEANING[v])}">{chip(v)}</th>' for v in VERDICTS)
    rows = []
    for s in columns:
        caps = "".join(f'<span class="cap">{esc(c)}</span>' for c in s.capabilities) or (
            '<span class="muted">capabilities: none</span>' if s.kind == "client" else ""
        )
        counts = "".join(_count_cell(s, v) for v in VERDICTS)
        if s.failing:
            status = chip("fail", "FAIL")
        elif s.not_run:
            status = chip("error", "NOT RUN")  # it fails the run: nothing about it was judged
        else:
            status = chip("pass", "ok")
        rows.append(
            f'<tr data-subject="{esc(s.name)}"><th>{_heading(s)}</th><td>{esc(s.kind)}</td>'
            f'<td class="impl"><div>{esc(s.implementation)} <span class="mono">{esc(s.version)}'
            f'</span>{_lock_note(s)}<div class="caps">{caps}</div></div></td>'
            f'{counts}<td class="n">{s.total}</td>{f"<td>{status}</td>" if ci else ""}</tr>'
        )
    return (
        "<h2>Subjects</h2>"
        '<table class="counts"><thead><tr><th>subject</th><th>kind</th>'
        f"<th>implementation, version, capabilities</th>{head}<th>total</th>"
        f"{'<th>CI</th>' if ci else ''}</tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _heading(subject: Subject) -> str:
    """A subjects-table row's head: its name, or what a driver named by path said it is, the
    path below it in small type."""
    if subject.heading == subject.name:
        return esc(subject.name)
    return f'{esc(subject.heading)}<div class="mono small muted">{esc(subject.name)}</div>'


def _column_head(subject: Subject) -> str:
    """A matrix column's head above its version: the name, or the implementation of a driver
    named by its path (the path is the column's title)."""
    return subject.name if subject.heading == subject.name else subject.implementation


def _column_title(subject: Subject) -> str:
    return subject.implementation if subject.heading == subject.name else subject.name


def _lock_note(subject: Subject) -> str:
    """The digest of the dependency lock a subject was built from, beside its version."""
    if not subject.lock:
        return ""
    title = "digest of the committed dependency lock it was built from"
    return f' <span class="mono lock" title="{title}">lock {esc(subject.lock)}</span>'


def _count_cell(subject: Subject, verdict: str) -> str:
    """A subject's count of a verdict: the unexpected ones, and apart, muted, those a baseline
    expects (the librdkafka mock's known fails are not news)."""
    count, expected = subject.counts.get(verdict, 0), subject.expected.get(verdict, 0)
    if not expected:
        return f'<td class="n{" z" if not count else ""}">{count}</td>'
    shown = subject.unexpected(verdict)
    return (
        f'<td class="n{" z" if not shown else ""}" title="{shown} unexpected, {expected} as the '
        f'baseline expects">{shown}<span class="exp"> +{expected} expected</span></td>'
    )


def _changes(moved: list[Change], comparable: bool) -> str:
    if not moved:
        if not comparable:
            return ""
        return (
            '<h2 id="changes">Changed verdicts</h2>'
            '<p class="muted">No verdict changed since the previous run or baseline.</p>'
        )
    rows = []
    for c in moved:
        link = f"{case_file(c.case_id)}#{subject_anchor(c.subject)}"
        old = chip(c.old) if c.old is not None else chip("skipped", "new case")
        rows.append(
            f'<tr class="change" data-case="{esc(c.case_id)}" data-subject="{esc(c.subject)}">'
            f'<td><a href="{esc(link)}"><code>{esc(c.case_id)}</code></a></td>'
            f"<td>{esc(c.subject)}</td><td>{old}</td>"
            f'<td class="arrow">→</td><td>{chip(c.new)}</td>'
            f'<td class="muted">since {esc(c.against)}</td></tr>'
        )
    is_open = " open" if len(moved) <= CHANGES_OPEN_UP_TO else ""
    return (
        f'<h2 id="changes">Changed verdicts <span class="muted small">{len(moved)}</span></h2>'
        f"<details{is_open}><summary>cases whose verdict differs from the previous run or "
        "the baseline (old → new)</summary>"
        '<table class="changes"><thead><tr><th>case</th><th>subject</th><th>old</th><th></th>'
        f"<th>new</th><th>against</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</details>"
    )


def _legend() -> str:
    verdicts = "".join(
        f'<span class="item" title="{esc(VERDICT_MEANING[v])}">{chip(v, VERDICT_SHORT[v])}'
        f"{esc(VERDICT_LEGEND[v])}</span>"
        for v in VERDICTS
    )
    levels = "".join(
        f'<span class="item">{level_badge(level)}{esc(meaning)}</span>'
        for level, meaning in LEVEL_MEANING.items()
    )
    return (
        f'<div class="legend" id="legend-verdicts">{verdicts}</div>'
        f'<div class="legend" id="legend-levels">{levels}'
        '<span class="item"><span class="chgdemo"></span>'
        "verdict changed since the previous run or baseline</span>"
        f'<span class="item">{chip("exp", "fail exp.")}a fail, error or non-strict the '
        "baseline expects (a known deviation; does not fail the run)</span></div>"
    )


def _filters(groups: dict[str, dict[str, dict[str, CaseResult]]]) -> str:
    verdicts = "".join(
        f'<label><input type="checkbox" name="verdict" value="{esc(v)}" checked> {chip(v)}</label>'
        for v in VERDICTS
    )
    kips = "".join(
        f'<label><input type="checkbox" name="kip" value="{esc(slug(k))}" checked> {esc(k)}</label>'
        for k in groups
    )
    return (
        '<form id="filters" hidden>'
        f"<fieldset><legend>verdict</legend>{verdicts}"
        '<button type="button" data-set="verdict:fail,error,non-strict">problems</button>'
        '<button type="button" data-set="verdict:all">all</button></fieldset>'
        f"<fieldset><legend>KIP</legend>{kips}"
        '<button type="button" data-set="kip:all">all</button>'
        '<button type="button" data-set="kip:none">none</button></fieldset>'
        '<fieldset><label><input type="checkbox" name="changed"> only changed</label>'
        '<input type="search" name="q" placeholder="case id or title contains…"></fieldset>'
        '<span class="muted"><b id="shown"></b> cases shown</span>'
        "</form>"
    )


def matrix_cell_id(case_id: str, subject: str) -> str:
    """The DOM id of a matrix cell, stable so tests and bookmarks can find it."""
    return f"m-{slug(case_id)}--{slug(subject)}"


def _matrix(
    columns: list[Subject],
    groups: dict[str, dict[str, dict[str, CaseResult]]],
    changed: set[tuple[str, str]],
) -> str:
    if not groups:
        return ""
    kinds: list[tuple[str, int]] = []
    for s in columns:
        if kinds and kinds[-1][0] == s.kind:
            kinds[-1] = (s.kind, kinds[-1][1] + 1)
        else:
            kinds.append((s.kind, 1))
    kind_row = "".join(f'<th colspan="{n}">{esc(k)}s</th>' for k, n in kinds)
    names = "".join(
        f'<th class="subj" data-subject="{esc(s.name)}" title="{esc(_column_title(s))}">'
        f'{esc(_column_head(s))}<span class="impl">{esc(s.version)}</span></th>'
        for s in columns
    )
    width = len(columns) + 2
    bodies = []
    for kip, cases in groups.items():
        rows = [
            f'<tr class="kip"><th colspan="{width}">{esc(kip)} '
            f'<span class="muted small">{len(cases)} cases</span></th></tr>'
        ]
        rows += [_row(case_id, by_subject, columns, changed)
                 for case_id, by_subject in cases.items()]  # fmt: skip
        bodies.append(
            f'<tbody class="kipgroup" data-kip="{esc(slug(kip))}">{"".join(rows)}</tbody>'
        )
    return (
        '<h2 id="matrix">Matrix</h2>'
        + _legend()
        + _filters(groups)
        + '<table class="matrix"><thead>'
        f'<tr class="kinds"><th class="case" rowspan="2">case</th>'
        f'<th rowspan="2">level</th>{kind_row}</tr>'
        f'<tr class="names">{names}</tr></thead>{"".join(bodies)}</table>'
    )


def _row(
    case_id: str,
    by_subject: dict[str, CaseResult],
    columns: list[Subject],
    changed: set[tuple[str, str]],
) -> str:
    any_result = next(iter(by_subject.values()))
    page_link = esc(case_file(case_id))
    cells = []
    for s in columns:
        result = by_subject.get(s.name)
        if result is None:
            cells.append('<td class="v v-none" data-v="none">not run</td>')
            continue
        chg = " chg" if (case_id, s.name) in changed else ""
        label = VERDICT_SHORT.get(result.verdict, result.verdict)
        drawn, tip = f"v-{result.verdict}", f"{s.name}: {result.verdict}"
        if expected_non_pass(result):  # muted: the baseline expects it, it is not news
            drawn, label = f"v-{result.verdict} exp", f"{result.verdict} exp."
            tip += ", as the baseline expects"
        if (
            result.baseline_why
            and result.baseline is not None
            and baseline_allows(result.baseline, result.verdict)
        ):
            tip += f" — known {s.name} deviation: {result.baseline_why[:200]}"
        elif result.message:
            tip += f" — {result.message[:160]}"
        cells.append(
            f'<td id="{esc(matrix_cell_id(case_id, s.name))}" class="v {esc(drawn)}'
            f'{chg}" data-v="{esc(result.verdict)}" title="{esc(tip)}">'
            f'<a href="{page_link}#{esc(subject_anchor(s.name))}">{esc(label)}</a></td>'
        )
    return (
        f'<tr class="case" id="row-{esc(slug(case_id))}" data-case="{esc(case_id)}">'
        f'<th class="case"><a href="{page_link}">{esc(case_id)}</a>'
        f'<div class="t" title="{esc(any_result.title)}">{esc(any_result.title)}</div></th>'
        f'<td class="level">{level_badge(any_result.level)}</td>{"".join(cells)}</tr>'
    )
