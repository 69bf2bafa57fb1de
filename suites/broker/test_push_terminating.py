"""KIP-714 PushTelemetry on the broker: the Terminating push (kip714.push.terminating.*).

Spec: KIP-714 "Client termination", "Error handling"; rulings 2 and 3. Payloads are valid OTLP
(`helpers.payload`), compressed where the case is about compression: the librdkafka mock aborts on
anything else, and malformed payloads belong to the security suite.
"""

from __future__ import annotations

from kconform.codecs.errors import ErrorCode
from kconform.codecs.schema import Message
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    INTERVAL_MS,
    NONE,
    TELEMETRY_ADMIN,
    UNKNOWN_SUBSCRIPTION,
    add_matching_subscription,
    err,
    get,
    new_instance,
    push,
    push_code,
    session,
)

TERMINATION = (
    "KIP-714 'Client termination': \"A broker must only allow one such unthrottled metrics push "
    'for each combination of client instance ID and SubscriptionId."'
)


# --- termination --------------------------------------------------------------------------


async def terminated(check: Check, conn: KafkaConnection, sub: Message) -> None:
    """A regular push, then the Terminating push inside the interval, both accepted."""
    check.require("regular push", err(NONE), await push_code(conn, sub))
    check.require("Terminating push", err(NONE), await push_code(conn, sub, terminating=True))


@case(
    "kip714.push.terminating.single",
    rules=["kip714.push.terminating.unthrottled"],
    title="One Terminating push inside PushIntervalMs is accepted",
    spec=(
        "KIP-714 'Client termination': Terminating is set \"to avoid the receiving broker's "
        f'metrics rate-limiter discarding this out-of-profile push"; {TERMINATION}'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_terminating_single(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    check.require("regular push", err(NONE), await push_code(conn, sub))
    check.expect("Terminating push inside the interval", err(NONE),
                 await push_code(conn, sub, terminating=True))  # fmt: skip


@case(
    "kip714.push.terminating.second_rejected",
    rules=["kip714.push.terminating.once", "kip714.push.terminating.per_subscription"],
    title="No push is accepted inside the interval after the Terminating push, Terminating or not",
    spec=f"{TERMINATION}; ruling 2 (a second unthrottled Terminating push is a MUST violation)",
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_terminating_second_rejected(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    await terminated(check, conn, sub)
    code = await push_code(conn, sub, terminating=True)
    check.expect("second Terminating push", f"not {err(NONE)}", code, code != err(NONE))
    sub = await new_instance(check, conn)
    await terminated(check, conn, sub)
    code = await push_code(conn, sub)
    check.expect("regular push after Terminating", f"not {err(NONE)}", code, code != err(NONE))
    code = await push_code(conn, sub, terminating=True)
    check.expect("Terminating push after that", f"not {err(NONE)}", code, code != err(NONE))


@case(
    "kip714.push.terminating.invalid_request",
    rules=["kip714.push.terminating.invalid_request"],
    title="Pushes after the Terminating push are answered INVALID_REQUEST",
    spec=(
        "KIP-714 'Error handling': INVALID_REQUEST, \"Client sent a PushTelemetryRequest when it "
        'has already sent a Terminating request"; ruling 2 (the code is SHOULD)'
    ),
    level=Level.SHOULD,
    requires=[Capability.TELEMETRY],
)
async def test_terminating_invalid_request(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    await terminated(check, conn, sub)
    invalid = err(ErrorCode.INVALID_REQUEST)
    check.expect("Terminating push", invalid, await push_code(conn, sub, terminating=True))
    check.expect("regular push", invalid, await push_code(conn, sub))


@case(
    "kip714.push.terminating.failed_push_not_counted",
    rules=["kip714.push.terminating.per_subscription", "kip714.push.subscription_id.current"],
    title="A Terminating push that failed (wrong SubscriptionId) leaves the allowance unused",
    spec=f"{TERMINATION}; ruling 3 (MUST; Apache sets the flag on failure, KAFKA-20898)",
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_terminating_failed_push_not_counted(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    check.require("regular push", err(NONE), await push_code(conn, sub))
    wrong = sub.subscription_id ^ 0x5A5A5A5A
    failed = await push(conn, sub.client_instance_id, wrong, terminating=True)
    check.expect("Terminating push with a wrong SubscriptionId", err(UNKNOWN_SUBSCRIPTION),
                 err(failed.error_code))  # fmt: skip
    again = await get(conn, sub.client_instance_id)
    if again.error_code != NONE:  # ruling 4's SHOULD, judged elsewhere; the id is unchanged
        check.note(f"the Get after {err(failed.error_code)} got {err(again.error_code)}")
        again = sub
    check.expect("Terminating push with the right SubscriptionId", err(NONE),
                 await push_code(conn, again, terminating=True))  # fmt: skip


@case(
    "kip714.push.terminating.retry_after_subscription_change",
    rules=[
        "kip714.push.terminating.per_subscription",
        "kip714.get.throttle.after_push_error",
        "kip714.get.subscription_id.recalculated",
    ],
    title="A terminating client whose final push got UNKNOWN_SUBSCRIPTION_ID re-Gets and pushes",
    spec=(
        "KIP-714 'Client termination': \"the terminating client can choose to obtain a new "
        "subscription ID by sending a GetTelemetrySubscriptionsRequest and then immediately "
        'sending a PushTelemetryRequest with the Terminating flag set"; ruling 3 (MUST)'
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_terminating_retry_after_change(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, subscribed=True, interval_ms=INTERVAL_MS)
    check.require("regular push", err(NONE), await push_code(conn, sub))
    await add_matching_subscription(check)
    check.expect("Terminating push with the old SubscriptionId", err(UNKNOWN_SUBSCRIPTION),
                 await push_code(conn, sub, terminating=True))  # fmt: skip
    again = await get(conn, sub.client_instance_id)
    check.require("the Get right after UNKNOWN_SUBSCRIPTION_ID", err(NONE), err(again.error_code))
    check.expect("new SubscriptionId", True, again.subscription_id != sub.subscription_id)
    check.expect("Terminating push with the new SubscriptionId", err(NONE),
                 await push_code(conn, again, terminating=True))  # fmt: skip
