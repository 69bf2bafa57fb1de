"""What a command is asked to select (`--cases`, `-k`, `list --kip` and `--rule`) is checked
before anything starts: a selector that names nothing, or an expression pytest cannot parse, is
a UsageError (one line, exit 2) naming the value and what is accepted, instead of a run of
nothing that only says so at the end, or a listing of "0 cases" (issue 41).

The matching itself is `kconform.engine.model.select_cases`, which the pytest plugin uses too,
so what is checked here is what runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kconform.errors import UsageError

if TYPE_CHECKING:
    from kconform.engine.model import CaseInfo

__all__ = ["check_fuzz_cases", "check_keyword", "check_kip", "check_rule", "refuse_unmatched"]

FUZZ_KIP = "fuzz"
"""The `kip` of the fuzz cases (suites/fuzz): `kconform fuzz` runs these and no others."""


def refuse_unmatched(patterns: list[str], known: list[CaseInfo], what: str, listing: str) -> None:
    """The first pattern that selects none of `known` is a UsageError naming it, the nearest
    case ids, rule ids or prefixes (or, with none near, the prefixes there are), and `listing`,
    the command that shows them all."""
    from kconform.engine.model import near_matches, select_cases

    for pattern, chosen in select_cases(known, patterns).items():
        if chosen:
            continue
        near = near_matches(pattern, known) or _prefixes(known)
        raise UsageError(
            f"--cases {pattern!r} matches no {what} id and no rule id a {what} judges; did you "
            f"mean {' or '.join(near)}? (`{listing}` shows the case ids and their rules)"
        )


def _prefixes(known: Iterable[CaseInfo], depth: int = 2) -> list[str]:
    """The id prefixes of `known` `depth` segments deep, as wildcards: what to suggest when no
    id is near what was typed."""
    return sorted({".".join(c.id.split(".")[:depth]) + ".*" for c in known})


def check_fuzz_cases(text: str) -> None:
    """`kconform fuzz --cases`: every pattern names a fuzz case (by id, prefix, wildcard or a
    rule one judges), as `run --cases` is checked; an empty list names none (the default is
    every fuzz case, `fuzz.`)."""
    from kconform.engine.model import CASES
    from kconform.runner import case_catalogue

    case_catalogue()  # imports the suites, which declare their cases
    known = [c for c in CASES.values() if c.kip == FUZZ_KIP]
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    if not patterns:
        raise UsageError(
            f"--cases {text!r} names no fuzz case: give fuzz case ids, prefixes or wildcards "
            f"({', '.join(_prefixes(known))}; default fuzz., every fuzz case)"
        )
    refuse_unmatched(patterns, known, "fuzz case", f"kconform list --kip {FUZZ_KIP}")


def check_keyword(expression: str | None) -> None:
    """`-k`: an expression pytest's own parser accepts, compiled before anything starts (pytest
    would refuse it only after the targets and clients started, leaving a report of nothing).
    One that parses but selects nothing still ends as "nothing judged" after collection."""
    if expression is None:
        return
    from _pytest.mark.expression import Expression

    try:
        Expression.compile(expression)
    except (SyntaxError, ValueError) as exc:  # pytest 8.3+: SyntaxError; before: ParseError
        reason = str(exc)
        if isinstance(exc, SyntaxError):
            reason = f"{exc.msg} at column {exc.offset}" if exc.offset else exc.msg
        raise UsageError(
            f"-k {expression!r} is not a pytest -k expression ({reason}); accepted: names or "
            "substrings of test names joined by and, or, not and parentheses"
        ) from None


def check_kip(text: str, kip: str, groups: Iterable[str]) -> None:
    """`list --kip`: a KIP the rule book declares rules of, or a group the cases belong to
    (`groups`: `fuzz`); `kip` is `text` normalized (`714` -> `KIP-714`). Any other is a
    UsageError naming those (it listed "0 cases", as if the KIP had none)."""
    from kconform.rules import RULES

    kips = sorted({rule.kip for rule in RULES.values()}.union(groups))
    if kip not in kips:
        raise UsageError(f"--kip {text!r}: no such KIP or group; known: {', '.join(kips)}")


def check_rule(pattern: str, judged: Iterable[str]) -> None:
    """`list --rule`: a rule id, or a wildcard over rule ids, that names at least one rule of
    the rule book or one the cases judge (`judged`); any other is a UsageError naming the
    nearest rule ids, as `run --cases` names the nearest case ids."""
    import fnmatch

    from kconform.engine.model import near_names
    from kconform.rules import RULES

    ids = sorted({*RULES, *judged})
    if any(fnmatch.fnmatchcase(rule, pattern) for rule in ids):
        return
    near = near_names(pattern, ids) or sorted({r.split(".", 1)[0] + ".*" for r in ids})
    raise UsageError(
        f"--rule {pattern!r} names no rule id; did you mean {' or '.join(near)}? "
        "(`kconform list` shows each case's rules; docs/rules.md the rule book)"
    )
