"""The soak page (`soak.html`): SLO verdicts, plots with the faults marked, tables, the diff.

Rendered from `soak-summary.json` (what `pipelines/soak_outputs.py` judged) and the tables
(Spark's, or the Python fallback's), so `kconform soak --report DIR` can re-render a run, and
`--compare PREVIOUS_DIR` adds the night-over-night diff: each SLO's verdict and headline figure
then and now, and the totals that moved. Self-contained like the main report: inline CSS and
SVG only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kconform.reports.common import fails_run, not_judged, run_passes
from kconform.reports.html_case import case_file
from kconform.reports.html_style import chip, esc, level_badge, page, verdict_banner
from kconform.reports.model import RunResults
from kconform.reports.soak_svg import STYLE, Marker, Series, chart

TOTALS_COMPARED = (
    ("pushes", "pushes"),
    ("pushes_accepted", "accepted"),
    ("rejected_117", "117 answers"),
    ("throttled", "throttled"),
    ("latency_p99_ms", "p99 latency ms"),
    ("peak_memory_mib", "peak broker memory MiB"),
    ("lost", "connections lost"),
)
PAGE_CSS = (
    STYLE + ".soak td,.soak th{padding:3px 8px;vertical-align:top}.soak .num{text-align:right}"
    ".soak .bad{color:#c92a2a;font-weight:600}.soak .good{color:#2b8a3e}"
    ".soak details{margin:2px 0}.soak .exp{font-size:12px;color:#495057}"
    ".soak td details summary{cursor:pointer}"
)


def compare(previous: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """The night-over-night diff: per SLO verdict and value, and the totals that moved."""
    before = {s["id"]: s for s in previous.get("slos", [])}
    slos = []
    for slo in current.get("slos", []):
        old = before.get(slo["id"], {})
        value, old_value = slo.get("value"), old.get("value")
        delta = (
            value - old_value
            if isinstance(value, int | float) and isinstance(old_value, int | float)
            else None
        )
        slos.append(
            {
                "id": slo["id"],
                "unit": slo.get("unit", ""),
                "verdict": slo["verdict"],
                "previous_verdict": old.get("verdict"),
                "value": value,
                "previous_value": old_value,
                "delta": delta,
                "changed": old.get("verdict") != slo["verdict"],
            }
        )
    totals = []
    now, then = current.get("totals", {}), previous.get("totals", {})
    for key, label in TOTALS_COMPARED:
        a, b = then.get(key), now.get(key)
        if isinstance(a, int | float) and isinstance(b, int | float):
            totals.append({"what": label, "previous": a, "value": b, "delta": b - a})
    return {
        "previous_run": previous.get("run_id"),
        "previous_started": previous.get("started"),
        "slos": slos,
        "totals": totals,
        "changed_verdicts": sum(1 for s in slos if s["changed"]),
    }


def outcome(results: RunResults) -> dict[str, Any]:
    """The soak's overall verdict as the exit code decides it (baselines applied), for the
    page's banner: passes, the SLOs that fail the run, why nothing could be judged."""
    return {
        "passes": run_passes(results),
        "failing": [r.case_id for r in results.results if fails_run(r)],
        "not_judged": None if results.interrupted else not_judged(results),
    }


def _banner(summary: Mapping[str, Any]) -> str:
    """SOAK PASSED / FAILED / NOT JUDGED on the first line. A summary written before the
    outcome was recorded is judged from its SLOs' verdicts (no baseline)."""
    slos = summary.get("slos", [])
    result = summary.get("outcome") or {
        "failing": [slo["id"] for slo in slos if slo.get("verdict") in ("fail", "error")],
        "not_judged": None,
    }
    failing, unjudged = result.get("failing") or [], result.get("not_judged")
    cut = summary.get("crash") or summary.get("interrupted")
    tail = " The run was cut short; what was measured is judged." if cut else ""
    if failing:
        ids = ", ".join(failing[:4]) + (f" and {len(failing) - 4} more" if len(failing) > 4 else "")
        return verdict_banner(
            "fail", "SOAK FAILED", f"{len(failing)} SLOs fail the run: {ids}.{tail}"
        )
    if unjudged or not result.get("passes", True):
        why = unjudged or "the run did not complete"
        return verdict_banner("notrun", "SOAK NOT JUDGED", f"{why}.{tail}")
    met = sum(1 for slo in slos if slo.get("verdict") == "pass")
    return verdict_banner(
        "pass", "SOAK PASSED", f"{met} of {len(slos)} SLOs met; none fails the run.{tail}"
    )


def render(
    summary: Mapping[str, Any],
    timeline: Sequence[Mapping[str, Any]],
    tables: Mapping[str, Any],
    diff: Mapping[str, Any] | None = None,
) -> str:
    """The whole soak page."""
    target = summary.get("target", {})
    title = f"Soak: {target.get('name', '?')} - {summary.get('clients')} clients"
    body = [
        f'<div class="soak"><style>{PAGE_CSS}</style>',
        f"<h1>{esc(title)}</h1>",
        _banner(summary),
        _facts(summary),
        _slo_table(summary.get("slos", []), summary.get("outcome")),
    ]
    body.append(_plots(summary, timeline))
    if diff is not None:
        body.append(_diff(diff))
    body.append(_faults(summary))
    body.append(_errors(tables.get("errors", [])))
    body.append(_real_clients(summary.get("real_clients") or []))
    body.append(_timeline_table(timeline, tables.get("engine", "python")))
    body.append(_notes(summary))
    body.append("</div>")
    return page(title, "".join(body))


def _facts(s: Mapping[str, Any]) -> str:
    target = s.get("target", {})
    items = {
        "target": f"{target.get('name')} ({target.get('implementation')} {target.get('version')})",
        "run": s.get("run_id"),
        "duration": f"{s.get('measured_s', 0):.0f} s of {s.get('duration_s', 0):.0f} s",
        "clients": f"{s.get('clients')} at start, "
        f"{s.get('totals', {}).get('clients_started', 0)} over the run",
        "PushIntervalMs": s.get("push_interval_ms"),
        "workers": s.get("workers") or "in-process",
        "shard": "/".join(map(str, s.get("shard", [0, 1]))),
    }
    facts = "".join(f"<span><b>{esc(k)}</b> {esc(v)}</span>" for k, v in items.items())
    state = ""
    if s.get("crash"):
        state = f'<p class="bad">The run crashed: {esc(s["crash"])}. What was measured is kept.</p>'
    elif s.get("interrupted"):
        state = '<p class="bad">The run was interrupted; what was measured is judged.</p>'
    links = (
        '<p class="small"><a href="index.html">report (matrix and case pages)</a> · '
        '<a href="results.json">results.json</a> · <a href="junit.xml">junit.xml</a> · '
        '<a href="soak-summary.json">soak-summary.json</a> · samples in <code>samples/</code></p>'
    )
    return f'<div class="runmeta">{facts}</div>{state}{links}'


def _slo_table(slos: Sequence[Mapping[str, Any]], outcome: Mapping[str, Any] | None = None) -> str:
    """One row per SLO; a fail or error the baseline expects (it fails no run, `outcome`) is
    drawn muted as `fail exp.`, as the report's matrix draws it, so it does not read as news
    under a SOAK PASSED banner."""
    failing = set(outcome.get("failing") or []) if outcome else None
    rows = []
    for slo in slos:
        verdict = slo["verdict"]
        expected = failing is not None and verdict in ("fail", "error") and slo["id"] not in failing
        drawn = chip("exp", f"{verdict} exp.") if expected else chip(verdict)
        exps = "".join(
            f'<div class="exp">{"" if e.get("ok") else "&#10007; "}{esc(e.get("what"))}: '
            f"expected {esc(e.get('expected'))}, observed {esc(e.get('observed'))}</div>"
            for e in slo.get("expectations", [])
        )
        message = f'<div class="exp">{esc(slo["message"])}</div>' if slo.get("message") else ""
        value = "" if slo.get("value") is None else f"{slo['value']:g} {slo.get('unit', '')}"
        evidence = (
            f"<details><summary>{esc(slo['title'])}</summary>{exps}</details>"
            if exps
            else f"<div>{esc(slo['title'])}</div>"
        )
        rows.append(
            f"<tr><td>{drawn}</td><td>{level_badge(slo['level'])}</td>"
            f'<td><a href="{esc(case_file(slo["id"]))}"><code>{esc(slo["id"])}</code></a>'
            f"{message}{evidence}</td>"
            f'<td class="num">{esc(value)}</td></tr>'
        )
    return (
        '<h2 id="slos">SLOs</h2><table class="counts"><tr><th>verdict</th><th>level</th>'
        f"<th>SLO</th><th>figure</th></tr>{''.join(rows)}</table>"
    )


def _markers(summary: Mapping[str, Any]) -> list[Marker]:
    return [
        Marker(f["start_s"], str(n + 1), f"{n + 1}: {f['kind']} {f['detail']}")
        for n, f in enumerate(summary.get("faults", []))
    ]


def _plots(summary: Mapping[str, Any], timeline: Sequence[Mapping[str, Any]]) -> str:
    end = max(float(summary.get("measured_s") or 0), 1.0)
    marks = _markers(summary)
    # the fleet's final closes (a burst of Terminating pushes) are in the tables, not the plots:
    # drawn, they would flatten every other interval
    timeline = [row for row in timeline if float(row["offset_s"]) < end - 0.5]

    def at(row: Mapping[str, Any]) -> float:
        return float(row["offset_s"]) + float(row.get("seconds") or 0)

    def series(name: str, key: str, scale: float = 1.0, rate: bool = False) -> Series:
        points = []
        for row in timeline:
            value = row.get(key)
            if value is not None:
                value = float(value) * scale
                if rate:
                    value /= max(float(row.get("seconds") or 1.0), 1e-9)
            points.append((at(row), value))
        return Series(name, points)

    charts = [
        chart(
            "Push rate",
            [
                series("sent", "pushes", rate=True),
                series("accepted", "pushes_accepted", rate=True),
                series("rejected", "pushes_rejected", rate=True),
            ],
            marks,
            end=end,
            unit="per second",
        ),
        chart(
            "Errors",
            [
                series("117", "rejected_117", rate=True),
                series("89 throttled", "throttled", rate=True),
                series("118", "rejected_118", rate=True),
                series("outside the KIP's table", "rejected_other", rate=True),
                series("connections lost", "lost", rate=True),
            ],
            marks,
            end=end,
            unit="per second",
        ),
        chart(
            "Push latency, client side",
            [
                series("p50", "latency_p50_ms"),
                series("p99", "latency_p99_ms"),
                series("max", "latency_max_ms"),
            ],
            marks,
            end=end,
            unit="ms, log scale",
            log=True,
        ),
        chart(
            "Broker memory",
            [
                series("resident", "memory_bytes", scale=1 / (1 << 20)),
                series("JVM heap in use", "heap_floor_bytes", scale=1 / (1 << 20)),
            ],
            marks,
            end=end,
            unit="MiB",
        ),
        chart(
            "Connections and clients",
            [
                series("broker connections", "connections"),
                series("clients live", "clients_live"),
                series("cached instances", "cached_instances"),
                series("locked out", "clients_locked_out"),
                series("in a 117 storm", "storm_open"),
            ],
            marks,
            end=end,
            unit="count",
        ),
    ]
    note = (
        '<p class="small muted">Numbered dashed lines: the faults (table below). The final '
        "closes of the fleet (its Terminating pushes) are in the tables only.</p>"
    )
    return '<h2 id="plots">Over time</h2>' + note + "".join(charts)


def _faults(summary: Mapping[str, Any]) -> str:
    faults = summary.get("faults", [])
    if not faults:
        return '<h2 id="faults">Faults</h2><p class="muted">No fault in this run.</p>'
    rows = "".join(
        f'<tr><td class="num">{n + 1}</td><td class="num">{f["start_s"]:.1f} s</td>'
        f"<td>{esc(f['kind'])}</td><td>{esc(f['detail'])}</td>"
        f'<td class="num">{f["end_s"] - f["start_s"]:.1f} s</td>'
        f"<td>{esc(f.get('recovery', ''))}</td></tr>"
        for n, f in enumerate(faults)
    )
    return (
        '<h2 id="faults">Faults</h2><table class="counts"><tr><th>#</th><th>at</th><th>kind</th>'
        f"<th>what</th><th>took</th><th>recovery</th></tr>{rows}</table>"
    )


def _errors(errors: Sequence[Mapping[str, Any]]) -> str:
    rows = "".join(
        f'<tr><td>{esc(e["code"])}</td><td class="num">{e["count"]}</td>'
        f'<td class="num">{e["percent"]:.3f} %</td></tr>'
        for e in errors
    )
    return (
        '<h2 id="errors">Rejected pushes by error code</h2><table class="counts"><tr><th>code'
        f"</th><th>pushes</th><th>of all pushes</th></tr>{rows}</table>"
    )


def _real_clients(clients: Sequence[Mapping[str, Any]]) -> str:
    if not clients:
        return ""
    columns = (
        "client",
        "client_id",
        "delivered",
        "errors",
        "closed",
        "pushes_at_sink",
        "longest_gap_intervals",
    )
    head = "".join(f"<th>{esc(c.replace('_', ' '))}</th>" for c in columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{esc(c.get(k))}</td>" for k in columns) + "</tr>" for c in clients
    )
    return (
        '<h2 id="real">Real clients</h2><p class="small">Driver events, and their pushes as the '
        f'sinks received them.</p><table class="counts"><tr>{head}</tr>{rows}</table>'
    )


def _timeline_table(timeline: Sequence[Mapping[str, Any]], engine: str) -> str:
    columns = (
        ("offset_s", "at s"),
        ("clients_live", "clients"),
        ("pushes", "pushes"),
        ("pushes_accepted", "accepted"),
        ("rejected_117", "117"),
        ("throttled", "89"),
        ("latency_p99_ms", "p99 ms"),
        ("lost", "conn lost"),
        ("clients_locked_out", "locked"),
        ("memory_bytes", "memory MiB"),
        ("connections", "connections"),
        ("faults", "faults"),
    )
    head = "".join(f"<th>{esc(label)}</th>" for _, label in columns)
    rows = []
    for row in timeline:
        cells = []
        for key, _ in columns:
            value = row.get(key)
            if key == "memory_bytes" and value is not None:
                value = f"{value / (1 << 20):.0f}"
            elif isinstance(value, float):
                value = f"{value:.1f}"
            cells.append(f'<td class="num">{esc("" if value is None else value)}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f"<details><summary>Per interval ({len(timeline)} rows, computed by {esc(engine)})"
        f'</summary><table class="counts"><tr>{head}</tr>{"".join(rows)}</table></details>'
    )


def _diff(diff: Mapping[str, Any]) -> str:
    rows = []
    for s in diff.get("slos", []):
        delta = s.get("delta")
        shown = "" if delta is None else f"{delta:+g}"
        cls = ' class="bad"' if s["changed"] else ""
        rows.append(
            f"<tr{cls}><td><code>{esc(s['id'])}</code></td><td>{chip(s['previous_verdict'])}</td>"
            f"<td>{chip(s['verdict'])}</td><td class='num'>{esc(_num(s['previous_value']))}</td>"
            f"<td class='num'>{esc(_num(s['value']))}</td><td class='num'>{esc(shown)} "
            f"{esc(s.get('unit', ''))}</td></tr>"
        )
    totals = "".join(
        f"<tr><td>{esc(t['what'])}</td><td class='num'>{esc(_num(t['previous']))}</td>"
        f"<td class='num'>{esc(_num(t['value']))}</td><td class='num'>{t['delta']:+g}</td></tr>"
        for t in diff.get("totals", [])
    )
    return (
        f'<h2 id="compare">Compared with run {esc(diff.get("previous_run"))}: '
        f"{diff.get('changed_verdicts', 0)} verdict(s) changed</h2>"
        '<table class="counts"><tr><th>SLO</th><th>before</th><th>now</th><th>figure before'
        f"</th><th>figure now</th><th>delta</th></tr>{''.join(rows)}</table>"
        '<table class="counts"><tr><th>total</th><th>before</th><th>now</th><th>delta</th></tr>'
        f"{totals}</table>"
    )


def _num(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _notes(summary: Mapping[str, Any]) -> str:
    notes = summary.get("notes", [])
    if not notes:
        return ""
    items = "".join(f"<li>{esc(n)}</li>" for n in notes)
    return f'<h2 id="notes">Notes</h2><ul class="small">{items}</ul>'


def index_section(summary: Mapping[str, Any]) -> str:
    """The short section `index.html` gets: the SLO verdicts and a link to the soak page."""
    chips = " ".join(chip(s["verdict"], s["id"].removeprefix("soak.")) for s in summary["slos"])
    also = ", the comparison with the previous run" if summary.get("compared") else ""
    return (
        '<section id="soak"><h2>Soak</h2><p><a href="soak.html">The soak page</a>: plots with '
        f"the faults marked, per-interval tables{also}.</p><p>{chips}</p></section>"
    )
