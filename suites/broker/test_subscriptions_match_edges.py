"""KIP-714 subscriptions and instances in situations no other case made (docs/coverage.md).

Found by JaCoCo on Apache 4.4.0: a subscription without match selectors (isMatch's empty arm),
several matching subscriptions that all ask for "*" (createClientInstance's short-circuit), an
instance id rebuilt on a second connection and both connections closed (onDisconnect's null
arm). A null client id in the request header was tried for matchPatterns' null attribute:
Apache turns it into "" (RequestHeader.parse), so that case judges the answer only. Each case
uses its own metric names and client ids; the match-less subscription applies to every client
while it exists, so its case deletes it before it ends, as every case does.
"""

from __future__ import annotations

import asyncio
import functools
import time

from kconform.codecs.wire import ZERO_UUID
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.broker.helpers import (
    INTERVAL_MS,
    NONE,
    SUBSCRIPTION_VISIBLE_TIMEOUT,
    TELEMETRY_ADMIN,
    add_subscription,
    err,
    eventually,
    get,
    get_after_change,
    subscribe,
    wait_interval,
)
from kconform.suites.broker.test_subscriptions_match import MATCH

ALL = (
    'KIP-714 \'Client metrics configuration\': "A list containing just "*" means all metrics '
    "subscribed\"; 'Metrics subscription': \"The resulting matching configuration entries are "
    'compiled into a list"; ruling 1; §C.2'
)


@case(
    "kip714.subscriptions.match.absent",
    rules=["kip714.get.match.absent"],
    title="A subscription without match applies to every client, whatever its client id",
    spec="KIP-714 'Client metrics configuration', match (a client matching selector; without "
    "one nothing is selected out); §C.6",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_absent(target: BrokerTarget, check: Check) -> None:
    prefix = f"kconform.{check.unique('every')}."
    name = await add_subscription(check, {}, (prefix,))
    for label in ("first", "second"):
        conn = await check.connect(client_id=check.fresh(label))
        response = await get(conn)
        check.require(f"Get of the {label} client", err(NONE), err(response.error_code))
        check.expect(f"the {label} client (its own client id) gets the match-less metrics",
                     True, prefix in response.requested_metrics)  # fmt: skip
    # it applies to every client: gone for every broker before the next case, not only deleted
    await asyncio.to_thread(target.delete_subscription, name)
    for broker in range(len(target.brokers)):
        conn = await check.connect(broker, client_id=check.fresh("after"))
        last = await eventually(functools.partial(get, conn),
                                lambda r: prefix not in r.requested_metrics,
                                timeout=SUBSCRIPTION_VISIBLE_TIMEOUT)  # fmt: skip
        if prefix in last.requested_metrics:
            check.note(f"broker {broker} still applied the deleted match-less subscription")


@case(
    "kip714.subscriptions.match.client_id_null",
    rules=["kip714.get.match.anchored"],
    title="A client with a null client id is answered and not matched by a client_id selector",
    spec=f"{MATCH}; the request header's client_id is a nullable string (Kafka's "
    "RequestHeader.json)",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_id_null(target: BrokerTarget, check: Check) -> None:
    prefix = f"kconform.{check.unique('named')}."
    await add_subscription(check, {"client_id": check.unique("client")}, (prefix,))
    conn = await check.connect(null_client_id=True)
    response = await get(conn)
    check.require("Get with a null client id", err(NONE), err(response.error_code))
    check.expect("the client_id=<a name> subscription does not match a null client id", False,
                 prefix in response.requested_metrics)  # fmt: skip
    named = await get(await check.connect(client_id=check.unique("client")))
    check.require("Get of the named client", err(NONE), err(named.error_code))
    check.expect("the same subscription matches the named client", True,
                 prefix in named.requested_metrics)  # fmt: skip


@case(
    "kip714.subscriptions.metrics.all_overlapping",
    rules=["kip714.get.metrics.all"],
    title='Two matching metrics=* subscriptions and a prefix one: RequestedMetrics is ["*"]',
    spec=ALL,
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_metrics_all_overlapping(target: BrokerTarget, check: Check) -> None:
    client_id = await subscribe(check, metrics=("*",), interval_ms=INTERVAL_MS)
    await add_subscription(check, {"client_id": client_id}, ("*",))
    conn = await check.connect(client_id=client_id)
    response = await get(conn)
    check.require("Get", err(NONE), err(response.error_code))
    check.expect("RequestedMetrics for two metrics=* subscriptions", ["*"],
                 list(response.requested_metrics))  # fmt: skip
    await add_subscription(check, {"client_id": client_id}, ("org.apache.kafka.producer.",))
    after = await get_after_change(check, conn, response.client_instance_id)
    check.expect("RequestedMetrics with a prefix subscription as well", ["*"],
                 list(after.requested_metrics))  # fmt: skip


@case(
    "kip714.subscriptions.instance_id.shared_then_closed",
    rules=["kip714.get.instance_id.kept"],
    title="An instance id rebuilt on a second connection, both closed: a Get naming it is served",
    spec=(
        "KIP-714 'Client behavior': later Gets \"must include the ClientInstanceId returned in "
        'the first response, regardless of broker"; ruling 5 (echo or Null both conform); '
        "ruling 4 (a Get inside PushIntervalMs may be throttled: the case waits it out)"
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_instance_shared_then_closed(target: BrokerTarget, check: Check) -> None:
    """Apache maps a connection to an instance when it builds (or rebuilds, after a subscription
    change) the instance there, and drops the instance when a mapped connection closes; closing
    the first connection, then the second, leaves the second's mapping pointing at nothing
    (ClientConnectionDisconnectListener.onDisconnect's null arm, docs/coverage.md)."""
    client_id = await subscribe(check, interval_ms=INTERVAL_MS)
    first_conn = await check.connect(client_id=client_id)
    first = await get(first_conn)
    check.require("first Get", err(NONE), err(first.error_code))
    issued = first.client_instance_id
    await add_subscription(check, {"client_id": client_id}, ("org.apache.kafka.consumer.",))
    second_conn = await check.connect(client_id=client_id)
    second = await get_after_change(check, second_conn, issued)
    check.expect_in("Get naming the id on a second connection: ClientInstanceId (the id, or "
                    "Null)", {issued, ZERO_UUID}, second.client_instance_id)  # fmt: skip
    since = time.monotonic()
    await first_conn.close()
    await second_conn.close()
    # a broker that keeps the instance past its connections may throttle a Get inside the
    # interval (ruling 4): the Get comes after it
    await wait_interval(check, since, second.push_interval_ms)
    third = await get(await check.connect(client_id=client_id), issued)
    check.expect("Get naming the id once both connections closed", err(NONE),
                 err(third.error_code))  # fmt: skip
    check.expect_in("its ClientInstanceId (the id, or Null)", {issued, ZERO_UUID},
                    third.client_instance_id)  # fmt: skip
