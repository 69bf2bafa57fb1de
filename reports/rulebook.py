"""The rule book rendered for people: `docs/rules.md` in the repository and `rules.html` in
every HTML report, both from `kconform.rules`, so neither can drift from what the harness judges.

Each rule gets an anchor named by its id; rulings get `ruling-N` and the sections of Apache's
behaviour `behaviour-C.4` (cited as "§C.4"). `link_citations` turns those citations in any
text (a case's spec reference, a baseline's why) into links to them. Regenerate the docs with
`make docs` (`python -m kconform.reports.rulebook docs/rules.md`); tests/rules checks them.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from collections import defaultdict
from pathlib import Path

from kconform import locations
from kconform.fixtures.reference.mutants import MUTANTS
from kconform.fixtures.reference.validation import PUSH_VALIDATION, RESERVED
from kconform.reports.html_style import esc, level_badge, page
from kconform.rules import AWAITING_RULE, RULES, RULINGS, SECTIONS, Known, Rule
from kconform.rules.bugs import split_who

SUITES_DIR = locations.suites()
CITATION = re.compile(
    r"\b(?P<rule>kip\d+\.[a-z0-9_]+(?:\.[a-z0-9_]+)+)"
    r"|\brulings? (?P<ruling>\d+)"
    r"|§(?P<section>[A-G](?:\.\d)?)"
)
GROUPS = (
    ("kip511.apiversions.", "KIP-511, broker: ApiVersions"),
    ("kip511.client.", "KIP-511, client"),
    ("kip1242.apiversions.", "KIP-1242, broker: ApiVersions v5 cluster and node check"),
    ("kip1242.client.", "KIP-1242, client"),
    ("kip714.apiversions.", "KIP-714, broker: advertising telemetry"),
    ("kip714.get.", "KIP-714, broker: GetTelemetrySubscriptions"),
    ("kip714.instances.", "KIP-714, broker: client instances"),
    ("kip714.push.", "KIP-714, broker: PushTelemetry"),
    ("kip714.robustness.", "KIP-714, broker: robustness"),
    ("kip714.configs.", "KIP-714, broker: CLIENT_METRICS configuration"),
    ("kip714.client.", "KIP-714, client"),
    ("kip1076.client.", "KIP-1076, client: application metrics and the Admin client"),
    ("kip977.", "KIP-977, broker: metrics.verbosity and partition meters"),
    ("otlp.", "KIP-714, client payload: OTLP conditions"),
    ("soak.", "Soak: a client fleet against one broker, over time"),
)


def cases_by_rule() -> dict[str, list[str]]:
    """{rule id: the ids of the cases that claim it}, from the suites as they are (a rule that
    is `part_of` another is judged by the cases that claim that one)."""
    for info in pkgutil.walk_packages([str(SUITES_DIR)], "kconform.suites."):
        if info.name.rsplit(".", 1)[-1].startswith("test_"):
            importlib.import_module(info.name)
    from kconform.engine.model import CASES

    judged: dict[str, list[str]] = defaultdict(list)
    for case in sorted(CASES.values(), key=lambda c: c.id):
        for rule_id in case.rules:
            judged[rule_id].append(case.id)
    return judged


def _parts_by_rule() -> dict[str, list[str]]:
    parts: dict[str, list[str]] = defaultdict(list)
    for r in RULES.values():
        if r.part_of:
            parts[r.part_of].append(r.id)
    return parts


def _mutants_by_rule() -> dict[str, list[str]]:
    broken: dict[str, list[str]] = defaultdict(list)
    for mutant in MUTANTS.values():
        broken[mutant.rule].append(mutant.name)
    return broken


def _validation_by_rule() -> dict[str, list[str]]:
    enforced: dict[str, list[str]] = defaultdict(list)
    for row in (RESERVED, *PUSH_VALIDATION):
        enforced[row.rule].append(f"{row.step} ({row.error.name})")
    return enforced


def _grouped() -> list[tuple[str, list[Rule]]]:
    return [(title, [r for r in RULES.values() if r.id.startswith(prefix)])
            for prefix, title in GROUPS]  # fmt: skip


def render_markdown() -> str:
    """docs/rules.md."""
    judged, broken, enforced = cases_by_rule(), _mutants_by_rule(), _validation_by_rule()
    out = [
        "# kconform rule book",
        "",
        "<!-- Generated from kconform.rules by `make docs`; edit the rule book, not this file. -->",
        "",
        "Every rule kconform judges, once: its id, level, the KIP sentence it rests on, what it "
        "means, the ruling that settles it where the KIP is ambiguous, and what known "
        "implementations do, with the source each fact was read from. Cases, mutants, the "
        "reference broker's validation, the fuzz oracle, the soak and the reports all name rules "
        "by these ids.",
        "",
        "Levels: a MUST rule violated fails the case; a SHOULD rule violated is `non-strict`; an "
        "INFO rule records what the target chose where the KIP leaves a choice.",
        "",
        "Contents: "
        + " · ".join(f"[{t}](#{_slug(t)})" for _, t in GROUPS)
        + " · [Bugs awaiting a rule](#bugs-awaiting-a-rule) · [Rulings](#rulings)"
        " · [Apache's behaviour](#apaches-behaviour)",
        "",
    ]
    parts = _parts_by_rule()
    for title, rules in _grouped():
        out += [f"## {title}", ""]
        for r in rules:
            cases = judged[r.id] or judged[r.part_of]
            out += _rule_markdown(r, cases, broken[r.id], enforced[r.id], parts[r.id])
    out += ["## Bugs awaiting a rule", "",
            "Public bugs no rule of the book covers yet, each with the rule id it proposes; a "
            "rule joins the book with the case that judges it. Every bug of the record, with "
            "the verdicts the baselines hold for its case, is in [bugs.md](bugs.md).", "",
            "| proposed rule | " + _BUG_HEAD, _BUG_RULE + "---|"]  # fmt: skip
    out += [f"| `{k.rule}` | {_bug_row(k)} |" for k in AWAITING_RULE]
    out += ["", "## Rulings", ""]
    for ruling in RULINGS.values():
        out += [f'<a id="ruling-{ruling.number}"></a>', "",
                f"**Ruling {ruling.number}: {ruling.title}.** {ruling.text}", ""]  # fmt: skip
    out += ["## Apache's behaviour", "",
            "What Apache Kafka does, as the reference broker mirrors it; citations such as "
            '"§C.4 step 3" point here.', ""]  # fmt: skip
    for section in SECTIONS.values():
        out += [f'<a id="behaviour-{section.key}"></a>', "",
                f"### {section.key} {section.title}", "", section.text, "",
                f"Sources: {section.sources}", ""]  # fmt: skip
    return "\n".join(out).rstrip() + "\n"


def _rule_markdown(
    r: Rule, cases: list[str], mutants: list[str], validation: list[str], parts: list[str]
) -> list[str]:
    lines = [f'<a id="{r.id}"></a>', "", f"### `{r.id}` — {r.level}", "",
             f"{r.kip}, '{r.section}'" + (f': "{r.quote}"' if r.quote else ""), "",
             r.means, ""]  # fmt: skip
    facts = []
    if r.ruling:
        facts.append(f"ruling: [{r.ruling}](#ruling-{r.ruling}) ({RULINGS[r.ruling].title})")
    if r.behaviour:
        facts.append(f"Apache's code path: [§{r.behaviour}](#behaviour-{r.behaviour})")
    if r.part_of:
        facts.append(f"a condition of: [`{r.part_of}`](#{r.part_of})")
    if parts:
        facts.append("conditions: " + ", ".join(f"[`{p}`](#{p})" for p in parts))
    if validation:
        facts.append("reference validation: " + ", ".join(validation))
    if cases:
        facts.append("judged by: " + ", ".join(f"`{c}`" for c in cases))
    if r.outside_suites:
        facts.append(f"no suite case: {r.outside_suites}")
    if mutants:
        facts.append("broken by mutant: " + ", ".join(f"`{m}`" for m in mutants))
    lines += [f"- {fact}" for fact in facts]
    plain = [k for k in r.known if not k.bug]
    bugs = [k for k in r.known if k.bug]
    if plain:
        lines += ["", "| implementation | does | source |", "|---|---|---|"]
        lines += [f"| {k.who} | {k.does} | {k.source} |" for k in plain]
    if bugs:
        lines += ["", "Bugs on record:", "", "| " + _BUG_HEAD, _BUG_RULE]
        lines += [f"| {_bug_row(k)} |" for k in bugs]
    return [*lines, ""]


_BUG_HEAD = "bug | system | affected | fixed in | behaviour | source | case |"
_BUG_RULE = "|---|---|---|---|---|---|---|"


def _bug_row(k: Known) -> str:
    """A bug's cells: id, system, affected, fixed in, behaviour, source, case."""
    system, affected = split_who(k.who)
    case = f"`{k.case}`" if k.case else f"none: {k.uncaught}" if k.uncaught else "none yet"
    cells = (f"`{k.bug}`", system, affected, k.fixed_in, k.does, k.source, case)
    return " | ".join(c.replace("|", "\\|") for c in cells)


def _slug(title: str) -> str:
    """GitHub's heading anchor."""
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def render_html() -> str:
    """rules.html of an HTML report: the same book, linked from every case page."""
    body = ["<h1>kconform rule book</h1>",
            '<p class="muted">Every rule the harness judges, with the KIP sentence, the ruling '
            "and known implementations' behaviour. Generated from kconform.rules.</p>"]  # fmt: skip
    for title, rules in _grouped():
        body.append(f"<h2>{esc(title)}</h2>")
        for r in rules:
            quote = f": “{esc(r.quote)}”" if r.quote else ""
            ruling = (f' · <a href="#ruling-{r.ruling}">ruling {r.ruling}</a>'
                      if r.ruling else "")  # fmt: skip
            where = (f' · <a href="#behaviour-{esc(r.behaviour)}">§{esc(r.behaviour)}</a>'
                     if r.behaviour else "")  # fmt: skip
            known = "".join(f"<li>{esc(k.who)}: {esc(k.does)} <span class='muted'>"
                            f"({esc(k.source)}{esc(_bug_note(k))})</span></li>"
                            for k in r.known)  # fmt: skip
            body.append(
                f'<section id="{esc(r.id)}"><h3><code>{esc(r.id)}</code> '
                f"{level_badge(r.level)}</h3>"
                f"<p>{esc(r.kip)} '{esc(r.section)}'{quote}{ruling}{where}</p>"
                f"<p>{esc(r.means)}</p>" + (f"<ul>{known}</ul>" if known else "") + "</section>"
            )
    body.append("<h2>Rulings</h2>")
    body += [f'<p id="ruling-{g.number}"><b>Ruling {g.number}: {esc(g.title)}.</b> '
             f"{esc(g.text)}</p>" for g in RULINGS.values()]  # fmt: skip
    body.append("<h2>Apache's behaviour</h2>")
    body += [f'<section id="behaviour-{esc(s.key)}"><h3>{esc(s.key)} {esc(s.title)}</h3>'
             f'<p>{esc(s.text)}</p><p class="muted small">Sources: {esc(s.sources)}</p>'
             "</section>" for s in SECTIONS.values()]  # fmt: skip
    return page("kconform rule book", "\n".join(body))


def _bug_note(k: Known) -> str:
    if not k.bug:
        return ""
    return f"; bug {k.bug}, fixed in {k.fixed_in}; case {k.case or 'none: ' + k.uncaught}"


def link_citations(text: str, rules_page: str) -> str:
    """`text` as HTML, with every rule id, ruling and behaviour citation linked into
    `rules_page`; unknown ids stay plain text."""
    parts, last = [], 0
    for match in CITATION.finditer(text):
        target = _target(match)
        if target is None:
            continue
        parts += [esc(text[last : match.start()]),
                  f'<a href="{rules_page}#{esc(target)}">{esc(match.group(0))}</a>']  # fmt: skip
        last = match.end()
    return "".join(parts) + esc(text[last:])


def _target(match: re.Match[str]) -> str | None:
    if match.group("rule"):
        return match.group("rule") if match.group("rule") in RULES else None
    if match.group("ruling"):
        number = int(match.group("ruling"))
        return f"ruling-{number}" if number in RULINGS else None
    key = match.group("section")
    if key not in SECTIONS:  # a part ("§A"): its first section
        key = next((k for k in SECTIONS if k.startswith(f"{key}.")), key)
    return f"behaviour-{key}" if key in SECTIONS else None


def unresolved(text: str) -> list[str]:
    """The ruling and behaviour citations in `text` that name nothing in the rule book."""
    bad = []
    for match in CITATION.finditer(text):
        if not match.group("rule") and _target(match) is None:
            bad.append(match.group(0))
    return bad


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else Path("docs/rules.md")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_markdown(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
