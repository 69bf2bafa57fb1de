"""What a rule is: one sentence of a KIP the harness judges, declared once, with everything a
reader needs to trust a verdict on it.

A `Rule` has a stable dotted id (`kip714.push.terminating.once`), the KIP, section and the
sentence it rests on, its level, the project's ruling where the KIP is ambiguous, what the rule
means in practice, and what known implementations do, each with its source. A rule may be a
detailed condition `part_of` another (an OTLP payload condition of a payload rule). Everything else
(cases, mutants, the reference broker's checks, the fuzz oracle, reports, `docs/`) names the id.

`Level` and `Verdict` are defined here, once: the level of a rule decides the verdict a
violation earns, as the KIPs' own words do (MUST violated -> fail, SHOULD -> non-strict, INFO ->
informational).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from kconform.errors import HarnessDefect

__all__ = [
    "BAD_VERDICTS",
    "BUG_ID",
    "RULE_ID",
    "Known",
    "Level",
    "Rule",
    "Ruling",
    "Section",
    "Verdict",
]

RULE_ID = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")


class Level(enum.StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    INFO = "INFO"


class Verdict(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NON_STRICT = "non-strict"
    INFORMATIONAL = "informational"
    UNSUPPORTED = "unsupported"
    NOT_APPLICABLE = "not-applicable"
    SKIPPED = "skipped"
    ERROR = "error"


BAD_VERDICTS = frozenset({Verdict.FAIL, Verdict.ERROR})
"""Verdicts that fail a run when no baseline says they are expected."""


BUG_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Known:
    """What one implementation (a range of releases) does about a rule, and where that is read.

    With a `bug` id it is also an entry of the bug record (issue 31): a public bug or deviation
    of that system, the releases `who` names being the ones affected, with the first releases
    that fixed it and the case meant to catch it (or, when none can, why not in `uncaught`).
    A bug no rule covers yet sits in `bugs.AWAITING_RULE` and names the `rule` it proposes.
    """

    who: str  # "Apache 3.7.0-4.0.0", "librdkafka 2.5+": the system, then the releases
    does: str  # "conforms", or what it does instead (a bug: the behaviour, in one line)
    source: str  # source file, JIRA, commit or PR it was read from
    bug: str = ""  # a bug of the record: its stable id, "ak-reget-throttled-after-117-76"
    fixed_in: str = ""  # the first fixed release(s), or "unfixed"
    case: str = ""  # the case meant to catch it
    uncaught: str = ""  # why no case can, when `case` is ""
    rule: str = ""  # a bug awaiting a rule: the id proposed for it
    missed: str = ""  # why `case` passes on a release the bug affects, measured so (the matrix)

    def __post_init__(self) -> None:
        if self.bug and not BUG_ID.match(self.bug):
            raise HarnessDefect(f"bug id {self.bug!r} is not a lower-case slug")
        if not self.bug and (self.fixed_in or self.case or self.uncaught or self.rule
                             or self.missed):  # fmt: skip
            raise HarnessDefect(f"{self.who}: fixed_in, case, uncaught, rule and missed need a "
                                "bug id")  # fmt: skip
        if self.missed and not self.case:
            raise HarnessDefect(f"bug {self.bug}: `missed` explains a case's pass; it has none")
        if self.rule and not RULE_ID.match(self.rule):
            raise HarnessDefect(f"bug {self.bug}: proposed rule {self.rule!r} is not a rule id")


@dataclass(frozen=True)
class Rule:
    id: str
    level: Level
    kip: str  # "KIP-714"
    section: str  # the KIP section, as the KIP titles it
    quote: str  # the sentence the rule rests on, as the KIP words it ("" when it is Apache's)
    means: str  # what the rule asks, in the project's words
    ruling: int | None = None  # the number of the ruling that settles an ambiguity
    behaviour: str = ""  # key of `behaviour.SECTIONS` (docs/rules.md "Apache's behaviour"), "C.4"
    known: tuple[Known, ...] = ()
    outside_suites: str = ""  # why no case can judge it within a suite's budget, if none can
    part_of: str = ""  # the rule this one is a detailed condition of; cases claim that one

    def __post_init__(self) -> None:
        if not RULE_ID.match(self.id):
            raise HarnessDefect(f"rule id {self.id!r} is not a dotted lower-case id")
        if self.part_of and not RULE_ID.match(self.part_of):
            raise HarnessDefect(f"rule {self.id}: part_of {self.part_of!r} is not a rule id")

    @property
    def citation(self) -> str:
        """The rule as one line: id, level, KIP section and quote."""
        quote = f' "{self.quote}"' if self.quote else ""
        ruling = f"; ruling {self.ruling}" if self.ruling else ""
        return f"{self.id} ({self.level}; {self.kip} '{self.section}'{quote}{ruling})"


@dataclass(frozen=True)
class Ruling:
    """How the project reads a KIP where it is ambiguous or disagrees with Apache Kafka."""

    number: int
    title: str
    text: str


@dataclass(frozen=True)
class Section:
    """One part of Apache Kafka's behaviour, in the project's words, with the sources read."""

    key: str  # "C.4"
    title: str
    text: str
    sources: str
