"""What the generated encoders and decoders call: the names `codegen` puts in the namespace of
every function it compiles (wire primitives, error constructors, cached varints)."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from itertools import repeat
from operator import itemgetter
from typing import Any

from kconform.codecs import wire
from kconform.codecs.wire import DecodeError, EncodeError
from kconform.errors import HarnessDefect

__all__ = ["NS_BASE"]


def _run_short(run: tuple[tuple[str, int], ...], pos: int, end: int) -> tuple[str, DecodeError]:
    """Which field of a run of fixed-width fields ran out of bytes."""
    at = pos
    for name, size in run:
        if at + size > end:
            return name, wire.short_read(name, at, size, end)
        at += size
    raise HarnessDefect("run fits")


def _read_tag_header(buf: memoryview, pos: int, end: int) -> tuple[int, int, int]:
    tag, pos = wire.read_uvarint(buf, pos, end)
    size, npos = wire.read_uvarint(buf, pos, end)
    if size > end - npos:
        raise DecodeError(
            f"tagged field {tag} size {size} exceeds remaining {end - npos}", offset=pos
        )
    return tag, npos, npos + size


def _uvarint_cached() -> Callable[[int], bytes]:
    table = [wire.uvarint(i) for i in range(256)]

    def uv(n: int) -> bytes:
        return table[n] if 0 <= n < 256 else wire.uvarint(n)

    return uv


NS_BASE: dict[str, Any] = {
    "DecodeError": DecodeError,
    "EncodeError": EncodeError,
    "short_read": wire.short_read,
    "run_short": _run_short,
    "read_tag_header": _read_tag_header,
    "read_uvarint": wire.read_uvarint,
    "read_string": wire.read_string,
    "read_compact_string": wire.read_compact_string,
    "read_bytes": wire.read_bytes,
    "read_compact_bytes": wire.read_compact_bytes,
    "uv": _uvarint_cached(),
    "UVT": tuple(wire.uvarint(i) for i in range(0x80)),  # one-byte varints, for inline lookups
    "FIRST": itemgetter(0),  # the value of a one-field `iter_unpack` tuple
    "struct_pack": struct.pack,
    "struct_error": struct.error,
    "new": object.__new__,
    "UUID": uuid.UUID,
    "set_uuid_int": uuid.UUID.__dict__["int"].__set__,  # the slots: UUID.__setattr__ refuses
    "set_uuid_is_safe": uuid.UUID.__dict__["is_safe"].__set__,
    "UUID_UNKNOWN": uuid.SafeUUID.unknown,
    "from_bytes": int.from_bytes,
    "repeat": repeat,
}
