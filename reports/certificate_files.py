"""The certificate as files and as the HTML report's first screen: `certificate.json`, an SVG
badge an author can link from a README, and the section `index.html` opens with.

All three render a `reports.certificate.Certificate`, so they cannot disagree with the
terminal about the headline, the counts or what was not judged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from kconform.outputs import atomic_write
from kconform.reports.certificate import (
    CONFORMS,
    DOES_NOT_CONFORM,
    FORMAT,
    Certificate,
    exit_code,
)
from kconform.reports.common import slug
from kconform.reports.html_style import esc
from kconform.rules.digest import SHORT

__all__ = ["badge_svg", "render_section", "write_certificates"]

COLOUR = {CONFORMS: "#3a9e4f", DOES_NOT_CONFORM: "#d3343a"}
INCOMPLETE_COLOUR = "#8a949e"
OPEN_UP_TO = 12  # a longer list starts collapsed, so the matrix stays near the first screen
STATE = {CONFORMS: "pass", DOES_NOT_CONFORM: "fail"}  # html_style's banner classes
CERTIFICATE_JSON = "certificate.json"  # beside results.json: `kconform report` re-certifies


def write_certificates(certificates: Sequence[Certificate], out: Path) -> list[Path]:
    """`certificate.json` (every client) and a badge per client: `certificate.svg` for a run of
    one client, `certificate-<client>.svg` each for several."""
    out.mkdir(parents=True, exist_ok=True)
    body = {
        "format": FORMAT,
        "exit_code": exit_code(certificates),
        "certificates": [c.to_json() for c in certificates],
    }
    written = [out / CERTIFICATE_JSON]
    _write(written[0], json.dumps(body, indent=1, ensure_ascii=False) + "\n")
    for c in certificates:
        name = "certificate.svg" if len(certificates) == 1 else f"certificate-{slug(c.subject)}.svg"
        written.append(out / name)
        _write(out / name, badge_svg(c))
    return written


def _write(path: Path, text: str) -> None:
    def write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    atomic_write(path, write)


def badge_svg(c: Certificate) -> str:
    """A two-part badge: the client and what certified it on the left, the headline and the
    MUST/SHOULD counts on the right, coloured by the headline."""
    left = f"{c.identity} · kconform {c.kconform_version} · rules {_short(c.rule_book)}"
    right = (f"{c.headline} · MUST {c.must['passed']}/{c.must['passed'] + c.must['failed']} · "
             f"SHOULD {c.should['passed']}/{c.should['passed'] + c.should['failed']}")  # fmt: skip
    lw, rw = _width(left), _width(right)
    colour = COLOUR.get(c.headline, INCOMPLETE_COLOUR)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lw + rw}" height="20" role="img" '
        f'aria-label="{esc(left)}: {esc(right)}"><title>{esc(left)}: {esc(right)}</title>'
        f'<rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{rw}" height="20" fill="{colour}"/>'
        '<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{lw / 2:.0f}" y="14" text-anchor="middle">{esc(left)}</text>'
        f'<text x="{lw + rw / 2:.0f}" y="14" text-anchor="middle">{esc(right)}</text>'
        "</g></svg>\n"
    )


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:SHORT]


def _width(text: str) -> int:
    """Verdana 11 px is about 7 px a character; 10 px of padding each side."""
    return 7 * len(text) + 20


def render_section(certificates: Sequence[Certificate]) -> str:
    """The index's first screen for a certify run: per client the headline banner, its reason,
    counts, failed MUST rules, consequences, other cases not judged, contradictions, baseline."""
    parts = ['<section id="certificate"><h2>Certificate</h2>']
    if not certificates:
        parts.append('<div class="banner notrun">INCOMPLETE<span class="why">no client case '
                     "ran</span></div>")  # fmt: skip
    for c in certificates:
        parts += [_banner(c), _facts(c), *_lists(c)]
    return "".join(parts) + "</section>"


def _banner(c: Certificate) -> str:
    state = STATE.get(c.headline, "notrun")
    return (
        f'<div class="banner {state}" data-headline="{esc(c.headline)}">{esc(c.identity)}: '
        f'{esc(c.headline)}<span class="why">{esc(c.why)} (exit {c.exit_code})</span></div>'
    )


def _facts(c: Certificate) -> str:
    facts = [
        f"<b>client</b> {esc(c.subject)}",
        f"<b>capabilities</b> {esc(', '.join(c.capabilities) or 'none')}",
        f"<b>cases</b> {c.cases}: {esc(c.counted)}",
        f"<b>MUST</b> {c.must['passed']} passed, {c.must['failed']} failed",
        f"<b>SHOULD</b> {c.should['passed']} passed, {c.should['failed']} not followed",
        f'<span id="baseline"><b>baseline</b> {esc(c.baseline)}</span>',
        f'<span class="mono">rule book {esc(_short(c.rule_book))}</span>',
    ]
    return '<div class="runmeta">' + "".join(f"<span>{f}</span>" for f in facts) + "</div>"


def _lists(c: Certificate) -> list[str]:
    failed = [f"<code>{esc(rule)}</code>, in {esc(', '.join(cases))}"
              for rule, cases in c.failed_must.items()]  # fmt: skip
    consequences = [
        f"<code>{esc(n.case_id)}</code>: {esc(n.reason)}: see <code>{esc(n.consequence_of)}"
        f"</code> ({esc(n.rule)} failed)"
        for n in c.consequences
    ]
    others = [f"<code>{esc(n.case_id)}</code> ({esc(n.verdict)}): {esc(n.reason)}"
              for n in c.not_judged if not n.consequence_of]  # fmt: skip
    return [
        _list("Failed MUST rules", failed),
        _list("Not judged: consequences of a failed rule", consequences),
        _list("Not judged", others),
        _list("Claims contradicted by the wire", [esc(k.text) for k in c.contradictions]),
    ]


def _list(title: str, items: list[str]) -> str:
    if not items:
        return ""
    rows = "".join(f"<li>{item}</li>" for item in items)
    is_open = " open" if len(items) <= OPEN_UP_TO else ""
    summary = f"<summary>{esc(title)} ({len(items)})</summary>"
    return f"<details{is_open}>{summary}<ul>{rows}</ul></details>"
