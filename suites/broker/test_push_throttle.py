"""KIP-714 PushTelemetry on the broker: rate limiting (kip714.push.throttle.*).

Spec: KIP-714 "Throttling and rate-limiting"; §C.4 step 3. Payloads are valid OTLP
(`helpers.payload`), compressed where the case is about compression: the librdkafka mock aborts on
anything else, and malformed payloads belong to the security suite.
"""

from __future__ import annotations

import time

from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    INTERVAL_MS,
    NONE,
    TELEMETRY_ADMIN,
    THROTTLED,
    WAIT_INTERVAL_MS,
    err,
    get,
    push_code,
    session,
    wait_interval,
)

THROTTLING = (
    "KIP-714 'Throttling and rate-limiting': \"Should the client send a push request prior to "
    "expiry of the previously calculated PushIntervalMs the broker will discard the metrics and "
    'return ... THROTTLING_QUOTA_EXCEEDED"; §C.4 step 3'
)


# --- rate limiting ------------------------------------------------------------------------


@case(
    "kip714.push.throttle.early",
    rules=["kip714.push.throttle.interval"],
    title="A second push inside PushIntervalMs after an accepted one is THROTTLING_QUOTA_EXCEEDED",
    spec=THROTTLING,
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_throttle_early(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    check.require("first push", err(NONE), await push_code(conn, sub))
    check.expect("second push inside the interval", err(THROTTLED), await push_code(conn, sub))


@case(
    "kip714.push.throttle.interval_elapsed",
    rules=["kip714.push.throttle.interval"],
    title="A push once PushIntervalMs has passed since the last accepted one is accepted",
    spec=f"{THROTTLING} (only pushes before expiry are discarded)",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_throttle_interval_elapsed(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, subscribed=True, interval_ms=WAIT_INTERVAL_MS)
    check.require("first push", err(NONE), await push_code(conn, sub))
    await wait_interval(check, time.monotonic(), WAIT_INTERVAL_MS)
    check.expect("push after PushIntervalMs", err(NONE), await push_code(conn, sub))


@case(
    "kip714.push.throttle.first_after_get",
    rules=["kip714.push.throttle.first_after_get"],
    title="The first push after each Get is accepted however soon it follows the Get",
    spec=(
        "KIP-714 'Client behavior': the first push after a Get is jittered to 0.5-1.5 x "
        "PushIntervalMs, so a Get does not restart the interval; §C.4 step 3 (Apache accepts "
        "the first push after each Get regardless of time)"
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_throttle_first_after_get(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, subscribed=True, interval_ms=WAIT_INTERVAL_MS)
    check.expect("push right after the first Get", err(NONE), await push_code(conn, sub))
    await wait_interval(check, time.monotonic(), WAIT_INTERVAL_MS)
    again = await get(conn, sub.client_instance_id)
    check.require("Get after PushIntervalMs", err(NONE), err(again.error_code))
    check.expect("push right after that Get", err(NONE), await push_code(conn, again))


@case(
    "kip714.push.throttle.get_between_pushes",
    rules=["kip714.push.throttle.interval", "kip714.get.throttle.repeated"],
    title="A Get between two pushes does not lift the rate limit on the second one",
    spec=(
        "KIP-714 'Throttling and rate-limiting': the rate limit \"ensures the client does not push "
        'telemetry more often than the configured PushIntervalMs"; whether the Get itself is '
        "answered is ruling 4's INFO, the push after it is not"
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_throttle_get_between_pushes(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    check.require("first push", err(NONE), await push_code(conn, sub))
    again = await get(conn, sub.client_instance_id)
    check.observe("ErrorCode of the Get in between", err(again.error_code))
    check.expect("second push inside the interval", err(THROTTLED), await push_code(conn, sub))


@case(
    "kip714.push.throttle.reconnected",
    rules=["kip714.push.subscription_id.stateless"],
    title="A client that reconnects between pushes goes on pushing with the same instance and "
    "SubscriptionId",
    spec=(
        "KIP-714 'SubscriptionId': \"no state needs to be persisted; the configured subscription "
        "set + client instance id is the identifier itself\"; 'Connection selection' (a client "
        '"may choose to reconnect and continue using the same broker"); a push at once on the '
        "new connection is recorded, not judged: Apache 4.0+ forgets an instance when its "
        "connection closes (the reference does too), 3.7-3.9 throttle it"
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_throttle_reconnected(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, subscribed=True, interval_ms=WAIT_INTERVAL_MS)
    check.require("first push", err(NONE), await push_code(conn, sub))
    await conn.close()
    again = await check.connect(0, client_id=check.unique("client"))
    check.observe("push on a new connection at once", await push_code(again, sub))
    await wait_interval(check, time.monotonic(), WAIT_INTERVAL_MS)
    check.expect("push on the new connection after PushIntervalMs", err(NONE),
                 await push_code(again, sub))  # fmt: skip
