"""The rule book: every rule kconform judges, declared once (see `model.Rule`).

Pure data, importing nothing but the standard library: the reference broker, the cases, the
mutants, the fuzz oracle and the reports all name rules by id and look them up here, and
`docs/rules.md` is rendered from it (`make docs`, `python -m kconform.reports.rulebook`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from kconform.errors import HarnessDefect
from kconform.rules import (
    client_scenarios,
    configs,
    kip511,
    kip714_broker,
    kip714_client,
    kip1242,
    otlp_payload,
    soak,
)
from kconform.rules.behaviour import BY_KEY as SECTIONS
from kconform.rules.bugs import AWAITING_RULE
from kconform.rules.model import (
    BAD_VERDICTS,
    RULE_ID,
    Known,
    Level,
    Rule,
    Ruling,
    Section,
    Verdict,
)
from kconform.rules.rulings import BY_NUMBER as RULINGS

__all__ = [
    "AWAITING_RULE",
    "BAD_VERDICTS",
    "BUGS",
    "RULES",
    "RULE_ID",
    "RULINGS",
    "SECTIONS",
    "DuplicateRuleId",
    "Known",
    "Level",
    "Rule",
    "Ruling",
    "Section",
    "Verdict",
    "known_rule_ids",
    "rule",
]

_ALL = (
    kip511.RULES
    + kip1242.RULES
    + kip714_broker.RULES
    + kip714_client.RULES
    + client_scenarios.RULES
    + configs.RULES
    + otlp_payload.RULES
    + soak.RULES
)


class DuplicateRuleId(HarnessDefect, ValueError):
    """Two rules of the book share an id: every citation of it would be ambiguous."""


def _by_id(rules: Iterable[Rule]) -> Mapping[str, Rule]:
    """{id: rule}; `DuplicateRuleId` naming the ids declared more than once."""
    by_id: dict[str, Rule] = {}
    twice = []
    for r in rules:
        if r.id in by_id:
            twice.append(r.id)
        by_id[r.id] = r
    if twice:
        raise DuplicateRuleId(f"rule id(s) declared twice: {', '.join(twice)}")
    return MappingProxyType(by_id)


RULES: Mapping[str, Rule] = _by_id(_ALL)
_orphans = [r.id for r in _ALL if r.part_of and r.part_of not in RULES]
if _orphans:
    raise HarnessDefect(f"rule(s) part of a rule the book lacks: {', '.join(_orphans)}")


BUGS: tuple[tuple[str, Known], ...] = tuple(
    (r.id, k) for r in _ALL for k in r.known if k.bug
) + tuple((k.rule, k) for k in AWAITING_RULE)
"""The bug record (issue 31): every bug with the rule it is filed under, or (`Known.rule` set)
the rule it proposes."""


def rule(rule_id: str) -> Rule:
    """The rule with this id; HarnessDefect naming the id if there is none."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise HarnessDefect(f"no rule {rule_id!r} in the rule book") from None


def known_rule_ids(rule_ids: Iterable[str]) -> tuple[str, ...]:
    """The ids as a tuple, in order; HarnessDefect if one is unknown or none is given."""
    ids = tuple(rule_ids)
    if not ids:
        raise HarnessDefect("at least one rule id is needed")
    unknown = [i for i in ids if i not in RULES]
    if unknown:
        raise HarnessDefect(f"unknown rule id(s): {', '.join(unknown)}")
    return ids
