"""KIP-714 PushTelemetry on the broker: TelemetryMaxBytes (kip714.push.size_limit.*).

Spec: KIP-714 "Broker configuration", "Error handling" (TELEMETRY_TOO_LARGE); §C.4 step 6, ruling
12. Payloads are valid OTLP (`helpers.payload`), compressed where the case is about compression:
the librdkafka mock aborts on anything else, and malformed payloads belong to the security suite.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from kconform.codecs.compression import compress
from kconform.codecs.errors import ErrorCode
from kconform.codecs.otlp import build_metrics_data, gauge
from kconform.codecs.schema import Message
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.errors import Inconclusive, Unsupported
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    BULK_ANSWER_TIMEOUT,
    INTERVAL_MS,
    NONE,
    WAITS_FOR_BULK,
    err,
    new_instance,
    push_code,
    session,
)

TELEMETRY_MAX_BYTES = "telemetry.max.bytes"

LOWERED_MAX_BYTES = 2048

MAX_PAYLOAD_BUILT = 8 << 20  # a larger advertised TelemetryMaxBytes is not worth a payload


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
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
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
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    check.require("TelemetryMaxBytes after lowering it", LOWERED_MAX_BYTES,
                  sub.telemetry_max_bytes)  # fmt: skip
    return conn, sub


@WAITS_FOR_BULK
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
    at_limit = await asyncio.to_thread(sized_payload, limit)
    check.expect(f"push of exactly {limit} bytes", err(NONE),
                 await push_code(conn, sub, metrics=at_limit,
                                 timeout=BULK_ANSWER_TIMEOUT))  # fmt: skip
    over = await asyncio.to_thread(sized_payload, limit + 1)
    sub = await new_instance(check, conn)
    check.expect(f"push of {limit + 1} bytes", err(ErrorCode.TELEMETRY_TOO_LARGE),
                 await push_code(conn, sub, metrics=over,
                                 timeout=BULK_ANSWER_TIMEOUT))  # fmt: skip


# What a broker may answer a push within TelemetryMaxBytes as sent that inflates past it: the
# limit itself counts the bytes as sent (never TELEMETRY_TOO_LARGE), and the KIP obliges no
# broker to decompress without a bound. Apache 3.8.0-4.2.1 and 4.3.0 export it (NONE); 4.2.2,
# 4.3.1 and 4.4.0 stop decompressing at telemetry.max.bytes (apache/kafka#22327:
# clients/.../telemetry/internals/ClientTelemetryUtils.java decompress(..., maxDecompressedBytes)
# throws TelemetryTooLargeException, which ClientMetricsManager.processPushTelemetryRequest
# catches around the export and answers INVALID_RECORD).
AS_SENT_ANSWERS = (NONE, ErrorCode.INVALID_RECORD)


@WAITS_FOR_BULK
@case(
    "kip714.push.size_limit.after_compression",
    rules=["kip714.push.size_limit.as_sent"],
    title="The size limit counts the bytes as sent: a small payload that inflates past it is not "
    "TELEMETRY_TOO_LARGE (accepted, or refused by a decompressed-size bound as INVALID_RECORD)",
    spec=(
        "KIP-714 'Broker configuration': telemetry.max.bytes is \"The maximum size (after "
        'compression if compression is used)"; ruling 12 as Apache 4.4.0 reads it'
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
    data = await asyncio.to_thread(sized_payload, 3 * limit)
    body = compress(data, ctype)
    if len(body) > limit:
        raise Inconclusive(f"{3 * limit} bytes compressed to {len(body)}, above {limit}")
    check.expect_in(f"{len(body)} bytes as sent, {len(data)} decompressed",
                    [err(c) for c in AS_SENT_ANSWERS],
                    await push_code(conn, sub, metrics=body, compression_type=ctype,
                                    timeout=BULK_ANSWER_TIMEOUT))  # fmt: skip
