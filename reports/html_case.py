"""One HTML page per case, with a section per subject: the evidence behind each matrix cell.

One page per case (not per case and subject) because the useful question on this page is "why do
these implementations disagree": the subjects' expected-vs-observed tables and wire logs sit one
under the other, and the matrix links each cell to its subject's section (`#s-<subject>`).
"""

from __future__ import annotations

import json
import time
from functools import cache
from typing import Any

from kconform.engine.results import RECORDED, CaseResult
from kconform.reports.common import (
    LEVEL_MEANING,
    LOUD_VERDICTS,
    VERDICT_MEANING,
    VERDICT_SHORT,
    fails_run,
    failure_reason,
    slug,
)
from kconform.reports.html_style import chip, esc, level_badge, page
from kconform.reports.model import baseline_allows
from kconform.reports.rulebook import link_citations
from kconform.rules import RULES

RULES_PAGE = "../rules.html"

ARROWS = {
    "client->broker": ("→", "d-req", "client → broker"),
    "broker->client": ("←", "d-resp", "broker → client"),
    "proxy->client": ("⇠", "d-proxy", "proxy → client (injected by the harness)"),
}
HEX_LINE = 16
QUIET_VERDICTS = frozenset({"pass", "unsupported", "not-applicable", "skipped"})
FOLD_ROWS = 8


def case_file(case_id: str) -> str:
    """The case page's path relative to the report directory."""
    return f"cases/{slug(case_id)}.html"


def subject_anchor(subject: str) -> str:
    return f"s-{slug(subject)}"


def render_case(
    case_id: str,
    by_subject: dict[str, CaseResult],
    order: list[str],
    previous: dict[tuple[str, str], str],
    baseline: dict[str, dict[str, str]],
) -> str:
    """The page for `case_id`: the subjects in the matrix columns' `order`, except that those
    whose verdict fails the run come first, then the other loud ones (fail, error, non-strict,
    even as a baseline expects them): the first screen shows why the case is on anyone's mind,
    not the passing subjects above the fold."""
    columns = [by_subject[s] for s in order if s in by_subject]
    columns += [r for s, r in by_subject.items() if s not in order]
    results = sorted(columns, key=_urgency)
    first = results[0]
    nav = " ".join(
        f'<a href="#{esc(subject_anchor(r.subject))}" title="{esc(r.verdict)}">'
        f"{chip(r.verdict, f'{r.subject}: {VERDICT_SHORT.get(r.verdict, r.verdict)}')}</a>"
        for r in results
    )
    body = [
        f'<a class="back" href="../index.html#row-{esc(slug(case_id))}">← back to the matrix</a>',
        f"<h1><code>{esc(case_id)}</code></h1>",
        f"<p>{esc(first.title)}</p>",
        '<dl class="facts">',
        f"<dt>level</dt><dd>{level_badge(first.level)} "
        f'<span class="muted">{esc(LEVEL_MEANING.get(first.level, ""))}</span></dd>',
        f"<dt>KIP</dt><dd>{esc(first.kip)}</dd>",
        f"<dt>rules</dt><dd>{_rule_links(first.rules)}</dd>",
        f"<dt>spec reference</dt><dd>{link_citations(first.spec_ref, RULES_PAGE)}</dd>",
        "</dl>",
        f'<div class="nav">{nav}</div>',
    ]
    for result in results:
        key = (result.case_id, result.subject)
        expected = baseline.get(result.subject, {}).get(result.case_id, result.baseline)
        body.append(_subject_section(result, previous.get(key), expected))
    return page(f"{case_id} — kconform", "\n".join(body))


def _urgency(result: CaseResult) -> int:
    """0 fails the run, 1 a loud verdict the baseline expects, 2 the rest (sort is stable)."""
    if fails_run(result):
        return 0
    return 1 if result.verdict in LOUD_VERDICTS else 2


def _rule_links(rule_ids: list[str]) -> str:
    """Each rule the case judges, linked to its entry in the report's rule book."""
    if not rule_ids:
        return '<span class="muted">none recorded</span>'
    return ", ".join(
        f'<a href="{RULES_PAGE}#{esc(r)}"><code>{esc(r)}</code></a> '
        f'<span class="muted">{esc(RULES[r].level) if r in RULES else "unknown rule"}</span>'
        for r in rule_ids
    )


def _subject_section(result: CaseResult, previous: str | None, baseline: str | None) -> str:
    anchor = subject_anchor(result.subject)
    facts = [
        ("implementation", f"{esc(result.implementation)} {esc(result.version)}"),
        ("kind", esc(result.subject_kind)),
        ("verdict", f"{chip(result.verdict)} "
                    f'<span class="muted">{esc(VERDICT_MEANING.get(result.verdict, ""))}</span>'),
    ]  # fmt: skip
    if baseline is not None:
        facts.append(("baseline", chip(baseline) + (
            " (as expected)" if baseline_allows(baseline, result.verdict)
            else " <b>differs: fails the run</b>"
        )))  # fmt: skip
    if result.baseline_why:
        facts.append(("known deviation" if result.verdict in ("fail", "non-strict") else "why",
                      link_citations(result.baseline_why, RULES_PAGE)))  # fmt: skip
    if previous is not None:
        facts.append(("previous run", f"{chip(previous)} → {chip(result.verdict)}"))
    if fails_run(result):
        facts.append(("CI", f"<b>fails the run</b> ({esc(failure_reason(result))})"))
    timing = f"{result.duration:.3f} s"
    if result.waited:
        timing += f" (of which {result.waited:.3f} s waiting as the protocol requires)"
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(result.started))
    facts += [("started", esc(started)), ("duration", esc(timing))]
    if result.nodeid:
        facts.append(("pytest node", f"<code>{esc(result.nodeid)}</code>"))
    parts = [
        f'<section class="subject b-{esc(result.verdict)}" id="{esc(anchor)}">',
        f"<h2>{esc(result.subject)} {chip(result.verdict)}</h2>",
        '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>",
    ]
    if result.message:
        parts.append(f'<div class="message"><pre>{esc(result.message)}</pre></div>')
    # Evidence of a clean pass is rarely read: fold it so the interesting subject is near.
    quiet = result.verdict in QUIET_VERDICTS
    parts.append(_fold(_expectations(result), quiet and len(result.expectations) > FOLD_ROWS))
    parts.append(_fold(_wire_log(result.wire_log), quiet and len(result.wire_log) > FOLD_ROWS))
    parts.append("</section>")
    return "\n".join(parts)


def _fold(block: str, folded: bool) -> str:
    """Put a block (heading first) in a closed <details> whose summary is the heading."""
    if not folded:
        return block
    head, _, rest = block.partition("</h3>")
    return f"<details><summary>{head.removeprefix('<h3>')} (show)</summary>{rest}</details>"


def _expectations(result: CaseResult) -> str:
    if not result.expectations:
        return '<h3>Expected vs observed</h3><p class="muted">No expectation was recorded.</p>'
    bad = sum(not e.ok for e in result.expectations)
    rows = []
    for n, e in enumerate(result.expectations, 1):
        recorded = e.expected == RECORDED
        mark = ('<td class="muted">recorded</td>' if recorded else
                '<td class="ok">✓ ok</td>' if e.ok else '<td class="bad">✗ BAD</td>')  # fmt: skip
        expected = (
            '<span class="muted">nothing: only recorded</span>'
            if recorded
            else f"<pre>{esc(show_value(e.expected))}</pre>"
        )
        rows.append(
            f'<tr class="{"ok" if e.ok else "bad"}"><td class="muted">{n}</td>{mark}'
            f"<td>{esc(e.what)}</td><td>{expected}</td>"
            f"<td><pre>{esc(show_value(e.observed))}</pre></td></tr>"
        )
    return (
        f'<h3>Expected vs observed <span class="muted small">{len(result.expectations)} checks,'
        f" {bad} violated</span></h3>"
        '<table class="expect"><thead><tr><th>#</th><th>ok</th><th>what</th><th>expected</th>'
        f"<th>observed</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def show_value(value: Any, indent: str = "") -> str:
    """A value as a person reads it, not as Python prints it: text without quotes (quoted only
    when empty or edged with spaces), `none` for null, yes/no, a mapping as `key: value` lines,
    a list of plain values on one line and of mappings one per line."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value if value and value == value.strip() else json.dumps(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        if not value:
            return "(empty)"
        lines = []
        for key, item in value.items():
            shown = show_value(item, indent + "  ")
            nested = (isinstance(item, dict) and bool(item)) or "\n" in shown
            lines.append(f"{indent}{key}:" + (f"\n{shown}" if nested else f" {shown}"))
        return "\n".join(lines)
    if isinstance(value, list | tuple):
        if not value:
            return "(none)"
        items = [show_value(item, indent + "  ") for item in value]
        if any(isinstance(item, dict | list | tuple) for item in value):
            return "\n".join(f"{indent}- {s.lstrip()}" for s in items)
        return ", ".join(items)
    return str(value)


def _wire_log(entries: list[dict[str, Any]]) -> str:
    if not entries:
        return '<h3>Wire log</h3><p class="muted">No frames were exchanged or recorded.</p>'
    first = float(entries[0].get("monotonic", 0.0))
    rows = []
    for entry in entries:
        at = (float(entry.get("monotonic", first)) - first) * 1000
        arrow, cls, words = ARROWS.get(str(entry.get("direction")), ("?", "", "unknown"))
        api = _api(entry.get("api_key"), entry.get("api_version"))
        corr = entry.get("correlation_id")
        conn = entry.get("connection", "")
        note = (
            f' <span class="note">{link_citations(entry["note"], RULES_PAGE)}</span>'
            if entry.get("note")
            else ""
        )
        raw = str(entry.get("raw", ""))
        hexdump = (
            f"<details><summary>raw, {len(raw) // 2} bytes</summary>"
            f'<pre class="hex">{esc(hex_dump(raw))}</pre></details>'
            if raw
            else ""
        )
        rows.append(
            f'<tr><td class="t">+{at:.1f} ms</td><td class="dir {cls}" title="{esc(words)}">'
            f'{arrow}</td><td class="nw">{esc(conn)}</td><td class="nw">{esc(api)}</td>'
            f'<td class="t">{"" if corr is None else esc(corr)}</td>'
            f"<td><code>{esc(entry.get('summary', ''))}</code>{note}{hexdump}</td></tr>"
        )
    return (
        f'<h3>Wire log <span class="muted small">{len(entries)} frames, decoded; time from the '
        "first frame; → request to the broker, ← response, ⇠ injected by the proxy"
        "</span></h3>"
        '<table class="wire"><thead><tr><th>time</th><th></th><th>connection</th><th>api</th>'
        f"<th>corr</th><th>decoded</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _api(key: object, version: object) -> str:
    if key is None:
        return ""
    name = api_names().get(key) if isinstance(key, int) else None
    text = f"{name} ({key})" if name else f"api {key}"
    return text if version is None else f"{text} v{version}"


@cache
def api_names() -> dict[int, str]:
    """Kafka API names from the codec's declarations (reports sit right of codecs)."""
    try:
        from kconform.codecs.messages import ALL_MESSAGES
    except ImportError:  # a report must render even where the codec cannot import
        return {}
    names: dict[int, str] = {}
    for message in ALL_MESSAGES:
        if message.api_key is not None and message.struct_name.endswith("Request"):
            names.setdefault(message.api_key, message.struct_name.removesuffix("Request"))
    return names


def hex_dump(raw: str) -> str:
    """Offset, 16 hex bytes and their printable ASCII per line, as `xxd` shows them."""
    try:
        data = bytes.fromhex(raw)
    except ValueError:
        return raw
    lines = []
    for offset in range(0, len(data), HEX_LINE):
        chunk = data[offset : offset + HEX_LINE]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{offset:08x}  {hexes:<{HEX_LINE * 3 - 1}}  {text}")
    return "\n".join(lines)
