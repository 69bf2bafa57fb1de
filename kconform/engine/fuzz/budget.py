"""How long each fuzz case may run and how many examples it tries.

Three sources, strongest first: a wall-clock budget for the whole run (`kconform fuzz --budget`,
passed as `KCONFORM_FUZZ_BUDGET`, spread evenly over the fuzz cases collected), the Hypothesis
profile (`quick` for `make test`, `deep` for `tox -e fuzz`), and a per-kind example cap that keeps
the quick profile's fuzz cases under a minute on the reference target. Every case also has a
time cap, so a slow target cannot turn `make test` into an hour.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

from kconform.errors import UsageError

BUDGET_ENV = "KCONFORM_FUZZ_BUDGET"
"""Seconds for all fuzz cases of the run together (set by `kconform fuzz --budget`)."""
DEADLINE_ENV = "KCONFORM_FUZZ_DEADLINE"
"""Unix time the whole fuzz run should end by (set by `kconform fuzz` with the budget)."""
SEED_ENV = "KCONFORM_FUZZ_SEED"
"""Hypothesis seed for every fuzz case (set by `kconform fuzz --seed`)."""
CORPUS_ENV = "KCONFORM_FUZZ_CORPUS"
"""Where findings are saved and replayed from, instead of `suites/fuzz/regressions`."""
PIPELINE_ENV = "KCONFORM_FUZZ_PIPELINE"
"""Requests per example of the request fuzzer (`stream.Pipelining`); 1 is the old way."""
PIPELINE_DEPTH = 64

_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}
_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$")


class BudgetError(UsageError, ValueError):
    """A budget that is not `<number>[s|m|h]`."""


def parse_budget(text: str) -> float:
    """`60s`, `10m`, `2h` or a bare number of seconds, as seconds (> 0)."""
    match = _BUDGET.match(text.lower())
    if match is None:
        raise BudgetError(f"budget {text!r} is not <number>[s|m|h], e.g. 60s, 10m or 2h")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds <= 0:
        raise BudgetError(f"budget {text!r} must be more than zero")
    return seconds


@dataclass(frozen=True)
class Limits:
    """What one fuzz case may spend: examples (Hypothesis `max_examples`), seconds of search,
    and extra seconds to shrink a failure once one is found."""

    max_examples: int
    seconds: float
    shrink_seconds: float
    steps: int = 0  # stateful cases: `stateful_step_count`
    timed: bool = False  # True when a --budget sets the pace (examples then run until time)


# (max examples, time cap s, shrink s, steps) per kind and profile, without a --budget.
_PROFILES: dict[str, dict[str, tuple[int, float, float, int]]] = {
    "quick": {"request": (100, 8.0, 6.0, 0), "stateful": (80, 25.0, 15.0, 12)},
    "deep": {"request": (5000, 300.0, 120.0, 0), "stateful": (400, 600.0, 180.0, 30)},
}
UNBOUNDED_EXAMPLES = 10**9
"""With a --budget the clock stops the search; the example count must not stop it first."""


def limits(kind: str, profile: str, fuzz_cases: int, remaining: int | None = None) -> Limits:
    """The limits of one case of `kind` ("request" or "stateful") under `profile`.

    With `KCONFORM_FUZZ_BUDGET` set, the case gets a share of it, three quarters for the search
    and a quarter for shrinking: an equal share of the run's `fuzz_cases`, or, when the run has
    a deadline (`kconform fuzz` sets one), the time left divided among the `remaining` fuzz
    cases (this one included), so time a case did not need goes to the cases after it. Without
    a budget the profile's caps apply, and the example count never exceeds the Hypothesis
    profile's own `max_examples`.
    """
    from hypothesis import settings  # here, so that `kconform --help` does not load Hypothesis

    examples, cap, shrink, steps = _PROFILES.get(profile, _PROFILES["quick"])[kind]
    total = os.environ.get(BUDGET_ENV)
    if total:
        share = parse_budget(total) / max(1, fuzz_cases)
        deadline = os.environ.get(DEADLINE_ENV)
        if deadline and remaining:
            share = max(1.0, (float(deadline) - time.time()) / remaining)
        steps = _PROFILES["deep"][kind][3] if share >= 120 else steps
        return Limits(UNBOUNDED_EXAMPLES, share * 0.75, share * 0.25, steps, timed=True)
    return Limits(min(examples, settings().max_examples), cap, shrink, steps)


def pipeline_depth() -> int:
    """Requests per request-fuzzer example: `KCONFORM_FUZZ_PIPELINE`, else 64."""
    text = os.environ.get(PIPELINE_ENV, "").strip()
    return max(1, int(text)) if text else PIPELINE_DEPTH


def seed() -> int | None:
    """The run's Hypothesis seed, if one was given."""
    text = os.environ.get(SEED_ENV, "").strip()
    return int(text) if text else None
