"""What the client payload cases share: every push of a run decompressed, parsed and validated
(`judge`), the rules a case owns checked against it (`expect_rules`), and the runs they judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kconform.codecs.otlp import MetricPoint, OtlpDecodeError, flatten, parse_metrics_data
from kconform.codecs.otlp_validation import validate
from kconform.engine.check import Check
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.targets.base import BrokerTarget
from kconform.rules import RULES
from kconform.suites.client.helpers import (
    BASELINE_INTERVAL_MS,
    Recording,
    baseline_run,
    for_client,
    produce,
    require_telemetry,
    run_client,
    shared_run,
)
from kconform.suites.client.traffic import Exchange, payload_or_error


@dataclass(frozen=True)
class PushPoints:
    """One readable push's points, numbered as `Judged.violations` number them."""

    number: int
    push: Exchange
    points: list[MetricPoint]


@dataclass
class Judged:
    """A recording's pushes, validated: violations per push, and the points of each readable one
    (a case that reads them per push does not decode the pushes again)."""

    violations: list[tuple[int, Any]]  # (push number, Violation)
    unreadable: list[str]
    pushes: int
    per_push: list[PushPoints] = field(default_factory=list)

    @property
    def points(self) -> list[MetricPoint]:
        """Every point of every readable push, in push order."""
        return [p for push in self.per_push for p in push.points]


def judge(recording: Recording) -> Judged:
    """Validate every push of `recording` once (cached: several cases read the same run)."""
    if "judged" in recording.derived:
        judged_before: Judged = recording.derived["judged"]
        return judged_before
    violations: list[tuple[int, Any]] = []
    unreadable: list[str] = []
    per_push: list[PushPoints] = []
    previous: list[MetricPoint] | None = None
    private = recording.private_values()
    pushes = [e for e in recording.traffic.pushes if e.request is not None]
    for number, push in enumerate(pushes, 1):
        payload, problem = payload_or_error(push)
        if payload is None:
            unreadable.append(problem or str(push))
            continue
        try:
            data = parse_metrics_data(payload)
        except OtlpDecodeError as exc:
            unreadable.append(f"{push}: {exc}")
            continue
        found = validate(
            data,
            delta_temporality=recording.delta_temporality,
            requested_metrics=list(recording.requested_metrics),
            previous=previous,
            private_values=private,
        )
        violations.extend((number, v) for v in found)
        current = flatten(data)
        per_push.append(PushPoints(number, push, current))
        previous = current or previous
    judged = Judged(violations, unreadable, len(pushes), per_push)
    recording.derived["judged"] = judged
    return judged


def expect_rules(check: Check, recording: Recording, rules: Sequence[str]) -> None:
    """One expectation per rule: no push breaks it (each distinct finding listed once)."""
    require_telemetry(check, recording)
    judged = judge(recording)
    check.observe("pushes validated", judged.pushes - len(judged.unreadable))
    for rule in rules:
        level = RULES[rule].level
        found = sorted({f"push {n}: {level} {v}" for n, v in judged.violations if v.rule == rule})
        check.expect(
            f"{rule} ({RULES[rule].means})",
            [],
            found[:12] + ([f"... {len(found) - 12} more"] if len(found) > 12 else []),
        )


# --- the runs the payload cases judge -----------------------------------------------------------


async def cumulative_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    def injections(client_id: str) -> list[Any]:
        return [
            for_client(
                client_id,
                71,
                set_fields={"delta_temporality": False},
                name="DeltaTemporality=false",
            )
        ]

    async def record() -> Recording:
        recording = await run_client(check, client, target, produce(4.0), injections=injections)
        recording.delta_temporality = False
        return recording

    return await shared_run(check, client, target, "cumulative", record)


OVERLAPPING = ("org.apache.kafka.producer.", "org.apache.kafka.producer.node.")
"""Two requested prefixes that both match the producer's per-node request metrics."""


async def overlapping_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    async def record() -> Recording:
        return await run_client(check, client, target, produce(4.0), metrics=OVERLAPPING)

    return await shared_run(check, client, target, "overlapping", record)


LABELLED_CONFIG = {"client.rack": "kconform-rack-1", "transactional.id": "kconform-txn-1"}
"""The settings KIP-714's resource labels client_rack and transactional_id come from; idle, since
a producer with a transactional.id may not send before initTransactions()."""


async def labelled_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    async def record() -> Recording:
        idle = Scenario.idle(seconds=3.0)
        return await run_client(
            check, client, target, idle, config=LABELLED_CONFIG, interval_ms=BASELINE_INTERVAL_MS
        )

    return await shared_run(check, client, target, "labelled", record)


RUNS = {"baseline": baseline_run, "cumulative": cumulative_run, "overlapping": overlapping_run,
        "labelled": labelled_run}  # fmt: skip
