"""What the security cases share: a lenient push, the liveness check every case ends with, and
hostile payloads (oversized, many points, bombs, garbage) built directly on the protobuf.
"""

from __future__ import annotations

import asyncio
import functools
import random

from opentelemetry.proto.metrics.v1 import metrics_pb2

from kconform.codecs.compression import compress
from kconform.codecs.errors import error_name
from kconform.codecs.messages import ApiVersionsRequest
from kconform.codecs.schema import Message
from kconform.codecs.wire import DecodeError, kafka_uuid_str
from kconform.engine.check import Check
from kconform.errors import Inconclusive
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget, Capability, TargetError
from kconform.suites.broker.helpers import BULK_ANSWER_TIMEOUT, push

TELEMETRY = [Capability.TELEMETRY]
MAX_BYTES = "KIP-714 'Broker configuration': telemetry.max.bytes is the maximum size 'after "
MAX_BYTES += "compression if compression is used'; 'Error handling' TELEMETRY_TOO_LARGE; "
MAX_BYTES += "§C.4 step 6"
BOMB = "ruling 12 (healthy: MUST; rejected rather than exported: SHOULD; code: INFO); §C.4 step 7"
LIVENESS = "a new connection answers ApiVersions v0"
BOMB_EXPANDED = 64 << 20  # bytes a bomb inflates to (smaller if the broker's limit demands it)


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


async def push_answered(
    check: Check,
    connection: KafkaConnection,
    subscription: Message,
    metrics: bytes | None,
    compression_type: int = 0,
) -> int | None:
    """`push()` as the session's client, lenient (`strict=False`, BULK_ANSWER_TIMEOUT): its
    ErrorCode, or None when it got no answer."""
    try:
        response = await push(
            connection, subscription.client_instance_id, subscription.subscription_id,
            metrics=metrics, compression_type=compression_type, strict=False,
            timeout=BULK_ANSWER_TIMEOUT,
        )  # fmt: skip
    except (ConnectionError, TimeoutError) as exc:
        check.note(f"push not answered: {type(exc).__name__}: {exc}")
        await asyncio.sleep(0.3)  # a broker that is going down gets the time to finish
        return None
    return int(response.error_code)
