"""KIP-714 GetTelemetrySubscriptions on the broker: Get throttling
(kip714.subscriptions.throttle.*).

Spec: KIP-714 "Throttling and rate-limiting", "Error handling"; §C.2 step 3, ruling 4. Every case
matches its subscriptions on its own client id (or on an attribute only its own connection has) and
uses its own client instance ids.
"""

from __future__ import annotations

from kconform.codecs.errors import ErrorCode
from kconform.codecs.wire import ZERO_UUID
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.connection import ConnectionClosed
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    INTERVAL_MS,
    NONE,
    THROTTLED,
    connection,
    err,
    get,
    push,
)

# --- Get throttling (ruling 4) ------------------------------------------------------------


@case(
    "kip714.subscriptions.throttle.repeated_get",
    rules=["kip714.get.throttle.repeated"],
    title="A second Get inside PushIntervalMs: THROTTLING_QUOTA_EXCEEDED (Apache) or answered",
    spec="§C.2 step 3; ruling 4 (throttling a plain repeated Get is not in the KIP: INFO)",
    level=Level.INFO,
    requires=[Capability.TELEMETRY],
)
async def test_throttle_repeated_get(target: BrokerTarget, check: Check) -> None:
    conn = await connection(check, interval_ms=INTERVAL_MS)
    first = await get(conn)
    check.require("first Get", err(NONE), err(first.error_code))
    second = await get(conn, first.client_instance_id)
    check.observe("ErrorCode of the second Get", err(second.error_code))


@case(
    "kip714.subscriptions.throttle.response_defaults",
    rules=["kip714.get.throttle.error_fields"],
    title="A throttled Get carries no subscription: every other field at its default",
    spec="§C.2 step 3 (Apache's getErrorResponse); the KIP says nothing: INFO",
    level=Level.INFO,
    requires=[Capability.TELEMETRY],
)
async def test_throttle_response_defaults(target: BrokerTarget, check: Check) -> None:
    conn = await connection(check, interval_ms=INTERVAL_MS)
    first = await get(conn)
    check.require("first Get", err(NONE), err(first.error_code))
    second = await get(conn, first.client_instance_id)
    if second.error_code != THROTTLED:
        check.observe("second Get was not throttled", err(second.error_code))
        return
    fields = {
        "ClientInstanceId": str(second.client_instance_id),
        "SubscriptionId": second.subscription_id,
        "AcceptedCompressionTypes": list(second.accepted_compression_types),
        "PushIntervalMs": second.push_interval_ms,
        "TelemetryMaxBytes": second.telemetry_max_bytes,
        "DeltaTemporality": second.delta_temporality,
        "RequestedMetrics": list(second.requested_metrics),
    }
    defaults = {
        "ClientInstanceId": str(ZERO_UUID), "SubscriptionId": 0, "AcceptedCompressionTypes": [],
        "PushIntervalMs": 0, "TelemetryMaxBytes": 0, "DeltaTemporality": False,
        "RequestedMetrics": [],
    }  # fmt: skip
    check.observe("fields that differ from their defaults",
                  {k: v for k, v in fields.items() if v != defaults[k]})  # fmt: skip


@case(
    "kip714.subscriptions.throttle.after_push_error",
    rules=["kip714.get.throttle.after_push_error"],
    title="A Get right after UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE is answered",
    spec=(
        "KIP-714 'Error handling': for 117 and 76 \"Immediately send a "
        'GetTelemetrySubscriptionsRequest"; ruling 4 (SHOULD; Apache 3.7.0-4.0.0 throttle it)'
    ),
    level=Level.SHOULD,
    requires=[Capability.TELEMETRY],
)
async def test_throttle_after_push_error(target: BrokerTarget, check: Check) -> None:
    conn = await connection(check, interval_ms=INTERVAL_MS)
    for error, bad in ((ErrorCode.UNKNOWN_SUBSCRIPTION_ID, "subscription"),
                       (ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "compression")):  # fmt: skip
        first = await get(conn)
        check.require("first Get", err(NONE), err(first.error_code))
        instance_id, subscription_id = first.client_instance_id, first.subscription_id
        try:
            if bad == "subscription":
                failed = await push(conn, instance_id, subscription_id ^ 0x5A5A5A5A)
            else:
                failed = await push(conn, instance_id, subscription_id, compression_type=5)
            code = err(failed.error_code)
        except ConnectionClosed:
            code = "connection closed without a response"
        check.require(f"push with a wrong {bad}", err(error), code)
        again = await get(conn, instance_id)
        check.expect(f"Get right after {error.name}", err(NONE), err(again.error_code))
