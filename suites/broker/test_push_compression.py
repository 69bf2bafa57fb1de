"""KIP-714 PushTelemetry on the broker: CompressionType (kip714.push.compression.*).

Spec: KIP-714 "Compression", AcceptedCompressionTypes, "PushTelemetryRequest handling /
Validation"; §A.5, §C.4 step 5, ruling 13. Payloads are valid OTLP (`helpers.payload`), compressed
where the case is about compression: the librdkafka mock aborts on anything else, and malformed
payloads belong to the security suite.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

from kconform.codecs.compression import compress
from kconform.codecs.errors import ErrorCode
from kconform.engine.check import Check
from kconform.engine.model import Family, Level, case
from kconform.fixtures.connection import ConnectionClosed
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    INTERVAL_MS,
    NONE,
    digest,
    err,
    new_instance,
    payload,
    push_code,
    session,
    sink_records,
)

Framing = Literal["xerial", "raw"]

CODECS: dict[str, tuple[int, Framing]] = {  # case variant: (CompressionType, snappy framing)
    "gzip": (1, "xerial"),
    "snappy_xerial": (2, "xerial"),
    "snappy_raw": (2, "raw"),  # librdkafka's framing; Java accepts it (§A.5)
    "lz4": (3, "xerial"),
    "zstd": (4, "xerial"),
}


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
    conn, _ = await session(check, interval_ms=INTERVAL_MS)
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
    conn, sub = await session(check, interval_ms=INTERVAL_MS)
    check.observe("AcceptedCompressionTypes", list(sub.accepted_compression_types))
    check.expect("push with CompressionType 0", err(NONE),
                 await push_code(conn, sub, compression_type=0))  # fmt: skip


def _codec_case(case_id: str, codec: tuple[int, Framing]) -> Any:
    variant = case_id.rsplit(".", 1)[1]  # a key of CODECS
    ctype, framing = codec

    @case(
        case_id,
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
        conn, sub = await session(check, interval_ms=INTERVAL_MS)
        if ctype not in sub.accepted_compression_types:
            pytest.skip(f"{target.name} does not advertise CompressionType {ctype}")
        body = compress(payload(points=40), ctype, snappy_framing=framing)
        check.expect(f"{variant} push", err(NONE),
                     await push_code(conn, sub, metrics=body, compression_type=ctype))  # fmt: skip

    return test


CODEC = Family(_codec_case)
test_compression_gzip = CODEC("kip714.push.compression.gzip", CODECS["gzip"])
test_compression_snappy_xerial = CODEC(
    "kip714.push.compression.snappy_xerial", CODECS["snappy_xerial"]
)
test_compression_snappy_raw = CODEC("kip714.push.compression.snappy_raw", CODECS["snappy_raw"])
test_compression_lz4 = CODEC("kip714.push.compression.lz4", CODECS["lz4"])
test_compression_zstd = CODEC("kip714.push.compression.zstd", CODECS["zstd"])


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
    conn, first = await session(check, interval_ms=INTERVAL_MS)
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
