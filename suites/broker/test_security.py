"""KIP-714 on the broker under hostile pushes: size limits, huge, truncated, broken payloads.

Spec: KIP-714 "Broker configuration" (`telemetry.max.bytes`: "The maximum size (after compression
if compression is used) of telemetry pushed from a client to the broker"), "Error handling"
(TELEMETRY_TOO_LARGE, INVALID_RECORD), "PushTelemetryRequest handling / Validation", the
AcceptedCompressionTypes doc ("the broker does support uncompressed client telemetry"); §C.4 and
rulings 11 (null Metrics) and 12 (decompression bombs).

Every case ends with the same liveness check: a NEW connection must get an ApiVersions v0 answer,
whatever the hostile push did. A target that died is reported as a failed expectation of the case
that killed it (with the target's own account of its death), and as `error` in the cases after it,
which cannot even connect. Cases run in file order, so the ones that abort the librdkafka mock
(null or non-OTLP Metrics, and any payload its decoder cannot hold, §E.2) come last, and
the decompression bombs (test_security_bomb.py) after them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from kconform.codecs.compression import CompressionType, compress
from kconform.codecs.errors import ErrorCode
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.broker.helpers import (
    WAITS_FOR_BULK,
    payload,
    session,
)
from kconform.suites.broker.helpers_security import (
    MAX_BYTES,
    TELEMETRY,
    answered,
    expect_alive,
    exported,
    garbage,
    many_points,
    padded,
    preferred_compression,
    push_answered,
)

# These cases may kill a fragile target (they do kill the librdkafka mock, which is its real
# behaviour): the plugin runs them after every other case of the same target.
pytestmark = pytest.mark.kconform_disruptive


# --- the size limit: applied to the bytes as sent --------------------------------------------


@WAITS_FOR_BULK
@case(
    "kip714.security.size_limit.oversized_rejected",
    rules=["kip714.push.size_limit"],
    title="A push one byte over TelemetryMaxBytes is answered TELEMETRY_TOO_LARGE, not exported",
    spec=MAX_BYTES,
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_oversized_rejected(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check)
    max_bytes = subscription.telemetry_max_bytes
    code = await push_answered(check, connection, subscription, padded(max_bytes + 1))
    check.expect(f"uncompressed push of {max_bytes + 1} bytes", "TELEMETRY_TOO_LARGE",
                 answered(code), code == ErrorCode.TELEMETRY_TOO_LARGE)  # fmt: skip
    if (count := await exported(target, subscription)) is not None:
        check.expect("pushes of this client in the telemetry sink", 0, count)
    await expect_alive(check, target, "an oversized push")


@WAITS_FOR_BULK
@case(
    "kip714.security.size_limit.at_limit_accepted",
    rules=["kip714.push.size_limit"],
    title="A push of exactly TelemetryMaxBytes is not answered TELEMETRY_TOO_LARGE",
    spec=MAX_BYTES,
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_at_limit_accepted(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check)
    max_bytes = subscription.telemetry_max_bytes
    code = await push_answered(check, connection, subscription, padded(max_bytes))
    ok = code is not None and code != ErrorCode.TELEMETRY_TOO_LARGE
    check.expect(f"uncompressed push of exactly {max_bytes} bytes", "not TELEMETRY_TOO_LARGE",
                 answered(code), ok)  # fmt: skip
    check.observe("ErrorCode", answered(code))
    await expect_alive(check, target, "a push at the limit")


@WAITS_FOR_BULK
@case(
    "kip714.security.size_limit.after_compression",
    rules=["kip714.push.size_limit.as_sent"],
    title="A payload over the limit uncompressed but within it compressed is not TOO_LARGE",
    spec=MAX_BYTES + "; ruling 12 (the limit is on the bytes as sent)",
    level=Level.MUST,
    requires=TELEMETRY,
)
async def test_size_limit_after_compression(target: BrokerTarget, check: Check) -> None:
    connection, subscription = await session(check)
    max_bytes, ctype = subscription.telemetry_max_bytes, preferred_compression(subscription)
    raw = padded(2 * max_bytes)
    metrics = compress(raw, ctype)
    check.require("compressed size within TelemetryMaxBytes", f"<= {max_bytes}", len(metrics),
                  len(metrics) <= max_bytes)  # fmt: skip
    code = await push_answered(check, connection, subscription, metrics, ctype)
    check.expect(
        f"{CompressionType(ctype).name} push: {len(raw)} bytes as OTLP, {len(metrics)} as sent",
        "not TELEMETRY_TOO_LARGE", answered(code),
        code is not None and code != ErrorCode.TELEMETRY_TOO_LARGE,
    )  # fmt: skip
    check.observe("ErrorCode", answered(code))
    await expect_alive(check, target, "a well-compressed push")


@WAITS_FOR_BULK
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
    connection, subscription = await session(check)
    max_bytes, ctype = subscription.telemetry_max_bytes, preferred_compression(subscription)
    raw = await asyncio.to_thread(many_points)
    metrics = await asyncio.to_thread(compress, raw, ctype)
    check.observe("payload size: OTLP, as sent", [len(raw), len(metrics)])
    started = time.monotonic()
    code = await push_answered(check, connection, subscription, metrics, ctype)
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
    connection, subscription = await session(check)
    code = await push_answered(check, connection, subscription, b"")
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
        connection, subscription = await session(check)
        code = await push_answered(check, connection, subscription, payload(), ctype)
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
        connection, subscription = await session(check)
        if ctype not in subscription.accepted_compression_types:
            check.note(f"{variant}: {ctype.name} not accepted by the broker, skipped")
            continue
        code = await push_answered(check, connection, subscription, metrics, ctype)
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
    connection, subscription = await session(check)
    bystander, _ = await session(check)  # another client's connection, open meanwhile
    code = await push_answered(check, connection, subscription, None)
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
    connection, subscription = await session(check)
    code = await push_answered(check, connection, subscription, b"test-data")
    check.expect("push answered", "an ErrorCode", answered(code), code is not None)
    check.expect("CompressionType NONE supported", "not UNSUPPORTED_COMPRESSION_TYPE",
                 answered(code), code != ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)  # fmt: skip
    check.observe("ErrorCode (Apache: NONE; a validating receiver: INVALID_RECORD)", answered(code))
    await expect_alive(check, target, "a non-OTLP push")
