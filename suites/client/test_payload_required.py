"""KIP-714 payload cases about what a client sends: the required metrics of a producer and a
consumer, only the requested prefixes, and everything for an empty prefix.

Every push of the run is decompressed, parsed and validated as in test_payload.py
(`helpers_payload.judge`); these cases judge the set of metric names the pushes carry.
"""

from __future__ import annotations

from typing import Any

from kconform.codecs.otlp_catalogue import required_metrics
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.targets.base import BrokerTarget
from kconform.rules import RULES
from kconform.suites.client.helpers import (
    TELEMETRY,
    TOPIC,
    Recording,
    baseline_run,
    client_crash,
    produce,
    require_telemetry,
    run_client,
    shared_run,
)
from kconform.suites.client.helpers_payload import expect_rules, judge
from kconform.suites.client.scripted import ScriptedTelemetry


async def _consumer_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    scenario = Scenario.consume(TOPIC, group=check.unique("group"), seconds=5.0)
    return await shared_run(
        check, client, target, "consumer", lambda: run_client(check, client, target, scenario)
    )


PREFIXES = ("org.apache.kafka.producer.node.", "org.apache.kafka.producer.connection.creation.")


async def _prefix_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    return await shared_run(
        check, client, target, "prefixes",
        lambda: run_client(check, client, target, produce(3.0), metrics=PREFIXES),
    )  # fmt: skip


OTHER_TYPE = ("org.apache.kafka.consumer.",)
"""A producer's subscription naming only the other client type's metrics."""


async def _other_type_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    return await run_client(check, client, target, produce(3.0), metrics=OTHER_TYPE,
                            crash_is_evidence=True)  # fmt: skip


async def _empty_prefix_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    # A CLIENT_METRICS config cannot hold [""]; the proxy answers the Gets itself
    scripted = ScriptedTelemetry(500, requested_metrics=("",))
    return await run_client(check, client, target, produce(3.0), scripted=scripted)


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
    shares="baseline",
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
    shares="consumer",
)
async def test_required_consumer(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    _expect_required(check, await _consumer_run(check, client, client_target), "consumer")


def _expect_requested_only(check: Check, recording: Recording) -> None:
    """No push carries a metric outside the requested prefixes; the names pushed, to show."""
    expect_rules(check, recording, ("otlp.metric.unrequested",))
    check.observe("metric names pushed", sorted({p.name for p in judge(recording).points}))


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
    shares="prefixes",
)
async def test_requested_only(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    _expect_requested_only(check, await _prefix_run(check, client, client_target))


@case(
    "kip714.client.payload.required_under_prefixes",
    rules=["kip714.client.payload.required_metrics"],
    title="Asked for two prefixes, a producer pushes every required metric either one matches",
    spec=f"{REQUIRED}; Client metrics configuration (prefix match); RequestedMetrics "
    f"{list(PREFIXES)}; librdkafka #5102 (a prefix but the last read past its end)",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
    shares="prefixes",
)
async def test_required_under_prefixes(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    """Each prefix must match on its own: ["*"] takes a path of its own in librdkafka, which
    never reads a requested name, so only a list of several prefixes sees #5102."""
    recording = await _prefix_run(check, client, client_target)
    require_telemetry(check, recording)
    present = {p.name for p in judge(recording).points}
    check.observe("metric names pushed", sorted(present))
    matched = [m.name for m in required_metrics("producer") if m.name.startswith(PREFIXES)]
    check.observe("required producer metrics the prefixes match", matched)
    missing = [name for name in matched if name not in present]
    check.expect("of those, missing from every push", [], missing)


@case(
    "kip714.client.payload.other_type_only",
    rules=["kip714.client.payload.requested_only"],
    title="A producer asked for consumer metrics only pushes none of its producer metrics",
    spec="KIP-714 Client behavior ('update its internal metrics collection to match the "
    "received subscription (absolute update)'); Client metrics configuration (prefix match "
    f"on the full name, client type included); RequestedMetrics {list(OTHER_TYPE)}",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_other_type_only(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _other_type_run(check, client, client_target)
    crash = client_crash(recording.run)  # librdkafka 2.5.0 aborts when nothing matches (#4833)
    check.precondition(
        "the client stayed up (kip714.client.handshake.unmatched_tolerated judges a crash)",
        None, crash, ok=crash is None, needs="kip714.client.unmatched_subscription_tolerated",
    )  # fmt: skip
    # no push at all leaves it not-applicable: kip714.client.handshake.unmatched_empty_push
    # judges a client that goes quiet when nothing matches
    _expect_requested_only(check, recording)


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
    require_telemetry(check, recording)
    # Judged over the whole run, not per push (validate() has no client type here): a required
    # metric counts as sent when any push carries it, as in _expect_required.
    present = {p.name for p in judge(recording).points}
    check.observe("metric names pushed", sorted(present))
    missing = [m.name for m in required_metrics("producer") if m.name not in present]
    rule = "otlp.required.missing_empty_prefix"
    check.expect(
        f"{rule} ({RULES[rule].means}): required producer metrics missing from every push",
        [],
        missing,
    )
