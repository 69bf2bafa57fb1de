"""KIP-714 payload rules, judged on every push a client sent: OTLP, names, types, time, privacy.

Each case owns a set of the rules `kconform.codecs.otlp.validate` checks (their levels and KIP
sections are in `kconform.codecs.otlp_catalogue.RULES`); a MUST case owns only MUST rules and a
SHOULD case only SHOULD rules, so a violation's level decides the verdict as the KIP words do.
Every push of the run is decompressed, parsed and validated with the subscription the client
had (RequestedMetrics, DeltaTemporality), the previous push (cross-push rules: time, delta
continuity, cumulative counters) and the private values the harness knows (host name, the
client's pid, the user name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kconform.codecs.otlp import MetricPoint, OtlpDecodeError, flatten, parse_metrics_data
from kconform.codecs.otlp_catalogue import RULES, required_metrics
from kconform.codecs.otlp_rules import validate
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import (
    TELEMETRY,
    TOPIC,
    Recording,
    baseline_run,
    for_client,
    produce,
    require_telemetry,
    run_client,
    shared_run,
)
from kconform.suites.client.scripted import ScriptedTelemetry
from kconform.suites.client.traffic import payload_or_error


@dataclass
class Judged:
    """A recording's pushes, validated: violations per push, and every point seen."""

    violations: list[tuple[int, Any]]  # (push number, Violation)
    unreadable: list[str]
    points: list[MetricPoint]
    pushes: int


def judge(recording: Recording) -> Judged:
    """Validate every push of `recording` once (cached: several cases read the same run)."""
    if "judged" in recording.derived:
        judged_before: Judged = recording.derived["judged"]
        return judged_before
    violations: list[tuple[int, Any]] = []
    unreadable: list[str] = []
    points: list[MetricPoint] = []
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
        points.extend(current)
        previous = current or previous
    judged = Judged(violations, unreadable, points, len(pushes))
    recording.derived["judged"] = judged
    return judged


def expect_rules(check: Check, recording: Recording, rules: Sequence[str]) -> None:
    """One expectation per rule: no push breaks it (each distinct finding listed once)."""
    require_telemetry(check, recording)
    judged = judge(recording)
    check.observe("pushes validated", judged.pushes - len(judged.unreadable))
    for rule in rules:
        found = sorted({f"push {n}: {v}" for n, v in judged.violations if v.rule == rule})
        check.expect(
            f"{rule} ({RULES[rule].summary})",
            [],
            found[:12] + ([f"... {len(found) - 12} more"] if len(found) > 12 else []),
        )


# --- the runs the payload cases judge -----------------------------------------------------------


async def _cumulative_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    def rules(client_id: str) -> list[Any]:
        return [
            for_client(
                client_id,
                71,
                set_fields={"delta_temporality": False},
                name="DeltaTemporality=false",
            )
        ]

    async def record() -> Recording:
        recording = await run_client(check, client, target, produce(4.0), rules=rules)
        recording.delta_temporality = False
        return recording

    return await shared_run(check, client, target, "cumulative", record)


async def _consumer_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    scenario = Scenario.consume(TOPIC, group=check.unique("group"), seconds=5.0)
    return await shared_run(
        check, client, target, "consumer", lambda: run_client(check, client, target, scenario)
    )


PREFIXES = ("org.apache.kafka.producer.node.", "org.apache.kafka.producer.connection.creation.")


async def _prefix_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    return await run_client(check, client, target, produce(3.0), metrics=PREFIXES)


async def _empty_prefix_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    # A CLIENT_METRICS config cannot hold [""]; the proxy answers the Gets itself
    scripted = ScriptedTelemetry(500, requested_metrics=("",))
    return await run_client(check, client, target, produce(3.0), scripted=scripted)


RUNS = {"baseline": baseline_run, "cumulative": _cumulative_run}


# --- rule cases ---------------------------------------------------------------------------------

ENCODING = "KIP-714 Metrics naming and format / Encoding"
TEMPORALITY = "KIP-714 Metric aggregation temporality ('Clients must support both'); ruling 6"

RULE_CASES: dict[str, tuple[str, str, Level, str, tuple[str, ...]]] = {
    # case id suffix: (title, spec, level, run, rules)
    "valid_otlp": (
        "Every push is a valid OTLP MetricsData",
        ENCODING,
        Level.MUST,
        "baseline",
        ("otlp.payload.unknown_field", "otlp.metric.data", "otlp.point.value"),
    ),
    "naming": (
        "Kafka metrics are named org.apache.kafka.<group>.<name>, '-' made '.'",
        "KIP-714 Metrics naming and format / Naming",
        Level.MUST,
        "baseline",
        ("otlp.name.syntax", "otlp.name.prefix", "otlp.name.derivation"),
    ),
    "naming_conventions": (
        "Names are lower case, other metrics namespaced, keys use '_', "
        "only metrics with a value are sent",
        "KIP-714 Naming; Sparse metrics",
        Level.SHOULD,
        "baseline",
        ("otlp.name.case", "otlp.name.namespace", "otlp.attribute.key", "otlp.metric.sparse"),
    ),
    "metric_types": (
        "Gauge and Sum as the KIP's tables say; Sums are monotonic",
        "KIP-714 Metric types; Standard producer/consumer metrics",
        Level.MUST,
        "baseline",
        ("otlp.standard.type", "otlp.sum.monotonic", "otlp.sum.negative_delta"),
    ),
    "standard_labels": (
        "Standard metrics carry the tables' labels (node_id)",
        "KIP-714 Standard producer/consumer metrics (Labels)",
        Level.SHOULD,
        "baseline",
        ("otlp.standard.labels",),
    ),
    "resource_labels": (
        "Resource attributes come from the KIP's client label list only",
        "KIP-714 Standard client resource labels",
        Level.SHOULD,
        "baseline",
        ("otlp.resource.label",),
    ),
    "privacy": (
        "No host name, address, pid, credential or other private value",
        "KIP-714 Motivation (user privacy); PRIVACY_LEVEL in otlp_catalogue",
        Level.MUST,
        "baseline",
        tuple(r for r in RULES if r.startswith("otlp.privacy.")),
    ),
    "timestamps": (
        "Timestamps are epoch nanoseconds, start <= time, increasing push to push",
        ENCODING + "; Metric aggregation temporality",
        Level.MUST,
        "baseline",
        ("otlp.time.unit", "otlp.time.order", "otlp.time.regress"),
    ),
    "delta": (
        "With DeltaTemporality=true, Sums are DELTA",
        TEMPORALITY,
        Level.MUST,
        "baseline",
        ("otlp.temporality",),
    ),
    "delta_continuity": (
        "Each DELTA starts where the previous one ended; Sums set a start time",
        TEMPORALITY,
        Level.SHOULD,
        "baseline",
        ("otlp.delta.gap", "otlp.time.start"),
    ),
    "cumulative": (
        "With DeltaTemporality=false, Sums are CUMULATIVE and never decrease",
        TEMPORALITY + "; DeltaTemporality false injected",
        Level.MUST,
        "cumulative",
        ("otlp.temporality", "otlp.cumulative.decrease", "otlp.time.regress"),
    ),
    "cumulative_continuity": (
        "A CUMULATIVE series keeps its start time; Sums set a start time",
        TEMPORALITY + "; DeltaTemporality false injected",
        Level.SHOULD,
        "cumulative",
        ("otlp.cumulative.reset", "otlp.time.start"),
    ),
}


BOOK_RULES = {
    "valid_otlp": "kip714.client.payload.otlp",
    "naming": "kip714.client.payload.naming",
    "naming_conventions": "kip714.client.payload.naming_conventions",
    "metric_types": "kip714.client.payload.metric_types",
    "standard_labels": "kip714.client.payload.labels",
    "resource_labels": "kip714.client.payload.labels",
    "privacy": "kip714.client.payload.privacy",
    "timestamps": "kip714.client.payload.timestamps",
    "delta": "kip714.client.payload.temporality",
    "delta_continuity": "kip714.client.payload.temporality_continuity",
    "cumulative": "kip714.client.payload.temporality",
    "cumulative_continuity": "kip714.client.payload.temporality_continuity",
}
"""The rule book's rule each payload case judges; its OTLP checks (codecs.otlp_rules) are the
detailed conditions of that rule."""


def _rule_case(suffix: str) -> Any:
    title, spec, level, run, rules = RULE_CASES[suffix]
    wrong = [r for r in rules if RULES[r].level != str(level)]
    if wrong:
        raise ValueError(f"{suffix}: rules {wrong} are not {level}")
    spec_rules = "; ".join(f"{r}: {RULES[r].spec_ref}" for r in rules)

    @case(
        f"kip714.client.payload.{suffix}",
        rules=[BOOK_RULES[suffix]],
        title=title,
        spec=f"{spec} ({spec_rules})",
        level=level,
        requires=TELEMETRY,
        kind="client",
    )
    async def test(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
        recording = await RUNS[run](check, client, client_target)
        if suffix == "valid_otlp":
            require_telemetry(check, recording)
            check.expect(
                "pushes whose Metrics decompress and parse as MetricsData",
                [],
                judge(recording).unreadable[:10],
            )
        expect_rules(check, recording, rules)

    test.__name__ = f"test_{suffix}"
    return test


for _suffix in RULE_CASES:
    globals()[f"test_{_suffix}"] = _rule_case(_suffix)


# --- subscription cases -------------------------------------------------------------------------

REQUIRED = "KIP-714 Client metrics and metric labels (required metrics); otlp_catalogue.required"


def _expect_required(check: Check, recording: Recording, client_type: Any) -> None:
    require_telemetry(check, recording)
    present = {p.name for p in judge(recording).points}
    check.observe("metric names pushed", sorted(present))
    missing = [m.name for m in required_metrics(client_type) if m.name not in present]
    check.expect(f"required {client_type} metrics missing from every push", [], missing)


@case(
    "kip714.client.payload.required_producer",
    rules=["kip714.client.payload.required_metrics"],
    title='With RequestedMetrics ["*"] a producer pushes every required producer metric',
    spec=f"{REQUIRED}; ruling 1 (['*'] means all: MUST)",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_required_producer(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    _expect_required(check, await baseline_run(check, client, client_target), "producer")


@case(
    "kip714.client.payload.required_consumer",
    rules=["kip714.client.payload.required_metrics"],
    title='With RequestedMetrics ["*"] a consumer pushes every required consumer metric',
    spec=f"{REQUIRED}; ruling 1",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_required_consumer(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    _expect_required(check, await _consumer_run(check, client, client_target), "consumer")


@case(
    "kip714.client.payload.requested_only",
    rules=["kip714.client.payload.requested_only"],
    title="Only metrics matching the requested prefixes are pushed",
    spec="KIP-714 Client behavior ('update its internal metrics collection to match the "
    "received subscription (absolute update)'); Client metrics configuration (prefix match); "
    f"RequestedMetrics {list(PREFIXES)}",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_requested_only(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _prefix_run(check, client, client_target)
    expect_rules(check, recording, ("otlp.metric.unrequested",))
    names = sorted({p.name for p in judge(recording).points})
    check.observe("metric names pushed", names)


@case(
    "kip714.client.payload.empty_prefix_all",
    rules=["kip714.client.payload.empty_prefix_all"],
    title='RequestedMetrics [""] is treated as all metrics (the schema doc\'s form)',
    spec="KIP-714 GetTelemetrySubscriptionsResponse schema doc ('array[0] empty string = "
    'all\'); ruling 1 ([""] as all: SHOULD)',
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
)
async def test_empty_prefix_all(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _empty_prefix_run(check, client, client_target)
    expect_rules(check, recording, ("otlp.required.missing_empty_prefix",))
    present = {p.name for p in judge(recording).points}
    missing = [m.name for m in required_metrics("producer") if m.name not in present]
    check.expect("required producer metrics missing from every push", [], missing)
