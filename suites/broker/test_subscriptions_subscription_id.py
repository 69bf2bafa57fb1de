"""KIP-714 GetTelemetrySubscriptions on the broker: the SubscriptionId
(kip714.subscriptions.subscription_id.*).

Spec: KIP-714 "SubscriptionId"; §C.3. Every case matches its subscriptions on its own client id (or
on an attribute only its own connection has) and uses its own client instance ids.
"""

from __future__ import annotations

import asyncio
import time

from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget, Subscription
from kconform.suites.broker.helpers import (
    INTERVAL_MS,
    NONE,
    TELEMETRY_ADMIN,
    WAIT_INTERVAL_MS,
    add_subscription,
    err,
    get,
    get_after_change,
    settled,
    subscribe,
    wait_interval,
)

SUBSCRIPTION_ID = "KIP-714 'SubscriptionId' (CRC32C of the matched set and interval, XOR id); §C.3"


# --- SubscriptionId -----------------------------------------------------------------------


@case(
    "kip714.subscriptions.subscription_id.stable",
    rules=["kip714.get.subscription_id.recalculated"],
    title="SubscriptionId stays the same while the client's subscription set does not change",
    spec=f'{SUBSCRIPTION_ID}: recalculated only for "a change for a client instance"',
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_subscription_id_stable(target: BrokerTarget, check: Check) -> None:
    client_id = await subscribe(check, interval_ms=WAIT_INTERVAL_MS)
    conn = await check.connect(client_id=client_id)
    first = await get(conn)
    check.require("first Get", err(NONE), err(first.error_code))
    instance_id = first.client_instance_id
    await add_subscription(check, {"client_id": check.unique("other")})
    after = await get_after_change(check, conn, instance_id, WAIT_INTERVAL_MS)
    check.expect("after an unrelated subscription changed", first.subscription_id,
                 after.subscription_id)  # fmt: skip
    await wait_interval(check, time.monotonic(), WAIT_INTERVAL_MS)
    later = await get(conn, instance_id)
    check.require("Get after PushIntervalMs", err(NONE), err(later.error_code))
    check.expect("one PushIntervalMs later", first.subscription_id, later.subscription_id)


@case(
    "kip714.subscriptions.subscription_id.changes",
    rules=["kip714.get.subscription_id.recalculated"],
    title="SubscriptionId changes when the matched metrics or the interval change",
    spec=f'{SUBSCRIPTION_ID}: "the SubscriptionId is recalculated" (including PushIntervalMs)',
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_subscription_id_changes(target: BrokerTarget, check: Check) -> None:
    client_id = check.unique("client")
    name = check.unique("sub")

    async def put(metrics: tuple[str, ...], interval_ms: int) -> None:
        """Replace the one subscription in place and wait until every broker applied it."""
        subscription = Subscription(name, metrics, interval_ms, {"client_id": client_id})
        await asyncio.to_thread(target.set_subscription, subscription)
        await settled(check)

    await put(("org.apache.kafka.producer.",), INTERVAL_MS)
    check.defer(lambda: target.delete_subscription(name))
    conn = await check.connect(client_id=client_id)
    first = await get(conn)
    check.require("first Get", err(NONE), err(first.error_code))
    await put(("org.apache.kafka.consumer.",), INTERVAL_MS)
    metrics = await get_after_change(check, conn, first.client_instance_id)
    check.expect("RequestedMetrics follows the change", ["org.apache.kafka.consumer."],
                 list(metrics.requested_metrics))  # fmt: skip
    check.expect("SubscriptionId after a metrics change", True,
                 metrics.subscription_id != first.subscription_id)  # fmt: skip
    await put(("org.apache.kafka.consumer.",), INTERVAL_MS + 10)
    interval = await get_after_change(check, conn, first.client_instance_id)
    earlier = (first.subscription_id, metrics.subscription_id)
    check.expect(
        "SubscriptionId after an interval change", True, interval.subscription_id not in earlier
    )


@case(
    "kip714.subscriptions.subscription_id.other_broker",
    rules=["kip714.get.subscription_id.deterministic"],
    title="Another broker computes the same SubscriptionId for the same instance and subscription",
    spec=(
        f'{SUBSCRIPTION_ID}: "no state needs to be persisted - the configured subscription set + '
        'client instance id is the identifier itself"'
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_subscription_id_other_broker(target: BrokerTarget, check: Check) -> None:
    check.precondition("brokers in the cluster", "at least 2", len(target.brokers),
                       ok=len(target.brokers) > 1)  # fmt: skip
    client_id = await subscribe(check, interval_ms=INTERVAL_MS)
    first = await get(await check.connect(0, client_id=client_id))
    check.require("Get on the first broker", err(NONE), err(first.error_code))
    other = await get(await check.connect(1, client_id=client_id), first.client_instance_id)
    check.require("Get on another broker", err(NONE), err(other.error_code))
    check.expect("SubscriptionId", first.subscription_id, other.subscription_id)
    check.expect("RequestedMetrics", sorted(first.requested_metrics),
                 sorted(other.requested_metrics))  # fmt: skip
