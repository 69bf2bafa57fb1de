"""Cases, levels and verdicts: how a check of one KIP rule becomes a verdict a person can trust.

A case is a pytest test decorated with `@case(...)`: a stable dotted id (never reused), the
rules it judges (ids in the rule book, `kconform.rules`; the first is the one whose level the
case has), a title that reads like the KIP sentence, the spec reference it checks, a level and
the target capabilities it needs. The case records expectations on a `Check`; the verdict
follows from the level, as the KIPs' own words do:

    MUST   violated -> fail          SHOULD violated -> non-strict
    INFO   always   -> informational (records what the target chose where the KIP leaves a choice)
    a needed capability missing -> unsupported;  the harness could not decide -> error
    a precondition the subject did not meet (a client that never sent the push a case judges,
    one broker where a case needs two) -> not-applicable, saying what was not met
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pytest

from kconform.errors import HarnessDefect
from kconform.fixtures.targets.base import Capability
from kconform.rules import BAD_VERDICTS, RULE_ID, RULES, Level, Verdict, known_rule_ids

__all__ = [
    "BAD_VERDICTS",
    "CASES",
    "CASE_MODULES",
    "CaseInfo",
    "Family",
    "Level",
    "Verdict",
    "case",
    "judges_pattern",
    "matches_level",
    "matches_pattern",
    "near_matches",
    "near_names",
    "select_cases",
    "verdict_for",
]

F = TypeVar("F", bound=Callable[..., Any])
P = TypeVar("P")

CASE_ID = RULE_ID  # case ids have the rule ids' dotted shape


@dataclass(frozen=True)
class CaseInfo:
    id: str
    title: str
    spec_ref: str
    level: Level
    kip: str
    requires: frozenset[Capability]
    kind: str  # "broker" or "client"
    rules: tuple[str, ...] = ()  # rule-book ids; the first sets the level
    # the recorded run it judges with other cases (a client recipe of `shared_run`, a target's
    # volume run); `kconform -j` keeps the cases of one recording in one worker, so the run is
    # made once and its outputs are written by one process
    shares: str | None = None
    # what the subject must show it does (kconform.fixtures.types.Shown): the case decides it
    # from the wire or --describe; expectations derive `unsupported` from a subject's lack of it
    needs_shown: frozenset[str] = frozenset()

    def require_shares(self, recording: str, what: str) -> None:
        """HarnessDefect unless this case declares `shares=recording`: undeclared, `kconform -j`
        would put it in a worker of its own, which makes `what` again beside the others."""
        if self.shares != recording:
            raise HarnessDefect(f"{self.id} judges {what} but declares shares={self.shares!r}")


CASES: dict[str, CaseInfo] = {}
CASE_MODULES: dict[str, str] = {}
"""The module that declares each case: what a matrix result's key digests as its source."""
"""Every case id known to this process, registered at import of the suite modules."""


def case(
    id: str,
    *,
    rules: Iterable[str],
    title: str,
    spec: str,
    level: Level | str,
    requires: Iterable[Capability] = (),
    kind: str = "broker",
    shares: str | None = None,
    needs_shown: Iterable[str] = (),
) -> Callable[[F], F]:
    """Declare a test function a conformance case (see the module docstring)."""
    if not CASE_ID.match(id):
        raise HarnessDefect(f"case id {id!r} is not a dotted lower-case id")
    kip = (
        id.split(".", 1)[0].upper().replace("KIP", "KIP-")
        if id.startswith("kip")
        else id.split(".")[0]
    )
    judged = known_rule_ids(rules)
    if RULES[judged[0]].level != Level(level):
        raise HarnessDefect(
            f"case {id!r} is {level} but its first rule {judged[0]} is {RULES[judged[0]].level}"
        )
    info = CaseInfo(id, title, spec, Level(level), kip, frozenset(requires), kind, judged, shares,
                    frozenset(str(s) for s in needs_shown))  # fmt: skip

    def mark(function: F) -> F:
        known = CASES.get(id)
        if known is not None and known != info:
            raise HarnessDefect(f"case id {id!r} declared twice")
        CASES[id] = info
        CASE_MODULES[id] = function.__module__
        marked: F = pytest.mark.kconform_case(info)(function)
        return marked

    return mark


@dataclass(frozen=True)
class Family(Generic[P]):
    """Cases that share one test body, declared one row each, the case id written out:

        INVALID = Family(_invalid_case)
        test_invalid_space = INVALID("kip511.apiversions.invalid.space", ("kconform client", "1"))

    so `git grep` on a case id finds the row that declares it, and pytest collects each row as
    the module-level test it is (no `globals()` loop). `make(case_id, params)` builds the row's
    test with `@case(case_id, ...)`; the family checks that it declared that very id."""

    make: Callable[[str, P], Callable[..., Any]]

    def __call__(self, case_id: str, params: P) -> Callable[..., Any]:
        test = self.make(case_id, params)
        declared = [m.args[0].id for m in getattr(test, "pytestmark", ())
                    if m.name == "kconform_case"]  # fmt: skip
        if declared != [case_id]:
            raise HarnessDefect(f"family row {case_id!r} built a test declaring {declared}")
        return test


def verdict_for(level: Level, *, violated: bool) -> Verdict:
    """The verdict of a case that ran to its end."""
    if level is Level.INFO:
        return Verdict.INFORMATIONAL
    if not violated:
        return Verdict.PASS
    return Verdict.FAIL if level is Level.MUST else Verdict.NON_STRICT


def matches_level(info: CaseInfo, level_filter: str) -> bool:
    """`--level must|should|all`: should includes MUST and SHOULD cases."""
    if level_filter == "all":
        return True
    if level_filter == "must":
        return info.level is Level.MUST
    return info.level in (Level.MUST, Level.SHOULD)


WILDCARDS = frozenset("*?[")
"""Characters that make a `--cases` pattern an fnmatch wildcard rather than an id or prefix."""


def matches_pattern(info: CaseInfo, pattern: str) -> bool:
    """Whether `--cases` pattern names this case by its id: a wildcard (`kip714.push.*`,
    `kip511.client.software_identity*`), the id itself, or a prefix that ends at a dot: written
    with it (`kip714.push.`) or as whole dotted segments (`kip714.push`, `kip511`). A pattern
    never extends an id's last segment unasked: `kip511.client.software_identity` is one case,
    not also `..._after_reset` (issue 41)."""
    if WILDCARDS.intersection(pattern):
        return fnmatch.fnmatchcase(info.id, pattern)
    if pattern.endswith("."):
        return info.id.startswith(pattern)
    return info.id == pattern or info.id.startswith(pattern + ".")


def judges_pattern(info: CaseInfo, pattern: str) -> bool:
    """Whether this case judges a rule the pattern names (a rule id or a wildcard over rule
    ids, `kip714.get.*`): rule ids look like case ids, and the README speaks in rule ids."""
    return any(fnmatch.fnmatchcase(rule, pattern) for rule in info.rules)


def select_cases(infos: Iterable[CaseInfo], patterns: Iterable[str]) -> dict[str, set[str]]:
    """{pattern: the ids of the cases it selects}, for every command that selects (`run`,
    `certify`, `fuzz`, `matrix` through the plugin, and their checks before anything starts).
    A pattern that names case ids (`matches_pattern`) selects those;
    one that names none selects the cases judging the rules it names (so `kip714.push.*` keeps
    selecting exactly the push cases, while `kip714.get.*`, the Get rules, selects the
    `kip714.subscriptions.*` cases that judge them). An empty set: the pattern matched nothing."""
    known = list(infos)
    selected: dict[str, set[str]] = {}
    for pattern in patterns:
        by_id = {c.id for c in known if matches_pattern(c, pattern)}
        selected[pattern] = by_id or {c.id for c in known if judges_pattern(c, pattern)}
    return selected


def near_matches(pattern: str, infos: Iterable[CaseInfo], count: int = 3) -> list[str]:
    """Case ids, rule ids and id prefixes (as `prefix.*`) that look like `pattern`, closest
    first, for the message that says a pattern matched nothing."""
    return near_names(pattern, (d for info in infos for d in (info.id, *info.rules)), count)


def near_names(pattern: str, dotted: Iterable[str], count: int = 3) -> list[str]:
    """The dotted names and their prefixes (as `prefix.*`) that look like `pattern`, closest
    first: one way of suggesting for every selector (`--cases`, `list --rule`)."""
    names: set[str] = set()
    for name in dotted:
        names.add(name)
        parts = name.split(".")
        names.update(".".join(parts[:n]) + ".*" for n in range(1, len(parts)))
    return difflib.get_close_matches(pattern, sorted(names), n=count, cutoff=0.6)
