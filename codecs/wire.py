"""Kafka wire primitives and the codec's two error types.

The message codecs that `schema.py` generates call these helpers; anything that needs to read a
Kafka primitive outside a declared message (record batches, hand-built fuzz frames) uses them
too. Readers take a buffer, a position and an end, and return ``(value, new_position)``; they
never copy large byte fields: bytes come back as ``memoryview`` slices of the input.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence

from kconform.errors import HarnessDefect, ProtocolError

__all__ = [
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "ONE_UUID",
    "ZERO_UUID",
    "DecodeError",
    "EncodeError",
    "kafka_uuid_str",
    "read_bytes",
    "read_compact_bytes",
    "read_compact_string",
    "read_string",
    "read_uuid",
    "read_uvarint",
    "read_uvarlong",
    "read_varint",
    "read_varlong",
    "short_read",
    "uvarint",
    "varint",
    "varlong",
]

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")

ZERO_UUID = uuid.UUID(int=0)
"""Kafka's `Uuid.ZERO_UUID`: "no id yet" in GetTelemetrySubscriptions, reserved in PushTelemetry."""
ONE_UUID = uuid.UUID(int=1)
"""Kafka's `Uuid.ONE_UUID`, the other reserved id (`Uuid.RESERVED`)."""

Buffer = bytes | bytearray | memoryview


class DecodeError(ProtocolError):
    """Bytes that do not decode as the declared message; says where.

    `path` is the message name followed by field names and array indexes, `offset` the byte
    offset (from the start of the decoded buffer) of the field that failed.
    """

    def __init__(self, detail: str, *, offset: int, path: Sequence[str] = ()) -> None:
        self.detail = detail
        self.offset = offset
        self.path = tuple(path)
        super().__init__(str(self))

    def within(self, segment: str) -> DecodeError:
        """The same error seen from the enclosing struct (`segment` is a field or `[i]`)."""
        return DecodeError(self.detail, offset=self.offset, path=(segment, *self.path))

    @property
    def where(self) -> str:
        out = ""
        for seg in self.path:
            out += seg if (not out or seg.startswith("[")) else "." + seg
        return out

    def __str__(self) -> str:
        where = self.where
        prefix = f"{where}: " if where else ""
        return f"{prefix}{self.detail} (at byte {self.offset})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_decode_error, (self.detail, self.offset, self.path))


def _rebuild_decode_error(detail: str, offset: int, path: tuple[str, ...]) -> DecodeError:
    return DecodeError(detail, offset=offset, path=path)


class EncodeError(ProtocolError):
    """A value that cannot be written at the requested version (range, null, absent field)."""


class CodecMisuse(HarnessDefect, TypeError):
    """The codec called with what its signature rules out (a field the struct lacks, text for
    bytes): the caller's programming error. Also a TypeError, as Python's own for a bad
    argument."""


def short_read(what: str, pos: int, need: int, end: int) -> DecodeError:
    return DecodeError(f"{what} needs {need} bytes, {max(end - pos, 0)} remain", offset=pos)


# --- variable-length integers -------------------------------------------------------------


def uvarint(value: int) -> bytes:
    """Unsigned LEB128 varint (Kafka `ByteUtils.writeUnsignedVarint`), 32-bit range."""
    if not 0 <= value <= 0xFFFFFFFF:
        raise EncodeError(f"unsigned varint out of range: {value}")
    if value < 0x80:
        return bytes((value,))
    if value < 0x4000:  # two and three bytes spelt out: lengths of most byte fields
        return bytes(((value & 0x7F) | 0x80, value >> 7))
    if value < 0x200000:
        return bytes(((value & 0x7F) | 0x80, ((value >> 7) & 0x7F) | 0x80, value >> 14))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _uvarlong(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint(value: int) -> bytes:
    """Zig-zag signed varint (int32), as used in record headers."""
    if not -(2**31) <= value < 2**31:
        raise EncodeError(f"varint out of int32 range: {value}")
    return uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def varlong(value: int) -> bytes:
    """Zig-zag signed varlong (int64)."""
    if not -(2**63) <= value < 2**63:
        raise EncodeError(f"varlong out of int64 range: {value}")
    return _uvarlong(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def _read_unsigned(buf: Buffer, pos: int, end: int, max_bytes: int, what: str) -> tuple[int, int]:
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise DecodeError(f"truncated {what}", offset=start)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if pos - start >= max_bytes:
            raise DecodeError(f"{what} longer than {max_bytes} bytes", offset=start)


def read_uvarint(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    """Unsigned varint of at most 5 bytes; values above 2**32-1 are an error, as in Kafka."""
    if pos + 2 < end:  # up to three bytes without the general loop (lengths below 2 MiB)
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        c = buf[pos + 1]
        if c < 0x80:
            return (b & 0x7F) | (c << 7), pos + 2
        d = buf[pos + 2]
        if d < 0x80:
            return (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14), pos + 3
    elif pos < end:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
    value, new_pos = _read_unsigned(buf, pos, end, 5, "unsigned varint")
    if value > 0xFFFFFFFF:
        raise DecodeError("unsigned varint exceeds 32 bits", offset=pos)
    return value, new_pos


def read_uvarlong(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    value, new_pos = _read_unsigned(buf, pos, end, 10, "unsigned varlong")
    if value > 0xFFFFFFFFFFFFFFFF:
        raise DecodeError("unsigned varlong exceeds 64 bits", offset=pos)
    return value, new_pos


def read_varint(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    raw, pos = read_uvarint(buf, pos, end)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    raw, pos = read_uvarlong(buf, pos, end)
    return (raw >> 1) ^ -(raw & 1), pos


# --- strings, bytes, uuids ----------------------------------------------------------------


def _utf8(buf: Buffer, pos: int, n: int) -> str:
    try:
        return str(buf[pos : pos + n], "utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"string is not valid UTF-8 ({exc.reason})", offset=pos) from None


def read_string(buf: Buffer, pos: int, end: int) -> tuple[str | None, int]:
    """Classic string: int16 length, negative means null."""
    if pos + 2 > end:
        raise short_read("string length", pos, 2, end)
    (n,) = INT16.unpack_from(buf, pos)
    pos += 2
    if n < 0:
        return None, pos
    if n > end - pos:
        raise DecodeError(f"string length {n} exceeds remaining {end - pos}", offset=pos - 2)
    return _utf8(buf, pos, n), pos + n


def read_compact_string(buf: Buffer, pos: int, end: int) -> tuple[str | None, int]:
    """Compact string: unsigned varint length+1, zero means null."""
    n, npos = read_uvarint(buf, pos, end)
    if n == 0:
        return None, npos
    n -= 1
    if n > end - npos:
        raise DecodeError(f"string length {n} exceeds remaining {end - npos}", offset=pos)
    return _utf8(buf, npos, n), npos + n


def read_bytes(buf: memoryview, pos: int, end: int) -> tuple[memoryview | None, int]:
    """Classic bytes: int32 length, negative means null; the value is a view, not a copy."""
    if pos + 4 > end:
        raise short_read("bytes length", pos, 4, end)
    (n,) = INT32.unpack_from(buf, pos)
    pos += 4
    if n < 0:
        return None, pos
    if n > end - pos:
        raise DecodeError(f"length {n} exceeds remaining {end - pos}", offset=pos - 4)
    return buf[pos : pos + n], pos + n


def read_compact_bytes(buf: memoryview, pos: int, end: int) -> tuple[memoryview | None, int]:
    n, npos = read_uvarint(buf, pos, end)
    if n == 0:
        return None, npos
    n -= 1
    if n > end - npos:
        raise DecodeError(f"length {n} exceeds remaining {end - npos}", offset=pos)
    return buf[npos : npos + n], npos + n


_new_uuid = uuid.UUID.__new__
_set_int = uuid.UUID.__dict__["int"].__set__  # the slots themselves: UUID.__setattr__ refuses
_set_is_safe = uuid.UUID.__dict__["is_safe"].__set__
_from_bytes = int.from_bytes


def read_uuid(buf: Buffer, pos: int, end: int) -> tuple[uuid.UUID, int]:
    if pos + 16 > end:
        raise short_read("uuid", pos, 16, end)
    # uuid.UUID(bytes=...) validates arguments we already know are right; it costs 3x this.
    value = _new_uuid(uuid.UUID)
    _set_int(value, _from_bytes(buf[pos : pos + 16], "big"))
    _set_is_safe(value, uuid.SafeUUID.unknown)
    return value, pos + 16


def kafka_uuid_str(value: uuid.UUID) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding."""
    import base64

    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")
