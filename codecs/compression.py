"""KIP-714 telemetry payload (de)compression, framed exactly as Kafka frames magic-v2 batches.

`PushTelemetryRequest.Metrics` carries an OTLP `MetricsData` compressed with the client's
`CompressionType`. Kafka 3.8+ compresses and decompresses it with the record-batch codecs at
magic 2 (`ClientTelemetryUtils`, §A.5), so each codec here reproduces that framing: RFC 1952
gzip, xerial-framed snappy (raw snappy accepted on input, as `SnappyInputStream` does), the LZ4
frame format with Kafka's `Lz4BlockInputStream` descriptor rules, and standard zstd frames.

`decompress` enforces `max_size` while it decodes, so a decompression bomb fails after producing
at most about `max_size` bytes. It is stricter than Java where Java ignores things: bytes left
over after the payload (after the last gzip member, after the lz4 end mark, a partial xerial chunk
length) are an error, and liblz4 checks an lz4 frame's optional content size and content checksum,
which Kafka releases up to 4.1 skip.
"""

from __future__ import annotations

import enum
import struct
import zlib
from typing import Final, Literal

import cramjam
import lz4.frame  # type: ignore[import-untyped]
import zstandard

from kconform.errors import HarnessDefect, ProtocolError

__all__ = [
    "CompressionError",
    "CompressionType",
    "DecompressionLimitExceeded",
    "compress",
    "decompress",
]


class CompressionType(enum.IntEnum):
    """Compression type ids shared by record batches and KIP-714 `CompressionType` fields."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class CompressionError(ProtocolError):
    """The payload cannot be (de)compressed; the message names the codec and the reason."""


class DecompressionLimitExceeded(CompressionError):
    """The decompressed payload would be larger than the caller's `max_size` (kept in `limit`)."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit

    def __reduce__(self) -> tuple[type[DecompressionLimitExceeded], tuple[str, int]]:
        return type(self), (str(self), self.limit)


# Kafka's default levels: gzip uses Deflater.DEFAULT_COMPRESSION (zlib's 6), zstd uses 3.
_GZIP_LEVEL: Final = 6
_ZSTD_LEVEL: Final = 3

# xerial snappy-java SnappyCodec / SnappyOutputStream / SnappyInputStream.
_XERIAL_MAGIC: Final = b"\x82SNAPPY\x00"
_XERIAL_HEADER: Final = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)  # version 1, min compatible 1
# A chunk length equal to the first 4 magic bytes starts a concatenated xerial stream.
_XERIAL_MAGIC_HEAD: Final[int] = struct.unpack(">i", _XERIAL_MAGIC[:4])[0]
_XERIAL_BLOCK_SIZE: Final = 32 * 1024  # CompressionType.SNAPPY.defaultBlockSize() (KIP-780)
_XERIAL_MAX_CHUNK: Final = 512 * 1024 * 1024  # SnappyInputStream.MAX_CHUNK_SIZE

# LZ4 frame format as written by Lz4BlockOutputStream: FLG 0x60, BD 0x40, HC 0x82.
_LZ4_MAGIC: Final = b"\x04\x22\x4d\x18"

# Output requested from a streaming decoder per call. lz4's decompressor allocates max_length up
# front, so requests stay small and the decoders are called in a loop.
_OUTPUT_STEP: Final = 1024 * 1024
# A zstd block (at most 128 KiB of output) needs at least 4 input bytes, so feeding zstd `n` input
# bytes at a time caps the output of one call at about (n / 4 + 1) * 128 KiB.
_ZSTD_MIN_FEED: Final = 128
_ZSTD_MAX_FEED: Final = 1024 * 1024


def compress(
    data: bytes | bytearray | memoryview,
    compression_type: CompressionType | int,
    *,
    snappy_framing: Literal["xerial", "raw"] = "xerial",
) -> bytes:
    """Compress a telemetry payload the way a Java client frames it for `compression_type`.

    `snappy_framing="raw"` writes one raw snappy block, as librdkafka does.
    """
    ctype = _compression_type(compression_type)
    payload = bytes(data)
    if ctype is CompressionType.NONE:
        return payload
    if ctype is CompressionType.GZIP:
        deflater = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return deflater.compress(payload) + deflater.flush()
    if ctype is CompressionType.SNAPPY:
        if snappy_framing == "raw":
            return bytes(cramjam.snappy.compress_raw(payload))
        if snappy_framing != "xerial":
            raise CompressionError(f"snappy: unknown framing {snappy_framing!r}")
        return _xerial_compress(payload)
    if ctype is CompressionType.LZ4:
        frame: bytes = lz4.frame.compress(
            payload,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            block_checksum=False,
            store_size=False,
        )
        return frame
    compressor = zstandard.ZstdCompressor(level=_ZSTD_LEVEL, write_content_size=False)
    return compressor.compress(payload)


def decompress(
    data: bytes | bytearray | memoryview,
    compression_type: CompressionType | int,
    *,
    max_size: int,
) -> bytes:
    """Decompress a telemetry payload, refusing output larger than `max_size` bytes.

    Raises `DecompressionLimitExceeded` as soon as the output would pass `max_size`, and
    `CompressionError` for an unknown type or undecodable, truncated or over-long input.
    """
    if max_size < 0:
        raise HarnessDefect(f"max_size must be >= 0, got {max_size}")
    ctype = _compression_type(compression_type)
    payload = bytes(data)
    codec = ctype.name.lower()
    try:
        if ctype is CompressionType.NONE:
            out = _Output(codec, max_size)
            out.add(payload)
            return payload
        if ctype is CompressionType.GZIP:
            return _gzip_decompress(payload, _Output(codec, max_size))
        if ctype is CompressionType.SNAPPY:
            return _snappy_decompress(payload, _Output(codec, max_size))
        if ctype is CompressionType.LZ4:
            return _lz4_decompress(payload, _Output(codec, max_size))
        return _zstd_decompress(payload, _Output(codec, max_size))
    except CompressionError:
        raise
    except (
        zlib.error,
        zstandard.ZstdError,
        cramjam.DecompressionError,
        RuntimeError,
    ) as exc:
        raise CompressionError(f"{codec}: corrupt input ({exc})") from exc


def _compression_type(value: CompressionType | int) -> CompressionType:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CompressionError(f"compression type must be an int id, got {value!r}")
    try:
        return CompressionType(value)
    except ValueError:
        raise CompressionError(f"unknown compression type id {value} (known: 0-4)") from None


class _Output:
    """Decompressed chunks of one payload, checked against the limit as they arrive."""

    def __init__(self, codec: str, limit: int) -> None:
        self.codec = codec
        self.limit = limit
        self.size = 0
        self._chunks: list[bytes] = []

    def request(self) -> int:
        """Output to ask a decoder for: one byte past the limit is enough to see it crossed."""
        return min(self.limit - self.size + 1, _OUTPUT_STEP)

    def reserve(self, length: int) -> None:
        if self.size + length > self.limit:
            raise DecompressionLimitExceeded(
                f"{self.codec}: decompressed size exceeds max_size={self.limit}", self.limit
            )

    def add(self, chunk: bytes) -> None:
        self.reserve(len(chunk))
        self.size += len(chunk)
        self._chunks.append(chunk)

    def value(self) -> bytes:
        return b"".join(self._chunks)


def _gzip_decompress(payload: bytes, out: _Output) -> bytes:
    # GZIPInputStream reads concatenated members, so a second member is accepted as well.
    member = payload
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = member
        while not inflater.eof:
            want = out.request()
            chunk = inflater.decompress(pending, want)
            out.add(chunk)
            pending = inflater.unconsumed_tail
            if len(chunk) < want and not inflater.eof:
                raise CompressionError("gzip: truncated stream")
        member = inflater.unused_data
        if not member:
            return out.value()
        if not member.startswith(b"\x1f\x8b"):
            raise CompressionError(f"gzip: {len(member)} trailing bytes after the last member")


def _xerial_compress(payload: bytes) -> bytes:
    parts = [_XERIAL_HEADER]
    for start in range(0, len(payload), _XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(payload[start : start + _XERIAL_BLOCK_SIZE]))
        parts.append(struct.pack(">i", len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_decompress(payload: bytes, out: _Output) -> bytes:
    # SnappyInputStream.readHeader: empty input is an error; anything shorter than the 16-byte
    # header or without the 8-byte magic is "(probably) compressed by Snappy.compress(byte[])".
    # The version fields of the first header are not checked there, so they are not checked here.
    if not payload:
        raise CompressionError("snappy: cannot decompress an empty stream")
    if len(payload) < len(_XERIAL_HEADER) or not payload.startswith(_XERIAL_MAGIC):
        _snappy_block(payload, out, "raw block")
        return out.value()
    pos = len(_XERIAL_HEADER)
    while pos < len(payload):
        if len(payload) - pos < 4:
            raise CompressionError(
                f"snappy: {len(payload) - pos} trailing bytes at offset {pos}, "
                "too short for a xerial chunk length"
            )
        (chunk_size,) = struct.unpack_from(">i", payload, pos)
        if chunk_size == _XERIAL_MAGIC_HEAD:
            pos = _xerial_concatenated_header(payload, pos)
            continue
        if not 0 < chunk_size <= _XERIAL_MAX_CHUNK:
            raise CompressionError(
                f"snappy: invalid xerial chunk size {chunk_size} at offset {pos}"
            )
        end = pos + 4 + chunk_size
        if end > len(payload):
            raise CompressionError(
                f"snappy: xerial chunk at offset {pos} declares {chunk_size} bytes, "
                f"{len(payload) - pos - 4} remain"
            )
        _snappy_block(payload[pos + 4 : end], out, f"xerial chunk at offset {pos}")
        pos = end
    return out.value()


def _xerial_concatenated_header(payload: bytes, pos: int) -> int:
    """Check a xerial header that starts another stream at `pos`; return where its chunks start."""
    header = payload[pos : pos + len(_XERIAL_HEADER)]
    if len(header) < len(_XERIAL_HEADER) or not header.startswith(_XERIAL_MAGIC):
        raise CompressionError(f"snappy: broken xerial header of a concatenated stream at {pos}")
    version, _ = struct.unpack_from(">ii", header, len(_XERIAL_MAGIC))
    if version < 1:
        raise CompressionError(f"snappy: concatenated xerial stream has version {version} < 1")
    return pos + len(_XERIAL_HEADER)


def _snappy_block(block: bytes, out: _Output, where: str) -> None:
    # The uncompressed length leads every raw block: check it before allocating anything.
    length = _snappy_uncompressed_length(block, where)
    out.reserve(length)
    decoded = bytes(cramjam.snappy.decompress_raw(block))
    if len(decoded) != length:
        raise CompressionError(f"snappy: {where} declares {length} bytes, decoded {len(decoded)}")
    out.add(decoded)


def _snappy_uncompressed_length(block: bytes, where: str) -> int:
    length = 0
    for index, byte in enumerate(block[:5]):
        length |= (byte & 0x7F) << (7 * index)
        if byte < 0x80:
            if length > 0xFFFFFFFF:
                break
            return length
    raise CompressionError(f"snappy: {where} has a malformed uncompressed-length varint")


def _lz4_decompress(payload: bytes, out: _Output) -> bytes:
    _lz4_check_descriptor(payload)
    decoder = lz4.frame.LZ4FrameDecompressor()
    pending = payload
    while True:
        want = out.request()
        chunk: bytes = decoder.decompress(pending, max_length=want)
        pending = b""
        out.add(chunk)
        if decoder.eof:
            break
        if len(chunk) < want:
            raise CompressionError("lz4: truncated frame (no end mark)")
    if decoder.unused_data:
        raise CompressionError(f"lz4: {len(decoder.unused_data)} trailing bytes after the end mark")
    return out.value()


def _lz4_check_descriptor(frame: bytes) -> None:
    """Apply Lz4BlockInputStream.readHeader and Lz4BlockOutputStream.FLG/BD validation."""
    if len(frame) < 7:
        raise CompressionError(f"lz4: stream ended prematurely ({len(frame)} bytes)")
    if not frame.startswith(_LZ4_MAGIC):
        raise CompressionError(f"lz4: invalid magic bytes {frame[:4].hex()}, expected 04224d18")
    flg, bd = frame[4], frame[5]
    # Kafka treats both low FLG bits as reserved, so the LZ4 DictID flag (bit 0) is refused too.
    if flg & 0x03:
        raise CompressionError(f"lz4: FLG reserved bits must be 0 (FLG=0x{flg:02x})")
    if not flg & 0x20:
        raise CompressionError(f"lz4: dependent block stream is unsupported (FLG=0x{flg:02x})")
    if flg >> 6 != 1:
        raise CompressionError(f"lz4: frame version {flg >> 6} is unsupported (FLG=0x{flg:02x})")
    if bd & 0x8F:
        raise CompressionError(f"lz4: BD reserved bits must be 0 (BD=0x{bd:02x})")
    block_size_id = (bd >> 4) & 0x07
    if block_size_id < 4:
        raise CompressionError(f"lz4: block size id {block_size_id} is not between 4 and 7")
    # Content size (FLG bit 3), block checksum (bit 4) and content checksum (bit 2) are accepted.
    end = 6 + (8 if flg & 0x08 else 0)
    if len(frame) <= end:
        raise CompressionError("lz4: stream ended prematurely inside the frame descriptor")
    expected = (_xxh32_short(frame[4:end]) >> 8) & 0xFF
    if frame[end] != expected:
        raise CompressionError(
            f"lz4: frame descriptor checksum 0x{frame[end]:02x} does not match 0x{expected:02x}"
        )


_XXH_P1: Final = 0x9E3779B1
_XXH_P2: Final = 0x85EBCA77
_XXH_P3: Final = 0xC2B2AE3D
_XXH_P4: Final = 0x27D4EB2F
_XXH_P5: Final = 0x165667B1
_U32: Final = 0xFFFFFFFF


def _xxh32_short(data: bytes) -> int:
    """XXH32 with seed 0 of fewer than 16 bytes (a frame descriptor is at most 10 bytes here)."""
    if len(data) >= 16:
        raise HarnessDefect("_xxh32_short only hashes inputs shorter than 16 bytes")
    acc = (_XXH_P5 + len(data)) & _U32
    index = 0
    while index + 4 <= len(data):
        (word,) = struct.unpack_from("<I", data, index)
        acc = (_rotl32((acc + word * _XXH_P3) & _U32, 17) * _XXH_P4) & _U32
        index += 4
    for byte in data[index:]:
        acc = (_rotl32((acc + byte * _XXH_P5) & _U32, 11) * _XXH_P1) & _U32
    acc = ((acc ^ (acc >> 15)) * _XXH_P2) & _U32
    acc = ((acc ^ (acc >> 13)) * _XXH_P3) & _U32
    return acc ^ (acc >> 16)


def _rotl32(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _U32


def _zstd_decompress(payload: bytes, out: _Output) -> bytes:
    # zstd streaming decoders (zstd-jni included) read concatenated frames one after another.
    pending = payload
    while True:
        decoder = zstandard.ZstdDecompressor().decompressobj()
        pos = 0
        while not decoder.eof:
            if pos >= len(pending):
                raise CompressionError("zstd: truncated frame")
            feed = max(_ZSTD_MIN_FEED, min(_ZSTD_MAX_FEED, (out.limit - out.size) >> 15))
            out.add(decoder.decompress(pending[pos : pos + feed]))
            pos += feed
        pending = decoder.unused_data + pending[pos:]
        if not pending:
            return out.value()
