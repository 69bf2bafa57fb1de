"""Kafka primitive encodings against hand-computed bytes (ByteUtils / Uuid facts)."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kconform.codecs import wire
from kconform.codecs.wire import DecodeError, EncodeError


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (2**32 - 1, "ffffffff0f")],
)
def test_uvarint_golden(value: int, encoded: str) -> None:
    assert wire.uvarint(value).hex() == encoded
    assert wire.read_uvarint(bytes.fromhex(encoded), 0, len(encoded) // 2) == (
        value,
        len(encoded) // 2,
    )


@pytest.mark.parametrize(
    ("value", "encoded"), [(0, "00"), (-1, "01"), (1, "02"), (-64, "7f"), (64, "8001")]
)
def test_zigzag_varint_golden(value: int, encoded: str) -> None:
    assert wire.varint(value).hex() == encoded
    assert wire.read_varint(bytes.fromhex(encoded), 0, len(encoded) // 2)[0] == value


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_roundtrip(value: int) -> None:
    data = wire.varint(value)
    assert wire.read_varint(data, 0, len(data)) == (value, len(data))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_roundtrip(value: int) -> None:
    data = wire.varlong(value)
    assert wire.read_varlong(data, 0, len(data)) == (value, len(data))


def test_varint_range_is_enforced() -> None:
    with pytest.raises(EncodeError):
        wire.varint(2**31)
    with pytest.raises(EncodeError):
        wire.uvarint(-1)


def test_uvarint_longer_than_five_bytes_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="longer than 5 bytes"):
        wire.read_uvarint(b"\x80\x80\x80\x80\x80\x01", 0, 6)
    with pytest.raises(DecodeError, match="exceeds 32 bits"):
        wire.read_uvarint(b"\xff\xff\xff\xff\x1f", 0, 5)
    with pytest.raises(DecodeError, match="truncated"):
        wire.read_uvarint(b"\x80", 0, 1)


def test_strings_classic_and_compact() -> None:
    assert wire.read_string(b"\x00\x03abc", 0, 5) == ("abc", 5)
    assert wire.read_string(b"\xff\xff", 0, 2) == (None, 2)
    assert wire.read_compact_string(b"\x04abc", 0, 4) == ("abc", 4)
    assert wire.read_compact_string(b"\x00", 0, 1) == (None, 1)
    with pytest.raises(DecodeError, match="exceeds remaining 1"):
        wire.read_string(b"\x00\x03a", 0, 3)
    with pytest.raises(DecodeError, match="UTF-8"):
        wire.read_compact_string(b"\x02\xff", 0, 2)


def test_bytes_are_views_not_copies() -> None:
    data = b"\x00\x00\x00\x03xyz"
    view, pos = wire.read_bytes(memoryview(data), 0, len(data))
    assert isinstance(view, memoryview) and view.obj is data
    assert (bytes(view), pos) == (b"xyz", 7)


def test_uuid_and_kafka_string_form() -> None:
    value = uuid.UUID("f0e1d2c3-b4a5-9687-7869-5a4b3c2d1e0f")
    decoded, pos = wire.read_uuid(value.bytes, 0, 16)
    assert (decoded, pos) == (value, 16)
    assert hash(decoded) == hash(value) and str(decoded) == str(value)
    # Kafka's Uuid.toString(): URL-safe base64 without padding.
    assert wire.kafka_uuid_str(wire.ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert wire.kafka_uuid_str(wire.ONE_UUID) == "AAAAAAAAAAAAAAAAAAAAAQ"


def test_decode_error_names_path_and_offset() -> None:
    error = DecodeError("length 9 exceeds remaining 2", offset=27).within("Metrics")
    error = error.within("[3]").within("Items").within("PushTelemetryRequest")
    assert str(error) == (
        "PushTelemetryRequest.Items[3].Metrics: length 9 exceeds remaining 2 (at byte 27)"
    )
