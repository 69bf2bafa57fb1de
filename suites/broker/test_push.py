"""KIP-714 PushTelemetry on the broker: accepted and delivered pushes, reserved instance ids.

Spec: KIP-714 PushTelemetryRequestV0 and 'Client telemetry receiver'; §C.4. Payloads are valid OTLP
(`helpers.payload`), compressed where the case is about compression: the librdkafka mock aborts on
anything else, and malformed payloads belong to the security suite.
"""

from __future__ import annotations

from kconform.codecs.errors import ErrorCode
from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    INTERVAL_MS,
    NONE,
    digest,
    err,
    payload,
    push,
    push_code,
    session,
    sink_records,
)

# --- accepted pushes ------------------------------------------------------------------------


@case(
    "kip714.push.accepted",
    rules=[
        "kip714.push.accepted",
        "kip714.get.instance_id.assigned",
        "kip714.push.compression.none_accepted",
    ],
    title="A push with the subscription's id, right after the Get, is accepted (NONE)",
    spec="KIP-714 PushTelemetryRequestV0; §C.4 step 9",
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_accepted(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    check.expect("ErrorCode", err(NONE), await push_code(conn, sub))


@case(
    "kip714.push.delivered",
    rules=["kip714.push.exported", "kip714.get.instance_id.assigned"],
    title="An accepted payload reaches the telemetry receiver intact, with its instance id",
    spec="KIP-714 'Client telemetry receiver' (exportMetrics per accepted push); §C.4 step 7",
    level=Level.MUST,
    requires=[Capability.TELEMETRY, Capability.TELEMETRY_SINK],
)
async def test_delivered(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    data = payload()
    check.require("push", err(NONE), await push_code(conn, sub, metrics=data))
    records = await sink_records(target, sub.client_instance_id)
    check.require("records the sink holds for the instance", 1, len(records))
    record = records[0]
    check.expect("payload", digest(data), digest(record.payload))
    if record.subscription_id == -1:  # a real broker's plugin API does not carry it
        check.observe("SubscriptionId (not visible to broker plugins)", "not exposed")
    else:
        check.expect("SubscriptionId", sub.subscription_id, record.subscription_id)
    check.expect("Terminating", False, record.terminating)


@case(
    "kip714.push.empty_metrics",
    rules=["kip714.push.empty_metrics"],
    title="A push with an empty Metrics blob is accepted",
    spec=(
        "KIP-714 'Client behavior': a client whose subscription matches none of its metrics "
        '"should send a PushTelemetryRequest ... with an empty metrics blob"; §C.4 step 8'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_empty_metrics(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    check.expect("ErrorCode", err(NONE), await push_code(conn, sub, metrics=b""))


# --- validation -----------------------------------------------------------------------------


@case(
    "kip714.push.instance_id.reserved",
    rules=["kip714.push.instance_id.reserved"],
    title="A push with the ZERO (Null) or ONE reserved ClientInstanceId is INVALID_REQUEST",
    spec=(
        'KIP-714 PushTelemetryRequestV0: ClientInstanceId is the id "retrieved in the first '
        'GetTelemetrySubscriptionsRequest", which is never Null or reserved (§C.2 step 1); '
        "the KIP names no code, Apache's INVALID_REQUEST is the reference (§C.4 step 0)"
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_instance_id_reserved(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    for name, reserved in (("ZERO_UUID", ZERO_UUID), ("ONE_UUID", ONE_UUID)):
        response = await push(conn, reserved, sub.subscription_id)
        check.expect(f"push as {name}", err(ErrorCode.INVALID_REQUEST), err(response.error_code))
    check.expect("push with the assigned id afterwards", err(NONE), await push_code(conn, sub))
