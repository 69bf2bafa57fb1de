"""The "Coverage" section of the HTML report, and one page per target with the source.

`coverage.json` (kconform/plugin/coverage.py) holds the chosen Apache classes' JaCoCo
counters, their lines and which cases reached each line. The index gets a section: line and
branch coverage per class and method. The page (`coverage-<target>.html`) lists each chosen
method's lines, coloured as JaCoCo colours them (green covered, yellow partly covered: a
branch or an instruction missed, red missed), with the branches covered of each line's
branches and the cases that reached it. When the release's `-sources` jar is not on Maven
Central the page says so and shows the line numbers and counters without text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kconform.fixtures.coverage.accounted import BROKER, KINDS
from kconform.reports.common import slug
from kconform.reports.html_style import esc, page

STYLE = """<style>
.cov td.pct{text-align:right;white-space:nowrap}.cov .bar{position:absolute;left:0;top:0;
height:8px;background:#3a9e4f}.cov .barbg{position:relative;display:inline-block;width:60px;
height:8px;background:#d3343a;vertical-align:middle;margin-right:5px}
table.src{border-collapse:collapse;width:100%}table.src td{border:0;padding:0 6px;
font:12px/1.35 ui-monospace,"DejaVu Sans Mono",monospace;white-space:pre;vertical-align:top}
table.src td.nr{color:#5f6b76;text-align:right;width:1%}table.src td.br{width:1%;color:#333}
table.src td.code{min-width:28px}
tr.covered td.code{background:#d5f0dc}tr.partly td.code{background:#fbefc0}
tr.missed td.code{background:#f8d7d9}td.cases{white-space:nowrap!important;color:#1459a8;
max-width:420px;overflow:hidden;text-overflow:ellipsis}td.cases .why{color:#5f4b00;
font-family:system-ui,sans-serif}td.cases .why.none{color:#b3141b;font-weight:600}
</style>"""
MAX_CASES_SHOWN = 4
ACCOUNTED_IN = BROKER.source  # coverage.json files written before `accounted_in` are a broker's


def _pct(pair: Sequence[int] | None) -> str:
    missed, covered = (pair or (0, 0))[0], (pair or (0, 0))[1]
    total = missed + covered
    if not total:
        return '<td class="pct muted">&ndash;</td>'
    share = covered / total
    bar = f'<span class="barbg"><span class="bar" style="width:{share * 60:.0f}px"></span></span>'
    return (
        f'<td class="pct">{bar}{share:.0%} <span class="muted small">{covered}/{total}</span></td>'
    )


def page_name(model: Mapping[str, Any]) -> str:
    return f"coverage-{slug(str(model.get('target', 'target')))}.html"


def _short(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def render_coverage_section(models: Sequence[Mapping[str, Any]]) -> str:
    """`<section id="coverage">`: per target, per chosen class and method, lines and branches."""
    parts = [f'<section id="coverage" class="cov">{STYLE}<h2>Coverage of Apache\'s KIP-511 / '
             "KIP-714 code (JaCoCo)</h2>"]  # fmt: skip
    for model in models:
        totals = model.get("totals", {})
        why = _why_by_method(model)
        parts.append(
            f'<h3>{esc(model.get("target"))} <span class="muted small">(JaCoCo '
            f"{esc(model.get('jacoco'))}, {esc(_units(model))}, "
            f'{_case_count(model)} case(s); <a href="{esc(page_name(model))}">source '
            "with the cases that reach each line</a>)</span></h3>"
            '<table class="counts"><thead><tr><th>class / method</th><th>lines</th>'
            f"<th>branches</th>{'<th>missed branches: why</th>' if why else ''}</tr></thead>"
            "<tbody><tr><th>all chosen code</th>"
            f"{_pct(totals.get('LINE'))}{_pct(totals.get('BRANCH'))}{'<td></td>' if why else ''}"
            "</tr>"
        )
        for cls in model.get("classes", []):
            anchor = slug(cls["name"])
            parts.append(
                f'<tr><td><a href="{esc(page_name(model))}#{anchor}"><b>{esc(_short(cls["name"]))}'
                f'</b></a> <span class="muted small">{esc(cls["why"])}</span></td>'
                f"{_pct(cls['counters'].get('LINE'))}{_pct(cls['counters'].get('BRANCH'))}"
                f"{'<td></td>' if why else ''}</tr>"
            )
            for m in cls["methods"]:
                cell = why.get((cls["name"], m["name"]), "<td></td>") if why else ""
                parts.append(
                    f"<tr><td>&nbsp;&nbsp;<code>{esc(m['name'])}</code></td>"
                    f"{_pct(m['counters'].get('LINE'))}{_pct(m['counters'].get('BRANCH'))}"
                    f"{cell}</tr>"
                )
        parts.append("</tbody></table>")
        for note in _notes(model):
            parts.append(f'<p class="muted small">{note}</p>')
    parts.append("</section>")
    return "".join(parts)


def _case_count(model: Mapping[str, Any]) -> int:
    """The cases dumped, not the `(startup)` and `(between cases)` dumps."""
    return sum(1 for c in model.get("cases", []) if not str(c).startswith("("))


def _why_by_method(model: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(class, method) -> a cell: its missed branches counted by kind, each line's reason on
    hover (fixtures/coverage/accounted.py); empty when the model has no accounting."""
    rows: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in model.get("missed") or []:
        rows.setdefault((row["class"], row["method"]), []).append(row)
    out = {}
    for key, lines in rows.items():
        kinds: dict[str, int] = {}
        hover = []
        for row in lines:
            for kind, n, why in row["why"]:
                kinds[kind] = kinds.get(kind, 0) + int(n)
                hover.append(f"{row['line']} ({n} br, {kind}): {why}")
            if row.get("unaccounted"):
                kinds["not accounted for"] = kinds.get("not accounted for", 0) + row["unaccounted"]
                hover.append(f"{row['line']} ({row['unaccounted']} br): not accounted for")
        text = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        out[key] = f'<td class="small" title="{esc(chr(10).join(hover))}">{esc(text)}</td>'
    return out


def _units(model: Mapping[str, Any]) -> str:
    """What the dumps came from: "1 node(s)", "37 client JVM(s)" (older files: nodes only)."""
    return str(model.get("units") or f"{model.get('nodes')} node(s)")


def _notes(model: Mapping[str, Any]) -> list[str]:
    notes = []
    if model.get("sources_missing"):
        notes.append(
            f"Maven Central has no -sources jar of {esc(', '.join(model['sources_missing']))} "
            f"{esc(model.get('release'))}: the source page shows line numbers and counters only."
        )
    notes += [esc(n) for n in model.get("notes", [])]
    if model.get("lost"):
        notes.append("Dumps lost (their counts are missing): " + esc("; ".join(model["lost"])))
    if model.get("summary"):
        notes.append("The run's counters only (--coverage-summary): no per-case attribution "
                     "and no source text.")  # fmt: skip
    missed = model.get("missed")
    if missed is not None:
        branches = sum(int(r["missed"]) for r in missed)
        open_rows = [r for r in missed if r.get("unaccounted")]
        where = f"{model.get('accounted_in') or ACCOUNTED_IN}, docs/coverage.md"
        if not open_rows:
            notes.append(
                f"Missed branches: {branches} on {len(missed)} lines, every one "
                f"accounted for ({where}){_by_kind(missed)}; the source page gives each line's "
                "reason."
            )
        else:
            notes.append(
                f"Missed branches: {branches} on {len(missed)} lines{_by_kind(missed)}; "
                f"{sum(int(r['unaccounted']) for r in open_rows)} on {len(open_rows)} lines not "
                f"accounted for in {where}: "
                + esc(", ".join(f"{_short(r['class'])}:{r['line']}" for r in open_rows))
            )
    return notes


def _by_kind(missed: Sequence[Mapping[str, Any]]) -> str:
    """The ", by kind: 21 dead, 4 race, ..." of a run's missed branches (unaccounted ones too)."""
    kinds: dict[str, int] = {}
    for row in missed:
        for kind, n, _ in row["why"]:
            kinds[kind] = kinds.get(kind, 0) + int(n)
        if row.get("unaccounted"):
            kinds["not accounted for"] = kinds.get("not accounted for", 0) + int(row["unaccounted"])
    order = [*KINDS, "not accounted for"]
    ranked = sorted(kinds.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
    return (", by kind: " + ", ".join(f"{n} {kind}" for kind, n in ranked)) if kinds else ""


def _why_missed(entries: Sequence[Sequence[Any]] | None, row: Mapping[str, Any]) -> str:
    """The reasons a line's missed branches are missed (fixtures/coverage/accounted.py)."""
    if not row.get("mb") or entries is None:
        return ""
    parts = [f"{esc(kind)} ({n} br): {esc(why)}" for kind, n, why in entries]
    listed = sum(int(n) for _, n, _ in entries)
    if listed < int(row["mb"]):
        parts.append(f'<span class="why none">{int(row["mb"]) - listed} br not accounted for'
                     "</span>")  # fmt: skip
    return '<div class="why">missed: ' + "; ".join(parts) + "</div>"


def _cases_cell(cases: Sequence[Sequence[Any]], why: str = "") -> str:
    if not cases:
        return f'<td class="cases">{why}</td>'
    names = [f"{c}" + (f" ({b} br)" if b else "") for c, b in cases]
    shown = ", ".join(esc(n) for n in names[:MAX_CASES_SHOWN])
    more = len(names) - MAX_CASES_SHOWN
    title = esc("\n".join(names))
    extra = f' <span class="muted">+{more}</span>' if more > 0 else ""
    # one line per source line (the rest on hover): the count first, where it is never cut
    count = f'<span class="muted">{len(names)}:</span> ' if len(names) > 1 else ""
    return f'<td class="cases" title="{title}">{count}{shown}{extra}{why}</td>'


def _branches(row: Mapping[str, Any]) -> str:
    total = int(row.get("mb", 0)) + int(row.get("cb", 0))
    return f"{row.get('cb', 0)}/{total}" if total else ""


def render_coverage_page(model: Mapping[str, Any]) -> str:
    """The page of one target: every chosen method's lines, coloured, with their cases."""
    files = model.get("files", {})
    body = [f"{STYLE}<h1>Coverage: {esc(model.get('target'))}</h1>",
            '<p><a href="index.html">&larr; report</a> &middot; green: covered, yellow: partly '
            "covered (a branch or an instruction missed), red: missed; <i>b/n</i>: branches "
            "covered of the line's branches; the cases that reached the line (and the branches "
            "each covered there) at the right; hover for all.</p>"]  # fmt: skip
    body += [f'<p class="muted">{n}</p>' for n in _notes(model)]
    accounted = (
        None if model.get("missed") is None
        else {(r["class"], int(r["line"])): r["why"] for r in model["missed"]}
    )  # fmt: skip
    for cls in model.get("classes", []):
        lines = files.get(cls["sourcefile"], {}).get("lines", {})
        body.append(f'<h2 id="{slug(cls["name"])}">{esc(cls["name"].replace("/", "."))}</h2>'
                    f'<p class="muted small">{esc(cls["sourcefile"])}: '
                    f"{esc(cls['why'])}</p>")  # fmt: skip
        for m in cls["methods"]:
            body.append(f"<h3><code>{esc(m['name'])}</code></h3>")
            rows = []
            for first, last in m["lines"]:
                for nr in range(first, last + 1):
                    row = lines.get(str(nr))
                    if row is None:
                        continue
                    text = row.get("text")
                    if text is None and "status" not in row:
                        continue  # no source and no code on this line: nothing to show
                    why = None if accounted is None else accounted.get((cls["name"], nr), [])
                    rows.append(
                        f'<tr class="{esc(row.get("status", ""))}"><td class="nr">{nr}</td>'
                        f'<td class="br">{_branches(row)}</td>'
                        f'<td class="code">{esc(text if text is not None else "")}</td>'
                        f"{_cases_cell(row.get('cases', []), _why_missed(why, row))}</tr>"
                    )
            body.append('<table class="src">' + "".join(rows) + "</table>")
    return page(f"kconform coverage {model.get('target')}", "\n".join(body))
