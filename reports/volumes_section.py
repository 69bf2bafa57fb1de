"""The "Volumes" section of the HTML report: `volumes-summary.json` as an HTML fragment.

What a reader needs from a volume run, in that order: did every source agree with what the
client produced (per source and metric), which partitions did not (first, with expected vs
observed), and where the traffic went (share, rank, hot). Reuses the report's CSS (`counts`
tables, verdict chips) so it sits in `index.html` or on a page of its own unchanged. Every value
is escaped: topic names come from the run and metric names from the target.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconform.reports.html_style import chip, esc, verdict_banner

STATUS_CHIP = {
    "ok": ("pass", "ok"),
    "mismatch": ("fail", "mismatch"),
    "missing": ("error", "missing"),
}
STYLE = (
    "<style>#volumes td.hot{font-weight:600}#volumes .share{display:inline-block;height:8px;"
    "background:#5b8def;vertical-align:middle;margin-right:4px}</style>"
)
SOURCE_COUNTS = ("rows", "ok", "mismatch", "missing", "hot_ledger", "hot_disagreements")
DASH = "&ndash;"


def render_volumes_section(summary: Mapping[str, Any]) -> str:
    """An HTML fragment (`<section id="volumes">`) for one volume summary."""
    totals = summary.get("totals", {})
    bad = int(totals.get("mismatch", 0)) + int(totals.get("missing", 0))
    verdict = chip("fail", f"{bad} off") if bad else chip("pass", "agree")
    scale = (
        f"{esc(totals.get('records', 0))} records, {esc(totals.get('bytes', 0))} bytes in "
        f"{esc(totals.get('partitions', 0))} partitions"
    )
    return (
        f'<section id="volumes">{STYLE}<h2 id="volumes-title">Volumes {verdict} '
        f'<span class="muted small">{scale}</span></h2>{_banner(summary, bad)}'
        f"{_run(summary.get('run'))}"
        f"{_sources(summary.get('sources', []))}{_rows(summary)}{_tolerance(summary)}</section>"
    )


def _banner(summary: Mapping[str, Any], bad: int) -> str:
    """The section's answer first: did every source agree with what the client produced."""
    totals, sources = summary.get("totals", {}), summary.get("sources", [])
    if not sources:
        return verdict_banner("notrun", "VOLUMES NOT JUDGED", "no source was compared with "
                              "the ledger", id="volumes-verdict")  # fmt: skip
    if bad:
        why = (
            f"{totals.get('mismatch', 0)} partition figures off, "
            f"{totals.get('missing', 0)} missing, across {len(sources)} sources"
        )
        return verdict_banner("fail", "VOLUMES DISAGREE", why, id="volumes-verdict")
    why = f"every partition figure of {len(sources)} sources agrees with the ledger"
    return verdict_banner("pass", "VOLUMES AGREE", why, id="volumes-verdict")


def _run(run: Mapping[str, Any] | None) -> str:
    if not run:
        return ""
    facts = "".join(
        f"<span><b>{name}</b> {esc(run.get(name, ''))}</span>" for name in ("target", "client")
    )
    notes = "".join(
        f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in run.get("sources", {}).items()
    )
    return f'<div class="runmeta">{facts}</div><ul class="small">{notes}</ul>'


def _sources(sources: list[Mapping[str, Any]]) -> str:
    if not sources:
        return '<p class="muted" id="volumes-empty">No source was compared.</p>'
    rows = []
    for s in sources:
        off = int(s["mismatch"]) + int(s["missing"])
        cells = "".join(
            f'<td class="n{" z" if not s[k] else ""}">{esc(s[k])}</td>' for k in SOURCE_COUNTS
        )
        rows.append(
            f'<tr><td class="mono">{esc(s["source"])}/{esc(s["metric"])}</td>'
            f"<td>{esc(s['quantity'])}</td>{cells}<td>{chip('fail' if off else 'pass')}</td></tr>"
        )
    return (
        '<table class="counts" id="volumes-sources"><thead><tr><th>source/metric</th>'
        "<th>counts</th><th>rows</th><th>ok</th><th>mismatch</th><th>missing</th><th>hot</th>"
        '<th title="hot by the source but not by the ledger, or the reverse">hot disagree</th>'
        f"<th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _rows(summary: Mapping[str, Any]) -> str:
    body = "".join(_row(r) for r in summary.get("rows", []))
    more = int(summary.get("rows_truncated", 0))
    note = (
        f'<p class="muted" id="volumes-truncated">{more} more rows in volumes-result.parquet</p>'
        if more
        else ""
    )
    return (
        '<table class="counts" id="volumes-rows"><thead><tr><th>status</th><th>source/metric</th>'
        "<th>topic</th><th>partition</th><th>produced</th><th>expected</th><th>observed &Delta;"
        "</th><th>off by</th><th>share (ledger)</th><th>rank</th><th>hot</th></tr></thead>"
        f"<tbody>{body}</tbody></table>{note}"
    )


def _row(r: Mapping[str, Any]) -> str:
    verdict, label = STATUS_CHIP.get(str(r.get("status")), ("error", str(r.get("status"))))
    produced = r.get("produced_records" if r.get("quantity") == "records" else "produced_bytes")
    low, high = _int(r.get("expected_low")), _int(r.get("expected_high"))
    expected = low if low == high else f"{low} {DASH} {high}"
    partition = "topic" if int(r.get("partition", -1)) < 0 else esc(r.get("partition"))
    return (
        f'<tr class="vol-{esc(r.get("status"))}"><td>{chip(verdict, label)}</td>'
        f'<td class="mono">{esc(r.get("source"))}/{esc(r.get("metric"))}</td>'
        f'<td class="mono">{esc(r.get("topic"))}</td><td class="n">{partition}</td>'
        f'<td class="n">{esc(produced)}</td><td class="n">{expected}</td>'
        f'<td class="n">{_int(r.get("delta"))}</td><td class="n">{_int(r.get("difference"))}</td>'
        f"<td>{_share(r.get('ledger_share'))}</td>{_rank(r)}{_hot(r)}</tr>"
    )


def _share(share: Any) -> str:
    if share is None:
        return ""
    width = round(60 * float(share))
    return f'<span class="share" style="width:{width}px"></span>{float(share):.0%}'


def _rank(r: Mapping[str, Any]) -> str:
    ledger, source = r.get("ledger_rank"), r.get("source_rank")
    text = "" if ledger is None else f"{esc(ledger)} / {DASH if source is None else esc(source)}"
    return f'<td class="n" title="ledger / source">{text}</td>'


def _hot(r: Mapping[str, Any]) -> str:
    hot = "hot" if r.get("hot_ledger") else ""
    if r.get("hot_ledger") is not None and r.get("hot_source") != r.get("hot_ledger"):
        hot += " (source disagrees)"
    return f'<td class="{"hot" if hot else ""}">{esc(hot)}</td>'


def _tolerance(summary: Mapping[str, Any]) -> str:
    t = summary.get("tolerance") or {}
    if not t:
        return ""
    expansion = float(t.get("compressed_expansion", 1))
    return (
        '<p class="muted small" id="volumes-tolerance">Records are exact. Bytes: payload + '
        f"{esc(t.get('record_overhead_min'))} {DASH} {esc(t.get('record_overhead_max'))} bytes "
        f"per record + one {esc(t.get('batch_header'))}-byte batch header per batch (between "
        f"one batch and one per record); compressed: at most &times;{expansion:.3f} + "
        f"{esc(t.get('compressed_framing'))} bytes per batch. Hot: a share of at least "
        f"{esc(t.get('hot_factor'))} &times; an even share of the topic.</p>"
    )


def _int(value: Any) -> str:
    return DASH if value is None else f"{float(value):.0f}"
