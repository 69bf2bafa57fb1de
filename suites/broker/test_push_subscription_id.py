"""KIP-714 PushTelemetry on the broker: the SubscriptionId a push carries
(kip714.push.subscription_id.*).

Spec: KIP-714 "SubscriptionId"; §C.3, §C.4 steps 1 and 4. Payloads are valid OTLP
(`helpers.payload`), compressed where the case is about compression: the librdkafka mock aborts on
anything else, and malformed payloads belong to the security suite.
"""

from __future__ import annotations

import random
import uuid

from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    INTERVAL_MS,
    NONE,
    TELEMETRY_ADMIN,
    UNKNOWN_SUBSCRIPTION,
    add_matching_subscription,
    err,
    get,
    push,
    push_code,
    session,
)

# --- SubscriptionId -----------------------------------------------------------------------


@case(
    "kip714.push.subscription_id.stale",
    rules=["kip714.push.subscription_id.current"],
    title="A push with the SubscriptionId from before a subscription change is 117",
    spec=(
        "KIP-714 'SubscriptionId': \"the broker will find that the received and expected "
        'SubscriptionIds differ and it will return UNKNOWN_SUBSCRIPTION_ID"; §C.4 step 4'
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_subscription_id_stale(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, subscribed=True, interval_ms=INTERVAL_MS)
    await add_matching_subscription(check)
    check.expect("push with the old SubscriptionId", err(UNKNOWN_SUBSCRIPTION),
                 await push_code(conn, sub))  # fmt: skip


@case(
    "kip714.push.subscription_id.other_broker",
    rules=["kip714.push.subscription_id.stateless", "kip714.get.subscription_id.deterministic"],
    title="Another broker accepts a push with the SubscriptionId the first broker handed out",
    spec=(
        "KIP-714 'SubscriptionId': \"no state needs to be persisted; the configured subscription "
        'set + client instance id is the identifier itself"; §C.3, C.4 step 1'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_subscription_id_other_broker(target: BrokerTarget, check: Check) -> None:
    _, sub = await session(check, interval_ms=INTERVAL_MS)
    other = await check.connect(1, client_id=check.unique("client"))
    check.expect("push on another broker", err(NONE), await push_code(other, sub))


@case(
    "kip714.push.subscription_id.unknown_instance",
    rules=["kip714.push.subscription_id.stateless"],
    title="A push from an instance id the broker never saw, with a wrong SubscriptionId: 117",
    spec="KIP-714 'Error handling', UNKNOWN_SUBSCRIPTION_ID; §C.4 steps 1 and 4",
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_subscription_id_unknown_instance(target: BrokerTarget, check: Check) -> None:
    conn = await check.connect()
    response = await push(conn, uuid.uuid4(), random.randint(1, 2**31 - 1))
    check.expect("ErrorCode", err(UNKNOWN_SUBSCRIPTION), err(response.error_code))
    after = await get(conn)
    check.expect("the broker still answers a Get", err(NONE), err(after.error_code))
