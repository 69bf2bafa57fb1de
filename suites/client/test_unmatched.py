"""KIP-714: a subscription that matches none of the client's metrics.

Spec: KIP-714 Client behavior ("If GetTelemetrySubscriptionsResponse.RequestedMetrics is
non-empty but does not match any metrics the client provides, then the client should send a
PushTelemetryRequest at the indicated PushIntervalMs interval with an empty metrics blob").
librdkafka 2.5.0 aborted its process on such a subscription (#4833): a client that dies of it
fails a MUST (`kip714.client.unmatched_subscription_tolerated`), one that stops pushing a SHOULD.
librdkafka up to 2.10.0 pushed a null Metrics there (#5106): Metrics is not nullable, so that
push is malformed (`kip714.client.payload.otlp`, MUST).
"""

from __future__ import annotations

from kconform.codecs.otlp import OtlpDecodeError, flatten, parse_metrics_data
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import (
    TELEMETRY,
    Recording,
    client_crash,
    produce,
    run_client,
    shared_run,
)
from kconform.suites.client.traffic import payload_or_error

UNMATCHED = "org.apache.kafka.kconform.no.such.metric."
"""A prefix no client has a metric under (the KIP's naming leaves org.apache.kafka.* to Kafka)."""
BEHAVIOR = "KIP-714 Client behavior"


async def _unmatched_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    async def record() -> Recording:
        return await run_client(check, client, target, produce(4.0), metrics=(UNMATCHED,),
                                crash_is_evidence=True)  # fmt: skip

    return await shared_run(check, client, target, "unmatched", record)


@case(
    "kip714.client.handshake.unmatched_tolerated",
    rules=["kip714.client.unmatched_subscription_tolerated"],
    title="A subscription matching none of its metrics leaves the client alive, closing as told",
    spec=f"{BEHAVIOR} (RequestedMetrics non-empty but matching no metric); subscription "
    f"{UNMATCHED!r}; librdkafka #4833",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
    shares="unmatched",
)
async def test_unmatched_tolerated(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _unmatched_run(check, client, client_target)
    check.precondition(
        "GetTelemetrySubscriptions requests the client sent", ">= 1", 0,
        ok=bool(recording.traffic.gets),
    )  # fmt: skip
    check.expect("the client's process died of its own failure", None, client_crash(recording.run))
    check.expect("the client closed as told (its 'closed' event)", True,
                 bool(recording.run.named("closed")))  # fmt: skip


@case(
    "kip714.client.handshake.unmatched_empty_push",
    rules=["kip714.client.unmatched_subscription_empty_push"],
    title="A subscription matching none of its metrics gets pushes without a metric",
    spec=f"{BEHAVIOR} ('should send a PushTelemetryRequest at the indicated PushIntervalMs "
    f"interval with an empty metrics blob'); subscription {UNMATCHED!r}, PushIntervalMs 500",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
    shares="unmatched",
)
async def test_unmatched_empty_push(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _unmatched_run(check, client, client_target)
    check.precondition(
        "the client stayed up (kip714.client.handshake.unmatched_tolerated judges a crash)",
        None, client_crash(recording.run), ok=client_crash(recording.run) is None,
        needs="kip714.client.unmatched_subscription_tolerated",
    )  # fmt: skip
    pushes = [e for e in recording.traffic.pushes if e.request is not None]
    check.expect("PushTelemetry requests within the 4 s window (PushIntervalMs 500)", True,
                 len(pushes) >= 2)  # fmt: skip
    carrying = []
    for number, push in enumerate(pushes, 1):
        payload, problem = payload_or_error(push)
        try:
            points = flatten(parse_metrics_data(payload)) if payload else []
        except OtlpDecodeError as exc:
            problem = str(exc)
            points = []
        if problem or points:
            carrying.append(f"push {number}: " + (problem or f"{len(points)} points, e.g. "
                                                   f"{points[0].name}"))  # fmt: skip
    check.expect("pushes carrying a metric (or undecodable)", [], carrying[:10])


@case(
    "kip714.client.payload.unmatched_not_null",
    rules=["kip714.client.payload.otlp"],
    title="A subscription matching none of its metrics gets pushes whose Metrics is not null",
    spec="KIP-714 PushTelemetryRequest (Metrics: bytes, not nullable); Client behavior ('an "
    f"empty metrics blob'); subscription {UNMATCHED!r}; librdkafka #5106",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
    shares="unmatched",
)
async def test_unmatched_not_null(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _unmatched_run(check, client, client_target)
    requests = [e.request for e in recording.traffic.pushes if e.request is not None]
    check.precondition("PushTelemetry requests the client sent", ">= 1", len(requests),
                       ok=bool(requests))  # fmt: skip
    nulls = [f"push {n}" for n, body in enumerate(requests, 1) if body.metrics is None]
    check.expect("pushes with a null Metrics (the field is not nullable)", [], nulls[:10])
