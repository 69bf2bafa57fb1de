"""KIP-714 GetTelemetrySubscriptions on the broker: client instance ids
(kip714.subscriptions.instance_id.*).

Spec: KIP-714 "Receiving broker behavior"; §C.2 step 1, ruling 5. Every case matches its
subscriptions on its own client id (or on an attribute only its own connection has) and uses its
own client instance ids.
"""

from __future__ import annotations

import asyncio
import time

from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    BULK_ANSWER_TIMEOUT,
    INTERVAL_MS,
    NONE,
    WAITS_FOR_BULK,
    err,
    get,
    push,
    subscribe,
    wait_interval,
)

RECEIVING = "KIP-714 'Receiving broker behavior'; §C.2 step 1"

HANDSHAKES, HANDSHAKE_CONNECTIONS = 1000, 4


# --- client instance ids ------------------------------------------------------------------


@WAITS_FOR_BULK
@case(
    "kip714.subscriptions.instance_id.assigned_unique",
    rules=["kip714.get.instance_id.assigned"],
    title="A Null ClientInstanceId gets a fresh id: never zero or reserved, unique over 1,000 Gets",
    spec=f'{RECEIVING}: "the broker will generate a unique id for the client"',
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_instance_id_assigned_unique(target: BrokerTarget, check: Check) -> None:
    conns = [await check.connect(i) for i in range(HANDSHAKE_CONNECTIONS)]
    per_conn = HANDSHAKES // HANDSHAKE_CONNECTIONS
    # pipelined: every connection has all its Gets in flight at once, the last answered after
    # all the others (on a busy machine, later than a connection's 5 s)
    responses = await asyncio.gather(
        *(get(c, timeout=BULK_ANSWER_TIMEOUT) for c in conns for _ in range(per_conn))
    )
    errors = sorted({err(r.error_code) for r in responses})
    check.expect("ErrorCode of every handshake", [err(NONE)], errors)
    ids = [r.client_instance_id for r in responses]
    check.expect("ids that are ZERO_UUID", 0, ids.count(ZERO_UUID))
    check.expect("ids that are ONE_UUID (reserved)", 0, ids.count(ONE_UUID))
    duplicates = len(ids) - len(set(ids))
    check.expect(f"duplicate ids among {len(ids)} handshakes", 0, duplicates)


@case(
    "kip714.subscriptions.instance_id.supplied_kept",
    rules=["kip714.get.instance_id.kept"],
    title="A Get carrying an issued ClientInstanceId keeps it (on another broker, if any)",
    spec=(
        "KIP-714 'Client behavior': later Gets \"must include the ClientInstanceId returned in "
        'the first response, regardless of broker"; ruling 5 (echo or Null both conform); '
        "ruling 4 (a broker may throttle a Get inside PushIntervalMs, so on one broker the case "
        "waits the interval out)"
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_instance_id_supplied_kept(target: BrokerTarget, check: Check) -> None:
    several = len(target.brokers) > 1
    if several or not target.has(Capability.CLIENT_METRICS_ADMIN):
        client_id = check.unique("client")
    else:
        client_id = await subscribe(check, interval_ms=INTERVAL_MS)
    first = await get(await check.connect(0, client_id=client_id))
    check.require("first Get", err(NONE), err(first.error_code))
    issued = first.client_instance_id
    if not several:  # the same broker's cache: the second Get must come after the interval
        check.precondition(
            "a second broker, or a PushIntervalMs short enough to wait out",
            f"<= {INTERVAL_MS} ms", first.push_interval_ms,
            ok=first.push_interval_ms <= INTERVAL_MS,
        )  # fmt: skip
        await wait_interval(check, time.monotonic(), first.push_interval_ms)
    other = await check.connect(1, client_id=client_id)
    second = await get(other, issued)
    check.expect("Get with the issued id", err(NONE), err(second.error_code))
    returned = second.client_instance_id
    check.expect_in("ClientInstanceId returned (the issued one, or Null)", {issued, ZERO_UUID},
                    returned)  # fmt: skip
    accepted = await push(other, issued, second.subscription_id)
    check.expect("push with the issued id", err(NONE), err(accepted.error_code))


@case(
    "kip714.subscriptions.instance_id.echo",
    rules=["kip714.get.instance_id.echo"],
    title="What a Get with a supplied ClientInstanceId returns: the id (Apache) or Null (KIP)",
    spec='KIP-714 GetTelemetrySubscriptionsResponseV0 ClientInstanceId "else Null"; ruling 5',
    level=Level.INFO,
    requires=[Capability.TELEMETRY],
)
async def test_instance_id_echo(target: BrokerTarget, check: Check) -> None:
    first = await get(await check.connect(0))
    check.require("first Get", err(NONE), err(first.error_code))
    second = await get(await check.connect(1), first.client_instance_id)
    returned = second.client_instance_id
    kind = {first.client_instance_id: "echoed", ZERO_UUID: "Null"}.get(returned, "another id")
    # the kind only: observations are compared across runs (mutation self-test), ids are random
    check.observe("ClientInstanceId in the response to a supplied id", kind)
