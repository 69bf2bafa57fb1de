"""KIP-714 on the broker under hostile pushes: size limits, bombs, huge, truncated, broken payloads.

Spec: KIP-714 "Broker configuration" (`telemetry.max.bytes`: "The maximum size (after
compression if compression is used) of telemetry pushed from a client to the broker"), "Error
handling" (TELEMETRY_TOO_LARGE, INVALID_RECORD), "PushTelemetryRequest handling / Validation",
the AcceptedCompressionTypes doc ("the broker does support uncompressed client telemetry");
§C.4 and rulings 11 (null Metrics) and 12 (decompression bombs).

Every case ends with the same liveness check: a NEW connection must get an ApiVersions v0
answer, whatever the hostile push did. A target that died is reported as a failed expectation
of the case that killed it (with the target's own account of its death), and as `error` in the
cases after it, which cannot even connect. Cases run in file order, so the ones that abort the
librdkafka mock (null or non-OTLP Metrics, and any payload its decoder cannot hold, §E.2)
come last.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
from typing import Any

import pytest
from opentelemetry.proto.metrics.v1 import metrics_pb2

from kconform.codecs.compression import CompressionType, compress
from kconform.codecs.errors import ErrorCode, error_name
from kconform.codecs.messages import ApiVersionsRequest, PushTelemetryRequest
from kconform.codecs.schema import Message
from kconform.codecs.wire import DecodeError, kafka_uuid_str
from kconform.engine.check import Check, Inconclusive
from kconform.engine.model import Level, case
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget, Capability, TargetError
from kconform.suites.broker.helpers import get, payload, subscribe

# These cases may kill a fragile target (they do kill the librdkafka mock, which is its real
# behaviour): the plugin runs them after every other case of the same target.
pytestmark = pytest.mark.kconform_disruptive

TELEMETRY = [Capability.TELEMETRY]
MAX_BYTES = "KIP-714 'Broker configuration': telemetry.max.bytes is the maximum size 'after "
MAX_BYTES += "compression if compression is used'; 'Error handling' TELEMETRY_TOO_LARGE; "
MAX_BYTES += "§C.4 step 6"
BOMB = "ruling 12 (healthy: MUST; rejected rather than exported: SHOULD; code: INFO); §C.4 step 7"
LIVENESS = "a new connection answers ApiVersions v0"
PUSH_TIMEOUT = 20.0  # seconds; a broker may take a while over a 5 MB payload, not forever
BOMB_EXPANDED = 64 << 20  # bytes a bomb inflates to (smaller if the broker's limit demands it)


# --- a client session, the push, and the liveness check every case ends with -------------------


async def session(check: Check, target: BrokerTarget) -> tuple[KafkaConnection, Message]:
    """A fresh client and its first Get, subscribed (where the target allows) to its client id."""
    client_id = None
    if target.has(Capability.CLIENT_METRICS_ADMIN):
        client_id = await subscribe(check)
    connection = await check.connect(client_id=client_id)
    response = await get(connection)
    check.require("first Get ErrorCode", 0, response.error_code)
    return connection, response


async def push(
    check: Check,
    connection: KafkaConnection,
    subscription: Message,
    metrics: bytes | None,
    compression_type: int = 0,
) -> int | None:
    """Push `metrics` as the session's client; its ErrorCode, or None when it got no answer."""
    body = PushTelemetryRequest(
        client_instance_id=subscription.client_instance_id,
        subscription_id=subscription.subscription_id, terminating=False,
        compression_type=compression_type, metrics=metrics,
    )  # fmt: skip
    try:
        response = await connection.request(body, 0, strict=False, timeout=PUSH_TIMEOUT)
    except (ConnectionError, TimeoutError) as exc:
        check.note(f"push not answered: {type(exc).__name__}: {exc}")
        await asyncio.sleep(0.3)  # a broker that is going down gets the time to finish
        return None
    return int(response.body.error_code)


def answered(code: int | None) -> str:
    return "no answer (connection closed or timed out)" if code is None else error_name(code)


async def expect_alive(
    check: Check, target: BrokerTarget, after: str, *, bystander: KafkaConnection | None = None
) -> bool:
    """The MUST every case ends with: the broker still serves a brand-new connection (and
    `bystander`, another client's connection that was open meanwhile, where one is given)."""
    ok = True
    if bystander is not None:
        try:
            response = await bystander.request(ApiVersionsRequest(), 0, timeout=5.0)
            seen, served = error_name(response.body.error_code), response.body.error_code == 0
        except (ConnectionError, TimeoutError, DecodeError) as exc:
            seen, served = f"{type(exc).__name__}: {exc}", False
        ok = check.expect(f"after {after}, another open connection still served", "NONE", seen,
                          served)  # fmt: skip
    try:
        connection = await check.connect(timeout=5.0)
        response = await connection.request(ApiVersionsRequest(), 0, timeout=5.0)
        observed, alive = error_name(response.body.error_code), response.body.error_code == 0
    except (ConnectionError, TimeoutError, DecodeError) as exc:
        observed, alive = f"{type(exc).__name__}: {exc}", False
        try:
            await asyncio.to_thread(target.check_alive)
        except TargetError as death:
            observed += f"; {death}"
    return check.expect(f"after {after}, {LIVENESS}", "NONE", observed, alive) and ok


async def exported(target: BrokerTarget, subscription: Message) -> int | None:
    """How many pushes of this client the target's telemetry sink holds (None: no sink)."""
    if not target.has(Capability.TELEMETRY_SINK):
        return None
    instance = kafka_uuid_str(subscription.client_instance_id)
    records = await asyncio.to_thread(target.telemetry_received)
    return sum(r.client_instance_id == instance for r in records)


def preferred_compression(subscription: Message) -> int:
    """The broker's first accepted compression type (ruling 8), or Inconclusive if none."""
    for ctype in subscription.accepted_compression_types:
        if ctype in (1, 2, 3, 4):
            return int(ctype)
    raise Inconclusive("the broker accepts no compression type; the case needs one")


# --- payloads: valid OTLP MetricsData built directly on the protobuf ---------------------------


def _data(
    name: str = "org.apache.kafka.producer.kconform",
) -> tuple[metrics_pb2.MetricsData, metrics_pb2.Metric]:
    data = metrics_pb2.MetricsData()
    metric = data.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = name
    return data, metric


def padded(size: int) -> bytes:
    """A one-point gauge padded with short labels to exactly `size` bytes of MetricsData.

    Short labels, not one long one: a decoder may cap a single string's length (the librdkafka
    mock aborts on long ones), and the size limit, not that cap, is what the cases test.
    """

    def build(labels: int, last: int) -> bytes:
        data, metric = _data()
        point = metric.gauge.data_points.add()
        point.time_unix_nano, point.as_int = 1_700_000_000_000_000_000, 1
        for i in range(labels):
            label = point.attributes.add()
            label.key, label.value.string_value = f"p{i:07x}", "x" * (last if i == 0 else 16)
        out: bytes = data.SerializeToString()
        return out

    per_label = len(build(2, 16)) - len(build(1, 16))
    for fewer in range(4):
        labels, last = max((size - len(build(0, 0))) // per_label - fewer, 1), 16
        for _ in range(6):
            out = build(labels, last)
            if len(out) == size:
                return out
            last += size - len(out)
            if not 0 <= last <= 100:
                break
    raise Inconclusive(f"cannot build a MetricsData of exactly {size} bytes")


@functools.cache
def many_points(points: int = 100_000, resource_labels: int = 1_000) -> bytes:
    """1e5 gauge points with three labels each, under a Resource with 1000 labels."""
    data, metric = _data("org.apache.kafka.producer.node.request.latency.avg")
    resource = data.resource_metrics[0].resource
    for i in range(resource_labels):
        label = resource.attributes.add()
        label.key, label.value.string_value = f"label_{i}", f"value-{i}"
    now = 1_700_000_000_000_000_000
    for i in range(points):
        point = metric.gauge.data_points.add()
        point.time_unix_nano, point.as_double = now + i, float(i % 997)
        for key, value in (("node_id", i % 7), ("topic", i % 113), ("partition", i % 31)):
            label = point.attributes.add()
            label.key, label.value.string_value = key, str(value)
    out: bytes = data.SerializeToString()
    return out


@functools.cache
def bomb(compression_type: int, expanded: int) -> bytes:
    """Valid OTLP whose bulk is `expanded` zero bytes (a bytes label), compressed."""
    data, metric = _data("org.apache.kafka.producer.bomb")
    point = metric.gauge.data_points.add()
    point.time_unix_nano, point.as_int = 1_700_000_000_000_000_000, 1
    label = point.attributes.add()
    label.key, label.value.bytes_value = "zeros", bytes(expanded)
    return compress(data.SerializeToString(), compression_type)


def fitting_bomb(compression_type: int, max_bytes: int) -> tuple[bytes, int]:
    """The largest bomb up to 64 MiB whose compressed size is within `max_bytes`."""
    expanded = BOMB_EXPANDED
    while expanded >= 1 << 20:
        metrics = bomb(compression_type, expanded)
        if len(metrics) <= max_bytes:
            return metrics, expanded
        expanded //= 2
    raise Inconclusive(f"no {compression_type=} bomb of 1 MiB or more fits {max_bytes} bytes")


def garbage(seed: int, size: int = 512) -> bytes:
    """Deterministic random bytes; none of the seeds used starts with a codec's magic number."""
    return random.Random(seed).randbytes(size)


# --- the size limit: applied to the bytes as sent --------------------------------------------


@case(
    "kip714.security.size_limit.oversized_rejected",
    rules=["kip714.push.size_limit"],
    title="A push one byte over TelemetryMaxBytes is answered TELEMETRY_TOO_LARGE, not exported",
    spec=MAX_BYTES,
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_oversized_rejected(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check, target)
    max_bytes = subscription.telemetry_max_bytes
    code = await push(check, connection, subscription, padded(max_bytes + 1))
    check.expect(f"uncompressed push of {max_bytes + 1} bytes", "TELEMETRY_TOO_LARGE",
                 answered(code), code == ErrorCode.TELEMETRY_TOO_LARGE)  # fmt: skip
    if (count := await exported(target, subscription)) is not None:
        check.expect("pushes of this client in the telemetry sink", 0, count)
    await expect_alive(check, target, "an oversized push")


@case(
    "kip714.security.size_limit.at_limit_accepted",
    rules=["kip714.push.size_limit"],
    title="A push of exactly TelemetryMaxBytes is not answered TELEMETRY_TOO_LARGE",
    spec=MAX_BYTES,
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_at_limit_accepted(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check, target)
    max_bytes = subscription.telemetry_max_bytes
    code = await push(check, connection, subscription, padded(max_bytes))
    ok = code is not None and code != ErrorCode.TELEMETRY_TOO_LARGE
    check.expect(f"uncompressed push of exactly {max_bytes} bytes", "not TELEMETRY_TOO_LARGE",
                 answered(code), ok)  # fmt: skip
    check.observe("ErrorCode", answered(code))
    await expect_alive(check, target, "a push at the limit")


@case(
    "kip714.security.size_limit.after_compression",
    rules=["kip714.push.size_limit.as_sent"],
    title="A payload over the limit uncompressed but within it compressed is not TOO_LARGE",
    spec=MAX_BYTES + "; ruling 12 (the limit is on the bytes as sent)",
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_size_limit_after_compression(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check, target)
    max_bytes, ctype = subscription.telemetry_max_bytes, preferred_compression(subscription)
    raw = padded(2 * max_bytes)
    metrics = compress(raw, ctype)
    check.require("compressed size within TelemetryMaxBytes", f"<= {max_bytes}", len(metrics),
                  len(metrics) <= max_bytes)  # fmt: skip
    code = await push(check, connection, subscription, metrics, ctype)
    check.expect(
        f"{CompressionType(ctype).name} push: {len(raw)} bytes as OTLP, {len(metrics)} as sent",
        "not TELEMETRY_TOO_LARGE", answered(code),
        code is not None and code != ErrorCode.TELEMETRY_TOO_LARGE,
    )  # fmt: skip
    check.observe("ErrorCode", answered(code))
    await expect_alive(check, target, "a well-compressed push")


@case(
    "kip714.security.many_points",
    rules=["kip714.push.size_limit", "kip714.robustness.healthy"],
    title="1e5 data points under 1000 resource labels are answered and leave the broker healthy",
    spec="KIP-714 'Throttling and rate-limiting' (protect brokers from rogue or buggy clients); "
    + MAX_BYTES,
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_many_points(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check, target)
    max_bytes, ctype = subscription.telemetry_max_bytes, preferred_compression(subscription)
    raw = await asyncio.to_thread(many_points)
    metrics = await asyncio.to_thread(compress, raw, ctype)
    check.observe("payload size: OTLP, as sent", [len(raw), len(metrics)])
    started = time.monotonic()
    code = await push(check, connection, subscription, metrics, ctype)
    # a note, not an observation: timings differ run to run, observations are compared
    check.note(f"answered in {time.monotonic() - started:.3f} s")
    check.expect("push answered", "an ErrorCode", answered(code), code is not None)
    if len(metrics) <= max_bytes:
        check.expect("within TelemetryMaxBytes as sent, so not TELEMETRY_TOO_LARGE",
                     "not TELEMETRY_TOO_LARGE", answered(code),
                     code != ErrorCode.TELEMETRY_TOO_LARGE)  # fmt: skip
    check.observe("ErrorCode", answered(code))
    await expect_alive(check, target, "a push of 1e5 points")


# --- framing and encoding the broker cannot use ----------------------------------------------


@case(
    "kip714.security.truncated_frame",
    rules=["kip714.robustness.malformed_answered", "kip714.robustness.healthy"],
    title="A frame whose size prefix (10 MiB) runs past its bytes does not stall other clients",
    spec="KIP-714 'Throttling and rate-limiting' (brokers protected from rogue clients); Kafka "
    "framing (int32 size prefix, socket.request.max.bytes 100 MiB)",
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_truncated_frame(target: BrokerTarget, check: Check) -> None:
    address = target.brokers[0]
    # a PushTelemetry header and a few body bytes, announced as a 10 MiB request
    sent = bytes.fromhex("0048 0000 00000007 0008") + b"kconform" + bytes(4)
    frame = (10 << 20).to_bytes(4, "big") + sent
    reader, writer = await asyncio.open_connection(address.host, address.port)
    try:
        check.wire_log.record(
            f"raw->broker {address.node_id}", "client->broker", frame,
            summary=f"size prefix 10485760, then {len(sent)} bytes", note="raw",
        )  # fmt: skip
        writer.write(frame)
        await writer.drain()
        await expect_alive(check, target, "a truncated frame (its connection still open)")
        try:
            data = await asyncio.wait_for(reader.read(1), 0.2)
            check.observe("the truncated frame's connection", "answered" if data else "closed")
        except TimeoutError:
            check.observe("the truncated frame's connection", "open, waiting for the rest")
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    await asyncio.sleep(0.1)
    await expect_alive(check, target, "a truncated frame (its connection closed)")


@case(
    "kip714.security.empty_metrics",
    rules=["kip714.push.empty_metrics", "kip714.robustness.healthy"],
    title="An empty Metrics blob is answered and leaves the broker healthy",
    spec="ruling 11 ('a broker must answer (not crash or close) either way'); KIP-714 "
    "'Client behavior' (an empty metrics blob when nothing matches); §C.4 step 8",
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_empty_metrics(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check, target)
    code = await push(check, connection, subscription, b"")
    check.expect("push answered", "an ErrorCode", answered(code), code is not None)
    check.observe("ErrorCode (Apache: NONE)", answered(code))
    await expect_alive(check, target, "an empty push")


@case(
    "kip714.security.unknown_compression_type",
    rules=["kip714.push.compression.unsupported"],
    title="CompressionType 9 or -1 is answered UNSUPPORTED_COMPRESSION_TYPE",
    spec="KIP-714 'PushTelemetryRequest handling / Validation': 'if the compression type is "
    "unsupported the response will be returned with ErrorCode set to UnsupportedCompressionType'",
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_unknown_compression_type(target: BrokerTarget, check: Check) -> None:
    for ctype in (9, -1):
        connection, subscription = await session(check, target)
        code = await push(check, connection, subscription, payload(), ctype)
        check.expect(f"CompressionType {ctype}", "UNSUPPORTED_COMPRESSION_TYPE", answered(code),
                     code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)  # fmt: skip
    await expect_alive(check, target, "unknown compression types")


UNDECODABLE = {
    "zstd": (CompressionType.ZSTD, garbage(714)),
    "zstd_truncated": (CompressionType.ZSTD, compress(payload(points=40), 4)[:-9]),
    "gzip": (CompressionType.GZIP, garbage(715)),
    "lz4": (CompressionType.LZ4, garbage(716)),
}


@case(
    "kip714.security.undecodable_compressed",
    rules=["kip714.push.invalid_record"],
    title="Compressed Metrics that do not decompress are answered INVALID_RECORD, not exported",
    spec="KIP-714 'Validation': 'Should decoding or validation of the binary metrics blob fail "
    "the ErrorCode will be set to InvalidRecord'; 'Error handling' INVALID_RECORD; §C.4 step 7",
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_undecodable_compressed(target: BrokerTarget, check: Check) -> None:
    for variant, (ctype, metrics) in UNDECODABLE.items():
        connection, subscription = await session(check, target)
        if ctype not in subscription.accepted_compression_types:
            check.note(f"{variant}: {ctype.name} not accepted by the broker, skipped")
            continue
        code = await push(check, connection, subscription, metrics, ctype)
        check.expect(f"{variant} ({len(metrics)} bytes)", "INVALID_RECORD", answered(code),
                     code == ErrorCode.INVALID_RECORD)  # fmt: skip
        if (count := await exported(target, subscription)) is not None:
            check.expect(f"{variant}: pushes in the telemetry sink", 0, count)
    await expect_alive(check, target, "undecodable compressed payloads")


# --- what aborts the librdkafka mock (§E.2): keep these last -------------------------------


@case(
    "kip714.security.null_metrics",
    rules=["kip714.robustness.malformed_answered", "kip714.robustness.healthy"],
    title="A push with null Metrics is answered or that connection closed; the broker lives on",
    spec="ruling 11 (Metrics is non-nullable: answering with any code or closing that one "
    "connection both conform; the MUST is serving other and new connections; which of the two is "
    "INFO). Apache 3.7.0-4.1.0: the request parser rejects the null and closes the connection",
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_null_metrics(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check, target)
    bystander, _ = await session(check, target)  # another client's connection, open meanwhile
    code = await push(check, connection, subscription, None)
    outcome = answered(code) if code is not None else "connection closed"
    check.expect("push answered or its connection closed", "either", outcome,
                 code is not None or connection.closed)  # fmt: skip
    check.observe("what the broker did (Apache: closes the connection)", outcome)
    await expect_alive(check, target, "a null Metrics push", bystander=bystander)


@case(
    "kip714.security.non_otlp_uncompressed",
    rules=["kip714.push.compression.none_accepted", "kip714.robustness.healthy"],
    title="Uncompressed bytes that are not OTLP are answered (the code is the broker's choice)",
    spec="KIP-714 AcceptedCompressionTypes ('the broker does support uncompressed client "
    "telemetry'); 'Validation' is the receiver's task; §C.4 step 7 (Apache never parses OTLP: "
    "NONE)",
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_non_otlp_uncompressed(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check, target)
    code = await push(check, connection, subscription, b"test-data")
    check.expect("push answered", "an ErrorCode", answered(code), code is not None)
    check.expect("CompressionType NONE supported", "not UNSUPPORTED_COMPRESSION_TYPE",
                 answered(code), code != ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)  # fmt: skip
    check.observe("ErrorCode (Apache: NONE; a validating receiver: INVALID_RECORD)", answered(code))
    await expect_alive(check, target, "a non-OTLP push")


async def push_bomb(
    check: Check, target: BrokerTarget, ctype: CompressionType
) -> tuple[int | None, int | None]:
    """Push a bomb fitting the broker's limit; its ErrorCode and how many pushes were exported."""
    connection, subscription = await session(check, target)
    if ctype not in subscription.accepted_compression_types:
        raise Inconclusive(f"the broker does not accept {ctype.name}")
    metrics, expanded = await asyncio.to_thread(
        fitting_bomb, ctype, subscription.telemetry_max_bytes
    )
    check.observe(f"{ctype.name} bomb: bytes as sent, as inflated", [len(metrics), expanded])
    code = await push(check, connection, subscription, metrics, ctype)
    return code, await exported(target, subscription)


def _bomb_case(ctype: CompressionType) -> Any:
    name = ctype.name.lower()

    @case(
        f"kip714.security.bomb.{name}",
        rules=["kip714.robustness.healthy", "kip714.push.bomb_rejected"],
        title=f"A tiny {name} payload inflating to 64 MiB leaves the broker healthy",
        spec=BOMB,
        level=Level.MUST,
        requires=TELEMETRY,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        code, _ = await push_bomb(check, target, ctype)
        check.observe(
            "ErrorCode (ruling 12: INFO; Apache 4.1: TELEMETRY_TOO_LARGE)", answered(code)
        )
        await expect_alive(check, target, f"a {name} bomb")

    test.__name__ = f"test_bomb_{name}"
    return test


test_bomb_zstd = _bomb_case(CompressionType.ZSTD)
test_bomb_gzip = _bomb_case(CompressionType.GZIP)


@case(
    "kip714.security.bomb.not_exported",
    rules=["kip714.push.bomb_rejected"],
    title="Decompression bombs are rejected with an error rather than exported",
    spec=BOMB,
    level=Level.SHOULD,
    requires=TELEMETRY,
)
async def test_bomb_not_exported(target: BrokerTarget, check: Check) -> None:
    for ctype in (CompressionType.ZSTD, CompressionType.GZIP):
        code, count = await push_bomb(check, target, ctype)
        check.expect(f"{ctype.name} bomb rejected", "an error code", answered(code), bool(code))
        if count is not None:
            check.expect(f"{ctype.name} bomb: pushes in the telemetry sink", 0, count)
    await expect_alive(check, target, "decompression bombs")
