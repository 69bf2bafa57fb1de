"""KIP-714 PushTelemetry on the broker: a telemetry receiver that fails (kip714.push.receiver_*).

Spec: KIP-714 "PushTelemetryRequest handling / Validation" ("Validation of the encoded metrics is
the task of the ClientMetricsReceiver ... Should decoding or validation of the binary metrics
blob fail the ErrorCode will be set to InvalidRecord"), and "Metrics": the broker's
ClientMetricsPluginErrorCount counts "exceptions raised from plugin's exportMetrics()"; ruling
18; §C.4 step 7. The failure is asked for from the wire: a valid OTLP payload that names
`RECEIVER_THROW_METRIC` makes a target's receiver throw (the sink plugin's ThrowOnDemand; the
reference's receiver). A target whose receiver cannot be made to throw (the librdkafka mock has
none) is `unsupported` (Capability.RECEIVER_FAILURE).
"""

from __future__ import annotations

import time

from kconform.codecs.errors import ErrorCode
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.engine.payloads import receiver_throw_payload
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    NONE,
    WAIT_INTERVAL_MS,
    err,
    payload,
    session,
    wait_interval,
)
from kconform.suites.broker.helpers_security import (
    answered,
    expect_alive,
    exported,
    push_answered,
)

RECEIVER_FAILURE = (
    "KIP-714 'Validation': \"Should decoding or validation of the binary metrics blob fail the "
    "ErrorCode will be set to InvalidRecord\"; 'Metrics': ClientMetricsPluginErrorCount counts "
    '"exceptions raised from plugin\'s exportMetrics()"; ruling 18; §C.4 step 7'
)


@case(
    "kip714.push.receiver_failure.throws",
    rules=["kip714.push.receiver_failure"],
    title="A push the receiver throws on is INVALID_RECORD; the connection, the broker and the "
    "instance's next push after PushIntervalMs are all served",
    spec=RECEIVER_FAILURE,
    level=Level.MUST,
    requires=[Capability.TELEMETRY, Capability.CLIENT_METRICS_ADMIN, Capability.RECEIVER_FAILURE],
)
async def test_receiver_failure(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, subscribed=True, interval_ms=WAIT_INTERVAL_MS)
    bystander = await check.connect(client_id=check.unique("bystander"))
    code = await push_answered(check, conn, sub, receiver_throw_payload())
    refused_at = time.monotonic()  # the broker took the push in before it answered
    check.expect("push the receiver throws on", err(ErrorCode.INVALID_RECORD), _seen(code),
                 code == ErrorCode.INVALID_RECORD)  # fmt: skip
    check.expect("its connection afterwards", "open", "closed" if conn.closed else "open")
    await expect_alive(check, target, "a receiver failure", bystander=bystander)
    await wait_interval(check, refused_at, WAIT_INTERVAL_MS)
    if conn.closed:  # judged above; the instance's next push still deserves an answer
        conn = await check.connect(client_id=check.unique("client"))
    again = await push_answered(check, conn, sub, payload())
    check.expect("the instance's next push, after PushIntervalMs", err(NONE), _seen(again),
                 again == NONE)  # fmt: skip
    if (count := await exported(target, sub)) is not None:  # evidence, not judged here
        check.observe("pushes of this instance in the telemetry sink (the refused one never "
                      "reaches it)", count)  # fmt: skip


def _seen(code: int | None) -> str:
    """An answer as the expectations show it, or why there was none."""
    return answered(None) if code is None else err(code)
