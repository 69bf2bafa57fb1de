"""When the soak disturbs the broker and the fleet: subscription churn, client churn, restarts.

Pure: `plan()` turns the cadences into a list of timed steps. A cadence is "none", "once" or a
period ("2m"). "Once" steps are spread so that each kind has the run to itself for a while
(a subscription change at 15 % of the run, client churn at 30 %, a restart at 45 %, a rolling
restart at 60 %) and periodic ones stop at 85 %: every fault leaves time to see recovery. With
periodic subscription churn, the other faults keep half a period away from its changes.

- subscription: the churn subscription (matching the whole fleet) is created, altered and
  deleted in turn; each step changes every client's SubscriptionId (a 117 storm).
- client_churn: a fraction of the live clients each arrive (new instances), close cleanly
  (Terminating push), are killed (no Terminating push) and reconnect to another broker.
- restart: one node (in turn) restarted in place; rolling_restart: every node, one after another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kconform.errors import UsageError

ONCE_AT = {"subscription": 0.15, "client_churn": 0.30, "restart": 0.45, "rolling_restart": 0.60}
PERIODIC_UNTIL = 0.85
SUBSCRIPTION_STEPS = ("create", "alter", "delete")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h)?")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """`8h`, `20m`, `60s`, `1.5h`, `500ms` or plain seconds; ValueError otherwise."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise UsageError(f"{text!r} is not a duration (e.g. 8h, 20m, 60s)")
    return float(match.group(1)) * _UNIT[match.group(2)]


def parse_cadence(text: str) -> float | str:
    """ "none", "once" or a period in seconds."""
    value = text.strip().lower()
    if value in ("none", "once"):
        return value
    period = parse_duration(value)
    if period <= 0:
        raise UsageError(f"a period must be positive, not {text!r}")
    return period


@dataclass(frozen=True)
class Step:
    at: float  # seconds after the run started
    kind: str  # subscription | client_churn | restart | rolling_restart
    detail: str  # create/alter/delete; churn; the node id; "all"


def plan(
    duration: float,
    cadences: dict[str, float | str],
    *,
    nodes: list[int],
    can_restart: bool,
) -> list[Step]:
    """Every step of the run, in time order (see the module docstring)."""
    steps: list[Step] = []
    for kind, cadence in cadences.items():
        if kind in ("restart", "rolling_restart") and not can_restart:
            continue
        if kind == "rolling_restart" and len(nodes) < 2:
            continue
        if cadence == "none":
            continue
        if cadence == "once":
            times = [ONCE_AT[kind] * duration]
        else:
            assert isinstance(cadence, float)
            times = []
            at = cadence
            while at <= PERIODIC_UNTIL * duration:
                times.append(at)
                at += cadence
        for count, at in enumerate(times):
            steps.append(Step(round(at, 3), kind, _detail(kind, count, nodes)))
    return sorted(_apart(steps, cadences.get("subscription")), key=lambda s: (s.at, s.kind))


def _apart(steps: list[Step], period: float | str | None) -> list[Step]:
    """With periodic subscription churn, a step of another kind that would come within a
    quarter period of a subscription change moves half-way between two: a restart's recovery
    and a 117 storm are each measured on their own, not one hidden in the other."""
    if not isinstance(period, float):
        return steps
    changes = [s.at for s in steps if s.kind == "subscription"]
    moved = []
    for step in steps:
        if step.kind != "subscription" and any(abs(step.at - c) < period / 4 for c in changes):
            step = Step(round((step.at // period + 0.5) * period, 3), step.kind, step.detail)
        moved.append(step)
    return moved


def _detail(kind: str, count: int, nodes: list[int]) -> str:
    if kind == "subscription":
        return SUBSCRIPTION_STEPS[count % len(SUBSCRIPTION_STEPS)]
    if kind == "restart":
        return str(nodes[count % len(nodes)])
    if kind == "rolling_restart":
        return "all"
    return "churn"
