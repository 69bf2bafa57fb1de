"""KIP-714 GetTelemetrySubscriptions on the broker: instance ids, subscription resolution, limits.

Spec: KIP-714 "Receiving broker behavior", "Metrics subscription", "SubscriptionId", the
GetTelemetrySubscriptionsResponseV0 schema and "Client metrics configuration"; §C.2,
§C.3, §C.6 and rulings 1, 4, 5, 6. Every case matches its subscriptions on its own client id
(or on an attribute only its own connection has) and uses its own client instance ids.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Mapping

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import ApiVersionsRequest
from kconform.codecs.schema import Message
from kconform.codecs.subscription import java_host_address, kafka_uuid_str
from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.connection import ConnectionClosed, KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget, Capability, Subscription
from kconform.suites.broker.helpers import (
    TELEMETRY_ADMIN,
    err,
    get,
    push,
    settled,
    subscribe,
    wait_interval,
)

RECEIVING = "KIP-714 'Receiving broker behavior'; §C.2 step 1"
SUBSCRIPTION = "KIP-714 'Metrics subscription'; §C.2 step 4"
MATCH = (
    "KIP-714 'Client metrics configuration', match: \"The values are anchored regular "
    'expressions."; §C.6 (full match)'
)
SUBSCRIPTION_ID = "KIP-714 'SubscriptionId' (CRC32C of the matched set and interval, XOR id); §C.3"
NONE, THROTTLED = ErrorCode.NONE, ErrorCode.THROTTLING_QUOTA_EXCEEDED
INTERVAL_MS = 300  # cases that must stay inside one PushIntervalMs never wait for it
WAIT_INTERVAL_MS = 100  # cases that must outlive one PushIntervalMs wait for this one
DEFAULT_INTERVAL_MS = 300_000
TELEMETRY_MAX_BYTES, DEFAULT_MAX_BYTES = "telemetry.max.bytes", 1_048_576
HANDSHAKES, HANDSHAKE_CONNECTIONS = 1000, 4


async def add_subscription(
    check: Check,
    match: Mapping[str, str],
    metrics: tuple[str, ...] = ("org.apache.kafka.",),
    interval_ms: int = INTERVAL_MS,
) -> str:
    """One more subscription (any match map), deleted when the case ends. `helpers.subscribe`
    names every subscription of a case alike, so a second call there replaces the first."""
    target = check.target
    assert target is not None
    name = check.unique("sub") + f"-{uuid.uuid4().hex[:4]}"
    await asyncio.to_thread(
        target.set_subscription, Subscription(name, metrics, interval_ms, dict(match))
    )
    check.defer(lambda: target.delete_subscription(name))
    await settled(check)
    return name


async def get_after_change(
    check: Check, conn: KafkaConnection, instance_id: uuid.UUID, interval_ms: int = INTERVAL_MS
) -> Message:
    """A Get after a subscription change; Apache answers it at once (the instance is rebuilt),
    a broker that throttles it is asked again after the interval (this case does not judge that)."""
    response = await get(conn, instance_id)
    if response.error_code == THROTTLED:
        check.note("the Get after a subscription change was throttled; asked again")
        await wait_interval(check, time.monotonic(), interval_ms)
        response = await get(conn, instance_id)
    check.require("Get after the subscription change", err(NONE), err(response.error_code))
    return response


async def client_connection(check: Check, target: BrokerTarget) -> KafkaConnection:
    """A connection for a client subscribed at INTERVAL_MS where the target lets the harness
    subscribe; elsewhere unsubscribed (PushIntervalMs 300000), which Get throttling cases allow."""
    client_id = check.unique("client")
    if target.has(Capability.CLIENT_METRICS_ADMIN):
        await subscribe(check, interval_ms=INTERVAL_MS, client_id=client_id)
    return await check.connect(client_id=client_id)


# --- client instance ids ------------------------------------------------------------------


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
    # pipelined: every connection has all its Gets in flight at once
    responses = await asyncio.gather(*(get(c) for c in conns for _ in range(per_conn)))
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


# --- what a client is subscribed to -------------------------------------------------------


@case(
    "kip714.subscriptions.no_subscription",
    rules=["kip714.get.no_subscription"],
    title="A client no subscription matches gets no metrics, the default interval and NONE",
    spec=(
        f'{SUBSCRIPTION}; KIP-714 RequestedMetrics "Empty array: No metrics subscribed"; '
        "'Client behavior': \"The default PushIntervalMs is 300000 ms\""
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_no_subscription(target: BrokerTarget, check: Check) -> None:
    response = await get(await check.connect(client_id=check.unique("unsubscribed")))
    check.expect("ErrorCode", err(NONE), err(response.error_code))
    check.expect("RequestedMetrics", [], list(response.requested_metrics))
    check.expect("PushIntervalMs", DEFAULT_INTERVAL_MS, response.push_interval_ms)
    check.expect("a ClientInstanceId is assigned", True, response.client_instance_id != ZERO_UUID)


@case(
    "kip714.subscriptions.metrics.all",
    rules=["kip714.get.metrics.all"],
    title='metrics=* is sent as exactly ["*"], also alongside a matching prefix subscription',
    spec=(
        'KIP-714 \'Client metrics configuration\': "A list containing just "*" means all metrics '
        'subscribed"; RequestedMetrics "Array[0] "*": All metrics"; ruling 1 (MUST); §C.2'
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_metrics_all(target: BrokerTarget, check: Check) -> None:
    client_id = await subscribe(check, metrics=("*",), interval_ms=INTERVAL_MS)
    conn = await check.connect(client_id=client_id)
    response = await get(conn)
    check.require("Get", err(NONE), err(response.error_code))
    check.expect("RequestedMetrics for metrics=*", ["*"], list(response.requested_metrics))
    await add_subscription(check, {"client_id": client_id}, ("org.apache.kafka.producer.",))
    after = await get_after_change(check, conn, response.client_instance_id)
    check.expect(
        "RequestedMetrics with a second, prefix subscription", ["*"], list(after.requested_metrics)
    )


@case(
    "kip714.subscriptions.metrics.union",
    rules=["kip714.get.metrics.union"],
    title="RequestedMetrics is the union of the prefixes of every matching subscription",
    spec=f'{SUBSCRIPTION}: "The resulting matching configuration entries are compiled into a list"',
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_metrics_union(target: BrokerTarget, check: Check) -> None:
    first = ("org.apache.kafka.producer.", "org.apache.kafka.consumer.fetch.")
    second = ("org.apache.kafka.consumer.fetch.", "org.apache.kafka.admin.")
    client_id = await subscribe(check, metrics=first, interval_ms=INTERVAL_MS)
    await add_subscription(check, {"client_id": client_id}, second)
    await add_subscription(check, {"client_id": check.unique("other")}, ("org.apache.kafka.x.",))
    response = await get(await check.connect(client_id=client_id))
    check.require("Get", err(NONE), err(response.error_code))
    metrics = list(response.requested_metrics)
    check.expect("RequestedMetrics (as a set)", sorted({*first, *second}), sorted(set(metrics)))
    check.observe("RequestedMetrics as sent (order and duplicates)", metrics)


@case(
    "kip714.subscriptions.interval.minimum",
    rules=["kip714.get.interval.minimum"],
    title="PushIntervalMs is the lowest interval of the matching subscriptions",
    spec=(
        'KIP-714 PushIntervalMs: "the lowest configured interval in the current subscription '
        f'set"; {SUBSCRIPTION} ("the minimum configured collection interval")'
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_interval_minimum(target: BrokerTarget, check: Check) -> None:
    client_id = await subscribe(check, interval_ms=250)
    await add_subscription(check, {"client_id": client_id}, interval_ms=150)
    await add_subscription(check, {"client_id": check.unique("other")}, interval_ms=100)
    response = await get(await check.connect(client_id=client_id))
    check.require("Get", err(NONE), err(response.error_code))
    check.expect("PushIntervalMs", 150, response.push_interval_ms)


# --- match selectors ----------------------------------------------------------------------


async def check_selector(
    check: Check,
    conn: KafkaConnection,
    selector: str,
    value: str,
    partial: str,
    *,
    isolate: Mapping[str, str] | None = None,
    instance_id: uuid.UUID = ZERO_UUID,
) -> set[str]:
    """`selector=<value>` must match; `selector=<partial>` (a substring) must not. Returns the
    RequestedMetrics of the Get that judged it."""
    extra = dict(isolate or {})
    await add_subscription(check, {**extra, selector: re.escape(value)}, ("kconform.full.",))
    await add_subscription(check, {**extra, selector: re.escape(partial)}, ("kconform.partial.",))
    if instance_id == ZERO_UUID:
        response = await get(conn)
        check.require("Get", err(NONE), err(response.error_code))
    else:
        response = await get_after_change(check, conn, instance_id)
    metrics = set(response.requested_metrics)
    check.expect(f"{selector}={value!r} (full value) matches", True, "kconform.full." in metrics)
    check.expect(
        f"{selector}={partial!r} (part of the value) does not match",
        False,
        "kconform.partial." in metrics,
    )
    return metrics


@case(
    "kip714.subscriptions.match.client_instance_id",
    rules=["kip714.get.match.anchored"],
    title="match client_instance_id: the full Uuid string matches, a part of it does not",
    spec=f"{MATCH}; Kafka matches Uuid.toString() (URL-safe base64)",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_instance_id(target: BrokerTarget, check: Check) -> None:
    conn = await check.connect()
    first = await get(conn)
    check.require("first Get", err(NONE), err(first.error_code))
    instance_id = first.client_instance_id
    text = kafka_uuid_str(instance_id)
    # the KIP's own example uses the 8-4-4-4-12 form; Apache does not match it (recorded only)
    await add_subscription(check, {"client_instance_id": str(instance_id)}, ("kconform.hex.",))
    metrics = await check_selector(
        check, conn, "client_instance_id", text, text[2:], instance_id=instance_id
    )
    check.observe("the 8-4-4-4-12 form matches too", "kconform.hex." in metrics)


@case(
    "kip714.subscriptions.match.client_id",
    rules=["kip714.get.match.anchored"],
    title="match client_id: the full client id matches, a part of it does not",
    spec=MATCH,
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_id(target: BrokerTarget, check: Check) -> None:
    client_id = check.unique("client")
    conn = await check.connect(client_id=client_id)
    await check_selector(check, conn, "client_id", client_id, client_id[1:])


async def registered_connection(
    check: Check, name: str, version: str
) -> tuple[KafkaConnection, dict[str, str]]:
    """A connection whose client software is registered through ApiVersions v3 (KIP-511), and
    the match entry that keeps other clients out of the case's subscriptions."""
    client_id = check.unique("client")
    conn = await check.connect(client_id=client_id)
    body = ApiVersionsRequest(client_software_name=name, client_software_version=version)
    response = await conn.request(body, 3)
    check.require("ApiVersions v3 registration", err(NONE), err(response.body.error_code))
    return conn, {"client_id": re.escape(client_id)}


@case(
    "kip714.subscriptions.match.client_software_name",
    rules=["kip714.get.match.anchored"],
    title="match client_software_name (from ApiVersions v3): full name matches, a part does not",
    spec=f"{MATCH}; KIP-511 ClientSoftwareName",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_software_name(target: BrokerTarget, check: Check) -> None:
    name = f"kconform-sw-{uuid.uuid4().hex[:8]}"
    conn, isolate = await registered_connection(check, name, "1.0.0")
    await check_selector(check, conn, "client_software_name", name, name[1:], isolate=isolate)


@case(
    "kip714.subscriptions.match.client_software_version",
    rules=["kip714.get.match.anchored"],
    title="match client_software_version (from ApiVersions v3): full matches, a part does not",
    spec=f"{MATCH}; KIP-511 ClientSoftwareVersion",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_software_version(target: BrokerTarget, check: Check) -> None:
    version = f"9.8.7-{uuid.uuid4().hex[:8]}"
    conn, isolate = await registered_connection(check, "kconform-suite", version)
    await check_selector(
        check, conn, "client_software_version", version, version[:-1], isolate=isolate
    )


@case(
    "kip714.subscriptions.match.client_source_address",
    rules=["kip714.get.match.anchored"],
    title="match client_source_address: the full address matches, a prefix of it does not",
    spec=f"{MATCH}; the address as InetAddress.getHostAddress() renders it",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_source_address(target: BrokerTarget, check: Check) -> None:
    client_id = check.unique("client")
    conn = await check.connect(client_id=client_id)
    address = java_host_address(conn.local_address[0])
    await check_selector(
        check, conn, "client_source_address", address, address[:-1],
        isolate={"client_id": re.escape(client_id)},
    )  # fmt: skip


@case(
    "kip714.subscriptions.match.client_source_port",
    rules=["kip714.get.match.anchored"],
    title="match client_source_port: the full port matches, a part of it does not",
    spec=MATCH,
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_source_port(target: BrokerTarget, check: Check) -> None:
    client_id = check.unique("client")
    conn = await check.connect(client_id=client_id)
    port = str(conn.local_address[1])
    await check_selector(
        check, conn, "client_source_port", port, port[1:],
        isolate={"client_id": re.escape(client_id)},
    )  # fmt: skip


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
        subscription = Subscription(name, metrics, interval_ms, {"client_id": client_id})
        await asyncio.to_thread(target.set_subscription, subscription)

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


# --- advertised limits --------------------------------------------------------------------


@case(
    "kip714.subscriptions.compression_types.valid",
    rules=["kip714.get.compression_types.valid"],
    title="AcceptedCompressionTypes lists only gzip/snappy/lz4/zstd (1-4), never NONE (0)",
    spec=(
        'KIP-714 AcceptedCompressionTypes: ids "as listed in MessageHeaderV2.Attributes.'
        'CompressionType"; "The CompressionType of NONE will not be present"'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_compression_types_valid(target: BrokerTarget, check: Check) -> None:
    response = await get(await check.connect())
    check.require("Get", err(NONE), err(response.error_code))
    types = list(response.accepted_compression_types)
    check.expect("NONE (0) listed", False, 0 in types)
    check.expect("ids outside 1-4", [], [t for t in types if t not in (1, 2, 3, 4)])


@case(
    "kip714.subscriptions.compression_types.preference_order",
    rules=["kip714.get.compression_types.preference_order"],
    title="AcceptedCompressionTypes is the KIP's default list: zstd, lz4, gzip, snappy",
    spec=(
        "KIP-714 'Compression': \"The default compression types list as returned from the "
        'broker should be: ZStd, LZ4, GZip, Snappy"'
    ),
    level=Level.SHOULD,
    requires=[Capability.TELEMETRY],
)
async def test_compression_types_order(target: BrokerTarget, check: Check) -> None:
    response = await get(await check.connect())
    check.require("Get", err(NONE), err(response.error_code))
    check.expect(
        "AcceptedCompressionTypes", [4, 3, 1, 2], list(response.accepted_compression_types)
    )


@case(
    "kip714.subscriptions.telemetry_max_bytes.config",
    rules=["kip714.get.telemetry_max_bytes"],
    title="TelemetryMaxBytes is the broker's telemetry.max.bytes, and follows a change of it",
    spec=(
        "KIP-714 TelemetryMaxBytes; 'Broker configuration' telemetry.max.bytes (default 1048576); "
        "§C.2 step 4 (a static setting in Apache: changed in server.properties, restarted)"
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY, Capability.STATIC_BROKER_CONFIG],
)
async def test_telemetry_max_bytes_config(target: BrokerTarget, check: Check) -> None:
    conn = await check.connect()
    before = await get(conn)
    check.require("Get", err(NONE), err(before.error_code))
    check.observe(
        "TelemetryMaxBytes before the change (default 1048576)", before.telemetry_max_bytes
    )
    check.defer(lambda: target.set_static_config(TELEMETRY_MAX_BYTES, None))
    await asyncio.to_thread(target.set_static_config, TELEMETRY_MAX_BYTES, "4321")
    conn = await check.connect()  # a restart closes connections
    changed = await get(conn)  # a Null id: a new instance, so not throttled
    check.require("Get after the change", err(NONE), err(changed.error_code))
    check.expect("TelemetryMaxBytes after setting 4321", 4321, changed.telemetry_max_bytes)
    await asyncio.to_thread(target.set_static_config, TELEMETRY_MAX_BYTES, None)
    conn = await check.connect()
    restored = await get(conn)
    what = "TelemetryMaxBytes after deleting the change"
    if before.telemetry_max_bytes == DEFAULT_MAX_BYTES:
        check.expect(what, DEFAULT_MAX_BYTES, restored.telemetry_max_bytes)
    else:  # configured before the case; what deleting the dynamic default leaves is unknown
        check.observe(what, restored.telemetry_max_bytes)


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
    conn = await client_connection(check, target)
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
    conn = await client_connection(check, target)
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
    conn = await client_connection(check, target)
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


@case(
    "kip714.subscriptions.delta_temporality",
    rules=["kip714.get.delta_temporality"],
    title="DeltaTemporality the broker asks for (Apache: always true)",
    spec="KIP-714 DeltaTemporality; ruling 6 (either value conforms: INFO)",
    level=Level.INFO,
    requires=[Capability.TELEMETRY],
)
async def test_delta_temporality(target: BrokerTarget, check: Check) -> None:
    response = await get(await check.connect())
    check.require("Get", err(NONE), err(response.error_code))
    check.observe("DeltaTemporality", response.delta_temporality)
