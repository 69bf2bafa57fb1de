"""KIP-714 PushTelemetry on the broker: acceptance, rate limiting, termination, validation.

Spec: KIP-714 "Throttling and rate-limiting", "Client termination", "Error handling",
"SubscriptionId", "Compression", "Broker configuration" and the PushTelemetryRequestV0 schema;
§C.4 and rulings 2, 3, 12, 13. Payloads are valid OTLP (`helpers.payload`), compressed
where the case is about compression: the librdkafka mock aborts on anything else, and malformed
payloads belong to the security suite.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
import uuid
from typing import Literal

import pytest

from kconform.codecs.compression import compress
from kconform.codecs.errors import ErrorCode
from kconform.codecs.otlp import build_metrics_data, gauge
from kconform.codecs.schema import Message
from kconform.codecs.subscription import kafka_uuid_str
from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.engine.check import Check, Inconclusive, Unsupported
from kconform.engine.model import Level, case
from kconform.fixtures.connection import ConnectionClosed, KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget, Capability, SinkRecord, Subscription
from kconform.suites.broker.helpers import (
    TELEMETRY_ADMIN,
    err,
    get,
    payload,
    push,
    settled,
    subscribed_session,
    wait_interval,
)

THROTTLING = (
    "KIP-714 'Throttling and rate-limiting': \"Should the client send a push request prior to "
    "expiry of the previously calculated PushIntervalMs the broker will discard the metrics and "
    'return ... THROTTLING_QUOTA_EXCEEDED"; §C.4 step 3'
)
TERMINATION = (
    "KIP-714 'Client termination': \"A broker must only allow one such unthrottled metrics push "
    'for each combination of client instance ID and SubscriptionId."'
)
NONE, THROTTLED = ErrorCode.NONE, ErrorCode.THROTTLING_QUOTA_EXCEEDED
UNKNOWN_SUBSCRIPTION = ErrorCode.UNKNOWN_SUBSCRIPTION_ID
INTERVAL_MS = 300  # cases that must stay inside one PushIntervalMs never wait for it
WAIT_INTERVAL_MS = 100  # cases that must outlive one PushIntervalMs wait for this one
TELEMETRY_MAX_BYTES = "telemetry.max.bytes"
LOWERED_MAX_BYTES = 2048
MAX_PAYLOAD_BUILT = 8 << 20  # a larger advertised TelemetryMaxBytes is not worth a payload
Framing = Literal["xerial", "raw"]
CODECS: dict[str, tuple[int, Framing]] = {  # case variant: (CompressionType, snappy framing)
    "gzip": (1, "xerial"),
    "snappy_xerial": (2, "xerial"),
    "snappy_raw": (2, "raw"),  # librdkafka's framing; Java accepts it (§A.5)
    "lz4": (3, "xerial"),
    "zstd": (4, "xerial"),
}


def digest(data: bytes) -> str:
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}"


async def session(
    check: Check, target: BrokerTarget, *, interval_ms: int = INTERVAL_MS, broker: int = 0
) -> tuple[KafkaConnection, Message]:
    """A connection (client id `check.unique("client")`) and its first Get; subscribed where
    the target lets the harness subscribe (validation cases need no particular subscription)."""
    if target.has(Capability.CLIENT_METRICS_ADMIN):
        return await subscribed_session(check, interval_ms=interval_ms, broker=broker)
    conn = await check.connect(broker, client_id=check.unique("client"))
    response = await get(conn)
    check.require("first Get", err(NONE), err(response.error_code))
    return conn, response


async def new_instance(check: Check, conn: KafkaConnection) -> Message:
    """A Get with a Null id on `conn`: a new client instance, never throttled."""
    response = await get(conn)
    check.require("Get for a new instance", err(NONE), err(response.error_code))
    return response


async def push_code(
    conn: KafkaConnection,
    sub: Message,
    *,
    metrics: bytes | None = None,
    terminating: bool = False,
    compression_type: int = 0,
) -> str:
    """Push as the instance `sub` (a Get response) describes; the answer's error code, named."""
    response = await push(
        conn, sub.client_instance_id, sub.subscription_id, metrics=metrics,
        terminating=terminating, compression_type=compression_type,
    )  # fmt: skip
    return err(response.error_code)


async def sink_records(target: BrokerTarget, instance_id: uuid.UUID) -> list[SinkRecord]:
    records = await asyncio.to_thread(target.telemetry_received)
    names = {kafka_uuid_str(instance_id), str(instance_id)}
    return [r for r in records if r.client_instance_id in names]


def sized_payload(size: int) -> bytes:
    """A valid OTLP MetricsData of exactly `size` bytes (at least ~150): gauge points plus one
    metric whose name pads the rest. Names stay short; librdkafka's decoder caps them at 1 KiB."""
    now = time.time_ns()
    points = max(0, (size - 150) // 20)
    for _ in range(8):
        base = [gauge("org.apache.kafka.producer.record.queue.time.avg", 1.5, time_unix_nano=now)]
        data = build_metrics_data(
            base * points + [gauge("org.apache.kafka.p", 1.0, time_unix_nano=now)]
        )
        pad = size - len(data)
        if pad >= 0:
            name = "org.apache.kafka.p" + "x" * pad
            data = build_metrics_data(base * points + [gauge(name, 1.0, time_unix_nano=now)])
            if len(data) == size:
                return data
        points -= 1
    raise Inconclusive(f"cannot build an OTLP payload of exactly {size} bytes")


async def telemetry_limit(check: Check, target: BrokerTarget) -> tuple[KafkaConnection, Message]:
    """A session whose TelemetryMaxBytes the case can exceed: the advertised one when payloads of
    that size are reasonable (Apache's default 1 MiB is), else lowered through the static
    `telemetry.max.bytes` where the target can restart with it (Apache refuses a dynamic update:
    "Cannot update these configs dynamically", §C.2 step 4), restored after the case."""
    conn, sub = await session(check, target)
    if 0 < sub.telemetry_max_bytes <= MAX_PAYLOAD_BUILT:
        return conn, sub
    if not target.has(Capability.STATIC_BROKER_CONFIG):
        raise Unsupported(
            f"advertised TelemetryMaxBytes {sub.telemetry_max_bytes} is beyond the payloads this "
            f"case builds ({MAX_PAYLOAD_BUILT} bytes), and {target.name} cannot change the static "
            "telemetry.max.bytes"
        )
    check.defer(lambda: target.set_static_config(TELEMETRY_MAX_BYTES, None))
    await asyncio.to_thread(target.set_static_config, TELEMETRY_MAX_BYTES, str(LOWERED_MAX_BYTES))
    conn, sub = await session(check, target)
    check.require("TelemetryMaxBytes after lowering it", LOWERED_MAX_BYTES,
                  sub.telemetry_max_bytes)  # fmt: skip
    return conn, sub


async def add_matching_subscription(check: Check, target: BrokerTarget) -> None:
    """One more subscription for the case's client id: its subscription set changes."""
    name = f"{check.unique('sub')}-extra"
    match = {"client_id": check.unique("client")}
    subscription = Subscription(name, ("org.apache.kafka.consumer.",), INTERVAL_MS, match)
    await asyncio.to_thread(target.set_subscription, subscription)
    check.defer(lambda: target.delete_subscription(name))
    await settled(check)


# --- accepted pushes ------------------------------------------------------------------------


@case(
    "kip714.push.accepted",
    rules=[
        "kip714.push.accepted",
        "kip714.get.instance_id.assigned",
        "kip714.push.compression.none_accepted",
    ],
    title="A push with the subscription's id, right after the Get, is accepted (NONE)",
    spec="KIP-714 PushTelemetryRequestV0; §C.4 step 9",
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_accepted(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, target)
    check.expect("ErrorCode", err(NONE), await push_code(conn, sub))


@case(
    "kip714.push.delivered",
    rules=["kip714.push.exported", "kip714.get.instance_id.assigned"],
    title="An accepted payload reaches the telemetry receiver intact, with its instance id",
    spec="KIP-714 'Client telemetry receiver' (exportMetrics per accepted push); §C.4 step 7",
    level=Level.MUST,
    requires=[Capability.TELEMETRY, Capability.TELEMETRY_SINK],
)
async def test_delivered(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, target)
    data = payload()
    check.require("push", err(NONE), await push_code(conn, sub, metrics=data))
    records = await sink_records(target, sub.client_instance_id)
    check.require("records the sink holds for the instance", 1, len(records))
    record = records[0]
    check.expect("payload", digest(data), digest(record.payload))
    if record.subscription_id == -1:  # a real broker's plugin API does not carry it
        check.observe("SubscriptionId (not visible to broker plugins)", "not exposed")
    else:
        check.expect("SubscriptionId", sub.subscription_id, record.subscription_id)
    check.expect("Terminating", False, record.terminating)


@case(
    "kip714.push.empty_metrics",
    rules=["kip714.push.empty_metrics"],
    title="A push with an empty Metrics blob is accepted",
    spec=(
        "KIP-714 'Client behavior': a client whose subscription matches none of its metrics "
        '"should send a PushTelemetryRequest ... with an empty metrics blob"; §C.4 step 8'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_empty_metrics(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, target)
    check.expect("ErrorCode", err(NONE), await push_code(conn, sub, metrics=b""))


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
    conn, sub = await session(check, target)
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
    conn, sub = await subscribed_session(check, interval_ms=WAIT_INTERVAL_MS)
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
    conn, sub = await subscribed_session(check, interval_ms=WAIT_INTERVAL_MS)
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
    conn, sub = await session(check, target)
    check.require("first push", err(NONE), await push_code(conn, sub))
    again = await get(conn, sub.client_instance_id)
    check.observe("ErrorCode of the Get in between", err(again.error_code))
    check.expect("second push inside the interval", err(THROTTLED), await push_code(conn, sub))


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
    conn, sub = await session(check, target)
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
    conn, sub = await session(check, target)
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
    conn, sub = await session(check, target)
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
    conn, sub = await session(check, target)
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
    conn, sub = await subscribed_session(check, interval_ms=INTERVAL_MS)
    check.require("regular push", err(NONE), await push_code(conn, sub))
    await add_matching_subscription(check, target)
    check.expect("Terminating push with the old SubscriptionId", err(UNKNOWN_SUBSCRIPTION),
                 await push_code(conn, sub, terminating=True))  # fmt: skip
    again = await get(conn, sub.client_instance_id)
    check.require("the Get right after UNKNOWN_SUBSCRIPTION_ID", err(NONE), err(again.error_code))
    check.expect("new SubscriptionId", True, again.subscription_id != sub.subscription_id)
    check.expect("Terminating push with the new SubscriptionId", err(NONE),
                 await push_code(conn, again, terminating=True))  # fmt: skip


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
    conn, sub = await subscribed_session(check, interval_ms=INTERVAL_MS)
    await add_matching_subscription(check, target)
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
    _, sub = await session(check, target)
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


# --- validation -----------------------------------------------------------------------------


@case(
    "kip714.push.instance_id.reserved",
    rules=["kip714.push.instance_id.reserved"],
    title="A push with the ZERO (Null) or ONE reserved ClientInstanceId is INVALID_REQUEST",
    spec=(
        'KIP-714 PushTelemetryRequestV0: ClientInstanceId is the id "retrieved in the first '
        'GetTelemetrySubscriptionsRequest", which is never Null or reserved (§C.2 step 1); '
        "the KIP names no code, Apache's INVALID_REQUEST is the reference (§C.4 step 0)"
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_instance_id_reserved(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, target)
    for name, reserved in (("ZERO_UUID", ZERO_UUID), ("ONE_UUID", ONE_UUID)):
        response = await push(conn, reserved, sub.subscription_id)
        check.expect(f"push as {name}", err(ErrorCode.INVALID_REQUEST), err(response.error_code))
    check.expect("push with the assigned id afterwards", err(NONE), await push_code(conn, sub))


@case(
    "kip714.push.size_limit.exceeded",
    rules=["kip714.push.size_limit"],
    title="A payload of TelemetryMaxBytes is accepted; one byte more is TELEMETRY_TOO_LARGE",
    spec=(
        "KIP-714 'Error handling', TELEMETRY_TOO_LARGE; TelemetryMaxBytes \"The maximum bytes of "
        'binary data the broker accepts"; §C.4 step 6'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_size_limit_exceeded(target: BrokerTarget, check: Check) -> None:
    conn, sub = await telemetry_limit(check, target)
    limit = sub.telemetry_max_bytes
    check.expect(f"push of exactly {limit} bytes", err(NONE),
                 await push_code(conn, sub, metrics=sized_payload(limit)))  # fmt: skip
    sub = await new_instance(check, conn)
    check.expect(f"push of {limit + 1} bytes", err(ErrorCode.TELEMETRY_TOO_LARGE),
                 await push_code(conn, sub, metrics=sized_payload(limit + 1)))  # fmt: skip


@case(
    "kip714.push.size_limit.after_compression",
    rules=["kip714.push.size_limit.as_sent"],
    title="The size limit counts the bytes as sent: a small payload that inflates past it is fine",
    spec=(
        "KIP-714 'Broker configuration': telemetry.max.bytes is \"The maximum size (after "
        'compression if compression is used)"; ruling 12'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_size_limit_after_compression(target: BrokerTarget, check: Check) -> None:
    conn, sub = await telemetry_limit(check, target)
    limit = sub.telemetry_max_bytes
    types = list(sub.accepted_compression_types)
    if not types:
        pytest.skip("the target advertises no compression type")
    ctype = 4 if 4 in types else types[0]
    data = sized_payload(3 * limit)
    body = compress(data, ctype)
    if len(body) > limit:
        raise Inconclusive(f"{3 * limit} bytes compressed to {len(body)}, above {limit}")
    check.expect(f"{len(body)} bytes as sent, {len(data)} decompressed", err(NONE),
                 await push_code(conn, sub, metrics=body, compression_type=ctype))  # fmt: skip


# --- compression --------------------------------------------------------------------------


@case(
    "kip714.push.compression.unknown",
    rules=["kip714.push.compression.unsupported"],
    title="CompressionType outside 0-4 (5, 100, -1) is UNSUPPORTED_COMPRESSION_TYPE",
    spec=(
        "KIP-714 'PushTelemetryRequest handling / Validation': \"if the compression type is "
        'unsupported the response will be returned with ... UnsupportedCompressionType"; §C.4 '
        "step 5"
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_compression_unknown(target: BrokerTarget, check: Check) -> None:
    conn, _ = await session(check, target)
    for ctype in (5, 100, -1):
        if conn.closed:
            conn = await check.connect(client_id=check.unique("client"))
        sub = await new_instance(check, conn)
        try:
            observed = await push_code(conn, sub, compression_type=ctype)
        except ConnectionClosed:
            observed = "connection closed without a response"
        check.expect(f"CompressionType {ctype}", err(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
                     observed)  # fmt: skip


@case(
    "kip714.push.compression.none",
    rules=["kip714.push.compression.none_accepted"],
    title="An uncompressed push (NONE) is accepted although NONE is not advertised",
    spec=(
        'KIP-714 AcceptedCompressionTypes: NONE is not listed, "though the broker does support '
        'uncompressed client telemetry"; §C.4 step 5'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY],
)
async def test_compression_none(target: BrokerTarget, check: Check) -> None:
    conn, sub = await session(check, target)
    check.observe("AcceptedCompressionTypes", list(sub.accepted_compression_types))
    check.expect("push with CompressionType 0", err(NONE),
                 await push_code(conn, sub, compression_type=0))  # fmt: skip


def _codec_case(variant: str, ctype: int, framing: Framing) -> object:
    @case(
        f"kip714.push.compression.{variant}",
        rules=["kip714.push.compression.codecs"],
        title=f"A {variant} push of an advertised type is accepted",
        spec=(
            "KIP-714 'Compression': \"The PushTelemetryRequest.CompressionType must then be set to "
            'the corresponding compression type value"; AcceptedCompressionTypes; §A.5'
        ),
        level=Level.MUST,
        requires=[Capability.TELEMETRY],
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        conn, sub = await session(check, target)
        if ctype not in sub.accepted_compression_types:
            pytest.skip(f"{target.name} does not advertise CompressionType {ctype}")
        body = compress(payload(points=40), ctype, snappy_framing=framing)
        check.expect(f"{variant} push", err(NONE),
                     await push_code(conn, sub, metrics=body, compression_type=ctype))  # fmt: skip

    test.__name__ = f"test_compression_{variant}"
    return test


for _variant, (_ctype, _framing) in CODECS.items():
    globals()[f"test_compression_{_variant}"] = _codec_case(_variant, _ctype, _framing)


@case(
    "kip714.push.compression.decompressed",
    rules=["kip714.push.decompressed_for_receiver"],
    title="Compressed payloads reach the receiver decompressed, byte for byte, for every codec",
    spec=(
        "KIP-714 'Compression': \"Decompression of the metrics data will be performed by the "
        'broker prior to passing the data to the metrics plugin"; ruling 13 (MUST)'
    ),
    level=Level.MUST,
    requires=[Capability.TELEMETRY, Capability.TELEMETRY_SINK],
)
async def test_compression_decompressed(target: BrokerTarget, check: Check) -> None:
    conn, first = await session(check, target)
    for variant, (ctype, framing) in CODECS.items():
        if ctype not in first.accepted_compression_types:
            check.note(f"{variant}: not advertised, not pushed")
            continue
        sub = await new_instance(check, conn)
        data = payload(points=40)
        body = compress(data, ctype, snappy_framing=framing)
        code = await push_code(conn, sub, metrics=body, compression_type=ctype)
        if not check.expect(f"{variant} push", err(NONE), code):
            continue
        records = await sink_records(target, sub.client_instance_id)
        received = records[0].payload if records else b""
        check.expect(f"{variant} payload at the receiver", digest(data), digest(received))
