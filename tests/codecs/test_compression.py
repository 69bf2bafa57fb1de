"""KIP-714 payload compression (§A.5): Kafka's magic-v2 framings, limits and error contract."""

from __future__ import annotations

import gzip
import pickle
import random
import struct
import tracemalloc
import zlib
from collections.abc import Iterator
from types import ModuleType
from typing import Literal

import cramjam
import kafka.codec
import lz4.block
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from kconform.codecs.compression import (
    CompressionError,
    CompressionType,
    DecompressionLimitExceeded,
    compress,
    decompress,
)
from kconform.errors import HarnessDefect

KIB = 1024
MIB = 1024 * KIB

XERIAL_HEADER = bytes.fromhex("82534e41505059000000000100000001")
LZ4_MAGIC = bytes.fromhex("04224d18")  # 0x184D2204, little-endian
ZSTD_MAGIC = bytes.fromhex("28b52ffd")

# Every (type, snappy framing) pair that compress() can produce.
Framing = Literal["xerial", "raw"]
ENCODINGS: list[tuple[CompressionType, Framing]] = [
    *((ctype, "xerial") for ctype in CompressionType),
    (CompressionType.SNAPPY, "raw"),
]
ENCODING_IDS = [f"{ctype.name.lower()}-{framing}" for ctype, framing in ENCODINGS]
COMPRESSED_TYPES = [ctype for ctype in CompressionType if ctype is not CompressionType.NONE]


def payloads(min_size: int = 0) -> st.SearchStrategy[bytes]:
    """Small arbitrary payloads plus large ones (> 64 KiB) that cross xerial and lz4 blocks."""
    small = st.binary(min_size=min_size, max_size=2 * KIB)
    large_random = st.builds(
        lambda seed, size: random.Random(seed).randbytes(size),
        st.integers(0, 2**32 - 1),
        st.integers(64 * KIB + 1, 160 * KIB),
    )
    large_repetitive = st.builds(
        lambda unit, size: (unit * (size // len(unit) + 1))[:size],
        st.binary(min_size=1, max_size=64),
        st.integers(64 * KIB + 1, 320 * KIB),
    )
    return st.one_of(small, large_random, large_repetitive)


# --- an XXH32 written from the specification, independent of the module under test ---------------

_P = (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1)


def _rotl(value: int, bits: int) -> int:
    value &= 0xFFFFFFFF
    return ((value << bits) | (value >> (32 - bits))) & 0xFFFFFFFF


def xxh32(data: bytes, seed: int = 0) -> int:
    p1, p2, p3, p4, p5 = _P
    length, offset = len(data), 0
    if length >= 16:
        lanes = [seed + p1 + p2, seed + p2, seed, seed - p1]
        while offset + 16 <= length:
            words = struct.unpack_from("<4I", data, offset)
            lanes = [
                _rotl(lane + word * p2, 13) * p1 for lane, word in zip(lanes, words, strict=True)
            ]
            offset += 16
        acc = sum(_rotl(lane, bits) for lane, bits in zip(lanes, (1, 7, 12, 18), strict=True))
    else:
        acc = seed + p5
    acc = (acc + length) & 0xFFFFFFFF
    for (word,) in struct.iter_unpack("<I", data[offset : offset + (length - offset) // 4 * 4]):
        acc = _rotl(acc + word * p3, 17) * p4 & 0xFFFFFFFF
    for byte in data[offset + (length - offset) // 4 * 4 :]:
        acc = _rotl(acc + byte * p5, 11) * p1 & 0xFFFFFFFF
    for shift, prime in ((15, p2), (13, p3)):
        acc = ((acc ^ (acc >> shift)) * prime) & 0xFFFFFFFF
    return acc ^ (acc >> 16)


def lz4_descriptor(flg: int, bd: int, content_size: int | None = None) -> bytes:
    """Magic + frame descriptor with a correct header checksum, so only the chosen field is off."""
    fields = bytes([flg, bd]) + (b"" if content_size is None else struct.pack("<Q", content_size))
    return LZ4_MAGIC + fields + bytes([(xxh32(fields) >> 8) & 0xFF])


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", 0x02CC5D05),
        (b"a", 0x550D7456),
        (b"abc", 0x32D153FF),
        (b"Nobody inspects the spammish repetition", 0xE2293B2F),
    ],
)
def test_reference_xxh32_matches_published_vectors(data: bytes, expected: int) -> None:
    assert xxh32(data) == expected


# --- round trips ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("ctype", "framing"), ENCODINGS, ids=ENCODING_IDS)
@settings(max_examples=40, deadline=None)
@given(payload=payloads())
def test_round_trip_restores_the_payload(
    ctype: CompressionType, framing: Framing, payload: bytes
) -> None:
    compressed = compress(payload, ctype, snappy_framing=framing)
    assert decompress(compressed, ctype, max_size=len(payload)) == payload
    assert decompress(memoryview(compressed), int(ctype), max_size=len(payload)) == payload
    if payload:
        with pytest.raises(DecompressionLimitExceeded):
            decompress(compressed, ctype, max_size=len(payload) - 1)


@pytest.mark.parametrize(("ctype", "framing"), ENCODINGS, ids=ENCODING_IDS)
@pytest.mark.parametrize(
    "size", [0, 1, 32 * KIB - 1, 32 * KIB, 32 * KIB + 1, 64 * KIB, 192 * KIB + 5]
)
def test_round_trip_at_block_boundaries(
    ctype: CompressionType, framing: Framing, size: int
) -> None:
    payload = random.Random(size).randbytes(size)
    compressed = compress(payload, ctype, snappy_framing=framing)
    assert decompress(bytearray(compressed), ctype, max_size=size) == payload


# --- golden framing -------------------------------------------------------------------------------


def test_xerial_framing_header_and_32_kib_chunks() -> None:
    assert compress(b"", CompressionType.SNAPPY) == XERIAL_HEADER
    payload = random.Random(7).randbytes(100_000)
    stream = compress(payload, CompressionType.SNAPPY)
    assert stream[:16] == XERIAL_HEADER
    pos, chunks = 16, []
    while pos < len(stream):
        (size,) = struct.unpack_from(">i", stream, pos)
        chunks.append(bytes(cramjam.snappy.decompress_raw(stream[pos + 4 : pos + 4 + size])))
        pos += 4 + size
    assert pos == len(stream)
    assert [len(chunk) for chunk in chunks] == [32768, 32768, 32768, 100_000 - 3 * 32768]
    assert b"".join(chunks) == payload


def test_raw_snappy_framing_is_one_raw_block() -> None:
    payload = b"librdkafka sends raw snappy " * 3000
    block = compress(payload, CompressionType.SNAPPY, snappy_framing="raw")
    assert not block.startswith(XERIAL_HEADER[:8])
    assert bytes(cramjam.snappy.decompress_raw(block)) == payload


@pytest.mark.parametrize("size", [0, 5, 64 * KIB, 200_000])
def test_lz4_frame_matches_lz4_block_output_stream(size: int) -> None:
    payload = (random.Random(size).randbytes(size // 2) + bytes(size))[:size]
    frame = compress(payload, CompressionType.LZ4)
    assert struct.unpack_from("<I", frame)[0] == 0x184D2204
    flg, bd, hc = frame[4], frame[5], frame[6]
    assert flg >> 6 == 1, "version 01"
    assert flg & 0x20, "block independence"
    assert flg & 0x1F == 0, "no block checksum, content size, content checksum, dict id, reserved"
    assert bd == 0x40, "64 KB maximum block size, reserved bits clear"
    assert hc == (xxh32(frame[4:6]) >> 8) & 0xFF
    assert frame[:7] == bytes.fromhex("04224d18604082")
    # Blocks decode one by one, without the previous block as dictionary, then the end mark.
    pos, blocks = 7, []
    while (word := struct.unpack_from("<I", frame, pos)[0]) != 0:
        length, stored = word & 0x7FFFFFFF, bool(word & 0x80000000)
        block = frame[pos + 4 : pos + 4 + length]
        blocks.append(block if stored else lz4.block.decompress(block, uncompressed_size=64 * KIB))
        assert len(blocks[-1]) <= 64 * KIB
        pos += 4 + length
    assert pos + 4 == len(frame), "end mark last, no content checksum"
    assert b"".join(blocks) == payload


def test_gzip_and_zstd_magic_and_standard_decoders() -> None:
    payload = b'{"resourceMetrics": []}' * 100
    gz = compress(payload, CompressionType.GZIP)
    assert gz[:3] == b"\x1f\x8b\x08"
    assert gzip.decompress(gz) == payload
    zst = compress(payload, CompressionType.ZSTD)
    assert zst[:4] == ZSTD_MAGIC
    assert zstandard.ZstdDecompressor().stream_reader(zst).read() == payload


def test_none_is_identity_but_limited() -> None:
    assert compress(b"abc", CompressionType.NONE) == b"abc"
    assert decompress(b"abc", CompressionType.NONE, max_size=3) == b"abc"
    with pytest.raises(DecompressionLimitExceeded) as excinfo:
        decompress(b"abc", CompressionType.NONE, max_size=2)
    assert excinfo.value.limit == 2


# --- cross-decoding with kafka-python's codecs ----------------------------------------------------


class _CramjamSnappy:
    """python-snappy's compress/decompress, so kafka.codec's xerial framing runs without it."""

    @staticmethod
    def compress(data: bytes) -> bytes:
        return bytes(cramjam.snappy.compress_raw(data))

    @staticmethod
    def decompress(data: bytes) -> bytes:
        return bytes(cramjam.snappy.decompress_raw(data))


@pytest.fixture(scope="module")
def kafka_codec() -> Iterator[ModuleType]:
    with pytest.MonkeyPatch.context() as patch:
        if not kafka.codec.has_snappy():
            patch.setattr(kafka.codec, "snappy", _CramjamSnappy)
        yield kafka.codec


@settings(max_examples=40, deadline=None)
@given(payload=payloads())
def test_kafka_python_encodings_decode_here(kafka_codec: ModuleType, payload: bytes) -> None:
    encoded = {
        "gzip": (CompressionType.GZIP, kafka_codec.gzip_encode(payload)),
        "xerial": (CompressionType.SNAPPY, kafka_codec.snappy_encode(payload)),
        "raw": (
            CompressionType.SNAPPY,
            kafka_codec.snappy_encode(payload, xerial_compatible=False),
        ),
        "cramjam-raw": (CompressionType.SNAPPY, bytes(cramjam.snappy.compress_raw(payload))),
        "lz4": (CompressionType.LZ4, kafka_codec.lz4_encode(payload)),
        "zstd": (CompressionType.ZSTD, kafka_codec.zstd_encode(payload)),
    }
    for name, (ctype, blob) in encoded.items():
        assert decompress(blob, ctype, max_size=len(payload)) == payload, name


def test_kafka_python_lz4_frames_carry_content_size(kafka_codec: ModuleType) -> None:
    # Kafka skips the 8-byte content size field, so these frames must be accepted.
    frame = kafka_codec.lz4_encode(b"x" * 1000)
    assert frame[4] & 0x08
    assert decompress(frame, CompressionType.LZ4, max_size=1000) == b"x" * 1000


# kafka-python only detects xerial in streams longer than the 16-byte header, so it misreads the
# header-only stream of an empty payload; Java's SnappyInputStream reads it as empty.
@settings(max_examples=40, deadline=None)
@given(payload=payloads(min_size=1))
def test_our_encodings_decode_in_kafka_python(kafka_codec: ModuleType, payload: bytes) -> None:
    assert kafka_codec.gzip_decode(compress(payload, CompressionType.GZIP)) == payload
    assert kafka_codec.snappy_decode(compress(payload, CompressionType.SNAPPY)) == payload
    raw = compress(payload, CompressionType.SNAPPY, snappy_framing="raw")
    assert kafka_codec.snappy_decode(raw) == payload
    assert kafka_codec.lz4_decode(compress(payload, CompressionType.LZ4)) == payload
    assert kafka_codec.zstd_decode(compress(payload, CompressionType.ZSTD)) == payload


# --- LZ4 frame descriptor rules of Lz4BlockInputStream ------------------------------------------

_LZ4_BODY = compress(b"telemetry " * 50, CompressionType.LZ4)[7:]


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        pytest.param(lz4_descriptor(0x40, 0x40), "dependent block", id="dependent-blocks"),
        pytest.param(
            lz4_descriptor(0x60, 0x40)[:-1] + b"\x83", "checksum", id="bad-header-checksum"
        ),
        pytest.param(lz4_descriptor(0x61, 0x40), "reserved", id="flg-dict-id-bit"),
        pytest.param(lz4_descriptor(0x62, 0x40), "reserved", id="flg-reserved-bit"),
        pytest.param(lz4_descriptor(0x60, 0xC0), "reserved", id="bd-high-reserved-bit"),
        pytest.param(lz4_descriptor(0x60, 0x41), "reserved", id="bd-low-reserved-bits"),
        pytest.param(lz4_descriptor(0x20, 0x40), "version 0", id="version-0"),
        pytest.param(lz4_descriptor(0xA0, 0x40), "version 2", id="version-2"),
        pytest.param(lz4_descriptor(0xE0, 0x40), "version 3", id="version-3"),
        pytest.param(lz4_descriptor(0x60, 0x00), "block size id 0", id="block-size-id-0"),
        pytest.param(lz4_descriptor(0x60, 0x30), "block size id 3", id="block-size-id-3"),
        pytest.param(
            bytes.fromhex("04224d19") + lz4_descriptor(0x60, 0x40)[4:], "magic", id="bad-magic"
        ),
    ],
)
def test_lz4_frames_kafka_rejects(header: bytes, reason: str) -> None:
    with pytest.raises(CompressionError, match=reason):
        decompress(header + _LZ4_BODY, CompressionType.LZ4, max_size=MIB)


def test_lz4_linked_blocks_are_refused_although_liblz4_reads_them() -> None:
    payload = b"metrics " * 40_000  # several 64 KB blocks, so liblz4 really links them
    frame = lz4.frame.compress(payload, block_linked=True, block_size=lz4.frame.BLOCKSIZE_MAX64KB)
    assert not frame[4] & 0x20
    assert lz4.frame.decompress(frame) == payload
    with pytest.raises(CompressionError, match="dependent block"):
        decompress(frame, CompressionType.LZ4, max_size=MIB)


@pytest.mark.parametrize(
    "block_size",
    [
        lz4.frame.BLOCKSIZE_MAX64KB,
        lz4.frame.BLOCKSIZE_MAX256KB,
        lz4.frame.BLOCKSIZE_MAX1MB,
        lz4.frame.BLOCKSIZE_MAX4MB,
    ],
)
@pytest.mark.parametrize("store_size", [False, True])
@pytest.mark.parametrize("content_checksum", [False, True])
@pytest.mark.parametrize("block_checksum", [False, True])
def test_lz4_optional_fields_kafka_accepts(
    block_size: int, store_size: bool, content_checksum: bool, block_checksum: bool
) -> None:
    payload = b"kip-714 " * 20_000
    frame = lz4.frame.compress(
        payload,
        block_size=block_size,
        block_linked=False,
        store_size=store_size,
        content_checksum=content_checksum,
        block_checksum=block_checksum,
    )
    end = 14 if store_size else 6
    assert frame[end] == (xxh32(frame[4:end]) >> 8) & 0xFF, "liblz4 agrees with the reference"
    assert decompress(frame, CompressionType.LZ4, max_size=len(payload)) == payload


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        LZ4_MAGIC + b"\x60\x40",
        lz4_descriptor(0x68, 0x40)[:-3],
        compress(b"abc" * 100, CompressionType.LZ4)[:-4],
        compress(b"abc" * 100, CompressionType.LZ4) + b"\x00",
        compress(b"abc", CompressionType.LZ4) * 2,
    ],
    ids=[
        "empty",
        "no-checksum-byte",
        "short-content-size",
        "no-end-mark",
        "trailing",
        "two-frames",
    ],
)
def test_lz4_truncated_or_trailing_frames_fail(frame: bytes) -> None:
    with pytest.raises(CompressionError, match="lz4"):
        decompress(frame, CompressionType.LZ4, max_size=MIB)


# --- other framing edge cases ---------------------------------------------------------------------


@pytest.mark.parametrize("ctype", COMPRESSED_TYPES)
def test_truncated_or_extended_payloads_fail(ctype: CompressionType) -> None:
    payload = b"client_instance_id=AAAAAAAAAAAAAAAAAAAAAA " * 200
    framings: tuple[Framing, ...] = ("xerial", "raw")
    for framing in framings:
        blob = compress(payload, ctype, snappy_framing=framing)
        for broken in (blob[:-1], blob[: len(blob) // 2], blob + b"\x00", blob + b"junk!"):
            with pytest.raises(CompressionError):
                decompress(broken, ctype, max_size=MIB)


def test_concatenated_gzip_members_and_zstd_frames_decode_whole() -> None:
    # GZIPInputStream and zstd streaming decoders continue into the next member or frame.
    for ctype in (CompressionType.GZIP, CompressionType.ZSTD):
        both = compress(b"first,", ctype) + compress(b"second", ctype)
        assert decompress(both, ctype, max_size=12) == b"first,second"


def test_snappy_follows_snappy_input_stream_read_header() -> None:
    snappy = CompressionType.SNAPPY
    with pytest.raises(CompressionError, match="empty"):
        decompress(b"", snappy, max_size=MIB)
    assert decompress(b"\x00", snappy, max_size=MIB) == b""  # raw block of an empty payload
    assert decompress(XERIAL_HEADER, snappy, max_size=MIB) == b""
    # Fewer than 16 bytes are read as a raw block even when they start with the magic.
    with pytest.raises(CompressionError):
        decompress(XERIAL_HEADER[:15], snappy, max_size=MIB)
    # A second header inside the stream starts a concatenated stream.
    both = compress(b"first,", snappy) + compress(b"second", snappy)
    assert decompress(both, snappy, max_size=MIB) == b"first,second"


@pytest.mark.parametrize(
    "chunks",
    [b"\x00\x00\x00\x00", b"\xff\xff\xff\xf0abcd", b"\x00\x00\x00\x10\x05abc", b"\x00\x01"],
    ids=["zero-length", "negative-length", "chunk-past-end", "partial-length"],
)
def test_broken_xerial_chunks_fail(chunks: bytes) -> None:
    with pytest.raises(CompressionError, match="snappy"):
        decompress(XERIAL_HEADER + chunks, CompressionType.SNAPPY, max_size=MIB)


@pytest.mark.parametrize("type_id", [-1, 5, 7, 255, "gzip", 1.0, True])
def test_unknown_compression_type_ids_fail(type_id: object) -> None:
    with pytest.raises(CompressionError):
        compress(b"x", type_id)  # type: ignore[arg-type]
    with pytest.raises(CompressionError):
        decompress(b"x", type_id, max_size=MIB)  # type: ignore[arg-type]


def test_error_types_and_negative_limit() -> None:
    assert issubclass(DecompressionLimitExceeded, CompressionError)
    assert issubclass(CompressionError, ValueError)
    with pytest.raises(HarnessDefect, match="max_size"):
        decompress(b"", CompressionType.NONE, max_size=-1)
    with pytest.raises(CompressionError, match="framing"):
        compress(b"x", CompressionType.SNAPPY, snappy_framing="hadoop")  # type: ignore[arg-type]
    with pytest.raises(DecompressionLimitExceeded, match="zstd") as excinfo:
        decompress(compress(bytes(100), CompressionType.ZSTD), CompressionType.ZSTD, max_size=99)
    copy = pickle.loads(pickle.dumps(excinfo.value))
    assert (type(copy), str(copy), copy.limit) == (
        DecompressionLimitExceeded,
        str(excinfo.value),
        99,
    )


# --- decompression bombs --------------------------------------------------------------------------

BOMB_SIZE = 256 * MIB


def _raw_snappy_zeros(size: int) -> bytes:
    """A raw snappy block of `size` zero bytes: one literal, then 64-byte copies at offset 1."""
    preamble = bytearray()
    value = size
    while value >= 0x80:
        preamble.append(value & 0x7F | 0x80)
        value >>= 7
    preamble.append(value)
    copies, rest = divmod(size - 1, 64)
    tail = bytes([((rest - 1) << 2) | 2, 1, 0]) if rest else b""
    return bytes(preamble) + b"\x00\x00" + b"\xfe\x01\x00" * copies + tail


def test_raw_snappy_zeros_helper_is_valid() -> None:
    for size in (1, 64, 65, 100_000):
        assert bytes(cramjam.snappy.decompress_raw(_raw_snappy_zeros(size))) == bytes(size)


@pytest.fixture(scope="module")
def bombs() -> dict[str, tuple[CompressionType, bytes]]:
    """Small inputs that each expand to 256 MiB of zeros, built without holding 256 MiB."""
    zeros = bytes(MIB)
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    gz = b"".join([deflater.compress(zeros) for _ in range(BOMB_SIZE // MIB)] + [deflater.flush()])
    assert struct.unpack("<I", gz[-4:])[0] == BOMB_SIZE % 2**32
    zcompressor = zstandard.ZstdCompressor(level=3).compressobj()
    zst = b"".join([zcompressor.compress(zeros) for _ in range(BOMB_SIZE // MIB)])
    zst += zcompressor.flush()
    lz4_block = lz4.block.compress(bytes(64 * KIB), store_size=False)
    lz4_frame = (
        lz4_descriptor(0x60, 0x40)
        + (struct.pack("<I", len(lz4_block)) + lz4_block) * (BOMB_SIZE // (64 * KIB))
        + b"\x00\x00\x00\x00"
    )
    chunk = bytes(cramjam.snappy.compress_raw(bytes(32 * KIB)))
    xerial = XERIAL_HEADER + (struct.pack(">i", len(chunk)) + chunk) * (BOMB_SIZE // (32 * KIB))
    return {
        "gzip": (CompressionType.GZIP, gz),
        "zstd": (CompressionType.ZSTD, zst),
        "lz4": (CompressionType.LZ4, lz4_frame),
        "snappy-xerial": (CompressionType.SNAPPY, xerial),
        "snappy-raw": (CompressionType.SNAPPY, _raw_snappy_zeros(BOMB_SIZE)),
        "snappy-lying-length": (CompressionType.SNAPPY, b"\xff\xff\xff\xff\x0f\x00"),
    }


def test_zstd_bomb_really_expands(bombs: dict[str, tuple[CompressionType, bytes]]) -> None:
    reader = zstandard.ZstdDecompressor().stream_reader(bombs["zstd"][1])
    total = 0
    while chunk := reader.read(4 * MIB):
        total += len(chunk)
    assert total == BOMB_SIZE
    assert len(bombs["zstd"][1]) < 64 * KIB


@pytest.mark.parametrize(
    "name", ["gzip", "zstd", "lz4", "snappy-xerial", "snappy-raw", "snappy-lying-length"]
)
def test_decompression_bomb_stops_at_the_limit_with_bounded_memory(
    bombs: dict[str, tuple[CompressionType, bytes]], name: str
) -> None:
    ctype, bomb = bombs[name]
    tracemalloc.start()
    try:
        with pytest.raises(DecompressionLimitExceeded) as excinfo:
            decompress(bomb, ctype, max_size=MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert excinfo.value.limit == MIB
    assert peak < 64 * MIB, f"{name}: peak {peak / MIB:.1f} MiB while refusing a 256 MiB bomb"


# --- fuzzing: only CompressionError may escape ----------------------------------------------------

_PREFIXES = [
    b"",
    b"\x1f\x8b\x08\x00",
    XERIAL_HEADER,
    lz4_descriptor(0x60, 0x40),
    lz4_descriptor(0x68, 0x40, 1000),
    lz4_descriptor(0x74, 0x70),
    ZSTD_MAGIC,
]


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.sampled_from(_PREFIXES),
    tail=st.binary(max_size=512),
    ctype=st.sampled_from(CompressionType),
)
def test_arbitrary_input_raises_only_compression_error(
    prefix: bytes, tail: bytes, ctype: CompressionType
) -> None:
    try:
        out = decompress(prefix + tail, ctype, max_size=64 * KIB)
    except CompressionError:
        return
    assert len(out) <= 64 * KIB


@settings(max_examples=200, deadline=None)
@given(
    encoding=st.sampled_from(ENCODINGS),
    payload=st.binary(max_size=4 * KIB),
    data=st.data(),
)
def test_corrupted_payloads_raise_only_compression_error(
    encoding: tuple[CompressionType, Framing], payload: bytes, data: st.DataObject
) -> None:
    ctype, framing = encoding
    blob = bytearray(compress(payload, ctype, snappy_framing=framing))
    index = data.draw(st.integers(0, len(blob)))
    mutation = data.draw(st.sampled_from(["flip", "truncate", "insert", "append"]))
    if mutation == "flip" and index < len(blob):
        blob[index] ^= data.draw(st.integers(1, 255))
    elif mutation == "truncate":
        del blob[index:]
    elif mutation == "insert":
        blob[index:index] = data.draw(st.binary(min_size=1, max_size=8))
    else:
        blob += data.draw(st.binary(min_size=1, max_size=8))
    try:
        out = decompress(bytes(blob), ctype, max_size=64 * KIB)
    except CompressionError:
        return
    assert len(out) <= 64 * KIB
