"""KIP-714 GetTelemetrySubscriptions on the broker: what a client is subscribed to, advertised
limits.

Spec: KIP-714 "Metrics subscription", the GetTelemetrySubscriptionsResponseV0 schema,
"Compression"; §C.2 step 4, ruling 6. Every case matches its subscriptions on its own client id (or
on an attribute only its own connection has) and uses its own client instance ids.
"""

from __future__ import annotations

import asyncio
import functools

from kconform.codecs.wire import ZERO_UUID
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget, Capability, Subscription
from kconform.suites.broker.helpers import (
    APPLIED_RULE,
    INTERVAL_MS,
    NONE,
    SUBSCRIPTION_VISIBLE_TIMEOUT,
    TELEMETRY_ADMIN,
    add_subscription,
    err,
    eventually,
    get,
    get_after_change,
    put_subscription,
    record_never_applied,
    subscribe,
)

SUBSCRIPTION = "KIP-714 'Metrics subscription'; §C.2 step 4"

DEFAULT_INTERVAL_MS = 300_000

TELEMETRY_MAX_BYTES, DEFAULT_MAX_BYTES = "telemetry.max.bytes", 1_048_576


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
    "kip714.subscriptions.applied",
    rules=[APPLIED_RULE],
    title="A subscription the broker accepted reaches the Gets of the client it matches",
    spec=(
        "KIP-714 'Metrics subscription': subscriptions are configured as CLIENT_METRICS "
        "resources through the Admin API; the matching ones are compiled into RequestedMetrics"
    ),
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_subscription_applied(target: BrokerTarget, check: Check) -> None:
    client_id, metric = check.unique("client"), "org.apache.kafka.kconform.applied."
    match = {"client_id": client_id}
    await put_subscription(check, Subscription(check.fresh("sub"), (metric,), INTERVAL_MS, match))
    missing = []
    for index, address in enumerate(target.brokers):
        conn = await check.connect(index, client_id=client_id)
        response = await eventually(
            functools.partial(get, conn),
            lambda r: metric in r.requested_metrics,
            timeout=SUBSCRIPTION_VISIBLE_TIMEOUT,
        )
        seen = list(response.requested_metrics)
        check.expect(
            f"RequestedMetrics on broker {address.node_id} within "
            f"{SUBSCRIPTION_VISIBLE_TIMEOUT:.0f}s of the accepted subscription",
            [metric], seen,
        )  # fmt: skip
        if metric not in seen:
            missing.append(f"broker {address.node_id}: {err(response.error_code)}, metrics {seen}")
    if missing and len(missing) == len(target.brokers):
        record_never_applied(
            target, f"a subscription accepted but never in a Get after "
            f"{SUBSCRIPTION_VISIBLE_TIMEOUT:.0f}s ({'; '.join(missing)})",
        )  # fmt: skip


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
