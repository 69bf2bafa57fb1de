"""Decoders take any bytes: they return a message or raise DecodeError, in work linear in n.

A harness that talks to misbehaving clients and brokers decodes whatever arrives, so a decoder
must never raise anything but `DecodeError`, never loop on a length it has not seen the bytes
for (Kafka: "Tried to allocate a collection of size N, but there are only M bytes remaining"),
and must say where it failed: message name, field path and a byte offset inside the buffer.

"Linear" is checked without clocks: the decode runs under a tracer that counts the codec's
executed lines and aborts once they exceed a budget proportional to the input's length, so a
runaway loop fails fast and deterministically instead of hanging the run.
"""

from __future__ import annotations

import re
import sys
import tracemalloc
import uuid
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kconform.codecs import wire
from kconform.codecs.messages import (
    ALL_MESSAGES,
    ApiVersionsResponse,
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
    MetadataResponse,
    ProduceRequest,
    PushTelemetryRequest,
)
from kconform.codecs.schema import Field, Message, Struct
from kconform.codecs.wire import DecodeError

PAIRS = [
    pytest.param(cls, version, id=f"{cls.struct_name}-v{version}")
    for cls in ALL_MESSAGES
    for version in cls.versions()
]
EXAMPLES = max(10, settings().max_examples // 10)  # ~180 pairs share the budget


# --- the work budget -------------------------------------------------------------------------

LINES_PER_BYTE = 64  # measured: under 11 for every declared message; a loop over N is far over
FIXED_LINES = 1000  # entry, error construction, first-use compilation of nested structs


class WorkBudgetExceeded(BaseException):
    """Raised from the tracer; a BaseException so the codec's `except` clauses cannot eat it."""


def _is_codec_frame(frame: FrameType) -> bool:
    name = frame.f_code.co_filename
    return name.startswith("<kconform codec") or name == wire.__file__


def bounded(cls: type[Message], buf: bytes, version: int, *, strict: bool = True) -> Any:
    """`cls.decode(buf)` under a line budget linear in len(buf); returns the message or the
    DecodeError (after checking what it reports). Any other exception propagates."""
    budget = LINES_PER_BYTE * (len(buf) + 1) + FIXED_LINES
    spent = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Callable[..., Any] | None:
        nonlocal spent
        if not _is_codec_frame(frame):
            return None
        spent += 1
        if spent > budget:
            raise WorkBudgetExceeded(
                f"{cls.struct_name} v{version}: over {budget} codec lines for {len(buf)} bytes"
            )
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        return cls.decode(buf, version, strict=strict)
    except DecodeError as exc:
        check_error(exc, cls, buf)
        return exc
    finally:
        sys.settrace(previous)


def check_error(exc: DecodeError, cls: type[Message], buf: bytes) -> None:
    """The error names the message and a field path, and points inside the buffer."""
    text = str(exc)
    assert exc.path and exc.path[0] == cls.struct_name, exc.path
    assert all(exc.path), exc.path  # no empty segment
    assert len(exc.path) >= 2 or "trailing bytes" in text, text  # a field, unless past the end
    assert text.startswith(f"{cls.struct_name}"), text
    assert 0 <= exc.offset <= len(buf), (exc.offset, len(buf), text)
    assert text.endswith(f"(at byte {exc.offset})"), text


def every_truncation_fails(cls: type[Message], valid: bytes, version: int, cuts: list[int]) -> None:
    view = memoryview(valid)
    for n in cuts:
        try:
            cls.decode(valid[:n], version)
        except DecodeError as exc:
            check_error(exc, cls, valid[:n])
        else:
            raise AssertionError(f"{n} of {len(valid)} bytes decoded")
        try:
            cls.decode_from(view, 0, n, version)
        except DecodeError as exc:
            assert exc.offset <= n, (exc.offset, n)
        else:
            raise AssertionError(f"decode_from stopped at {n} of {len(valid)} bytes decoded")


def strict_fixpoint(cls: type[Message], version: int, decoded: Message) -> None:
    """Whatever decodes strictly re-encodes, and that encoding decodes to the same value."""
    again = decoded.encode(version)
    assert cls.decode(again, version) == decoded


# --- arbitrary bytes and mutations of valid encodings ----------------------------------------


@pytest.mark.parametrize(("cls", "version"), PAIRS)
@settings(max_examples=EXAMPLES)
@given(buf=st.binary(max_size=300), strict=st.booleans())
@example(buf=b"", strict=True)
@example(buf=b"\xff" * 64, strict=False)
@example(buf=b"\x80" * 64, strict=True)  # an unterminated varint everywhere
def test_arbitrary_bytes_decode_or_raise_decode_error(
    cls: type[Message], version: int, buf: bytes, strict: bool
) -> None:
    result = bounded(cls, buf, version, strict=strict)
    if strict and isinstance(result, Message):
        strict_fixpoint(cls, version, result)


@pytest.mark.parametrize(("cls", "version"), PAIRS)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_mutated_encodings_decode_or_raise_decode_error(
    cls: type[Message], version: int, data: st.DataObject
) -> None:
    valid = data.draw(cls.strategy(version), label=cls.struct_name).encode(version)

    # Truncations fail, whether the bytes are cut off or `end` stops short of them: at every
    # length of a small encoding, at drawn lengths of a large one (cutting is quadratic).
    if len(valid) <= 64:
        cuts: list[int] = list(range(len(valid)))
    else:
        cuts = data.draw(st.lists(st.integers(0, len(valid) - 1), max_size=16), label="cuts")
    every_truncation_fails(cls, valid, version, cuts)

    if not valid:
        return
    flips = data.draw(st.lists(st.integers(0, 8 * len(valid) - 1), min_size=1, max_size=3))
    flipped = bytearray(valid)
    for bit in flips:
        flipped[bit // 8] ^= 1 << (bit % 8)
    for strict in (True, False):
        result = bounded(cls, bytes(flipped), version, strict=strict)
        if strict and isinstance(result, Message):
            strict_fixpoint(cls, version, result)

    at = data.draw(st.integers(0, len(valid) - 1), label="inflated at")
    for inflated in _inflations(valid, at):
        bounded(cls, inflated, version)


# A length prefix claiming far more than the buffer holds, in each encoding Kafka uses.
_HUGE = (
    ("int32", b"\x7f\xff\xff\xff", 4),  # classic array / bytes length: overwrite 4 bytes
    ("int16", b"\x7f\xff", 2),  # classic string length: overwrite 2 bytes
    ("uvarint", b"\xff\xff\xff\xff\x0f", 1),  # compact length / tag count: replace 1 byte
)


def _inflations(valid: bytes, at: int) -> list[bytes]:
    return [valid[:at] + huge + valid[at + width :] for _, huge, width in _HUGE]


def _filled(cls: type[Struct], version: int) -> Struct:
    """An instance with one element in every array, no nulls and every tagged field written, so
    its encoding holds every length prefix and tag the version has."""
    return cls(
        **{f.attr: _filled_value(cls, f, version) for f in cls.schema_fields if f.present(version)}
    )


_FILLED_PRIMITIVES: dict[str, Any] = {
    "bool": True, "string": "s", "bytes": b"b", "records": b"r", "uuid": uuid.UUID(int=7),
    "float64": 1.5,
}  # fmt: skip


def _filled_value(cls: type[Struct], f: Field, version: int) -> Any:
    if f.is_struct:
        element: Any = _filled(cls.structs[f.element_type], version)
    else:
        element = _FILLED_PRIMITIVES.get(f.element_type, 1)
    return [element] if f.is_array else element


@pytest.mark.parametrize(("cls", "version"), PAIRS)
def test_every_truncation_and_every_inflated_length_of_a_full_encoding_is_rejected(
    cls: type[Message], version: int
) -> None:
    valid = _filled(cls, version).encode(version)
    assert cls.decode(valid, version) == _filled(cls, version)
    every_truncation_fails(cls, valid, version, list(range(len(valid))))
    for at in range(len(valid)):
        for inflated in _inflations(valid, at):
            bounded(cls, inflated, version)


# --- what the errors say --------------------------------------------------------------------


def hx(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts))


@pytest.mark.parametrize(
    ("version", "body", "message"),
    [
        pytest.param(
            0,
            hx("0000", "7fffffff", "001200000004"),  # ErrorCode, ApiKeys int32 count, 6 bytes
            "ApiVersionsResponse.ApiKeys: array length 2147483647 exceeds remaining 6 (at byte 2)",
            id="classic",
        ),
        pytest.param(
            3,
            hx("0000", "ffffffff0f", "001200000004"),  # compact count 2**32-1 → 2**32-2 items
            "ApiVersionsResponse.ApiKeys: array length 4294967294 exceeds remaining 6 (at byte 2)",
            id="compact",
        ),
    ],
)
def test_a_huge_array_length_in_a_short_buffer_is_rejected_before_reading_elements(
    version: int, body: bytes, message: str
) -> None:
    result = bounded(ApiVersionsResponse, body, version)
    assert isinstance(result, DecodeError)
    assert str(result) == message
    assert result.path == ("ApiVersionsResponse", "ApiKeys") and result.offset == 2


def test_an_oversized_metrics_payload_names_the_field_and_its_offset() -> None:
    head = hx(
        "00112233445566778899aabbccddeeff",  # ClientInstanceId
        "00000007",  # SubscriptionId
        "00",  # Terminating
        "04",  # CompressionType zstd
    )
    body = head + hx("f1a204") + b"\x00" * 12  # Metrics: compact length 70001 → 70000 bytes
    result = bounded(PushTelemetryRequest, body, 0)
    assert isinstance(result, DecodeError)
    assert str(result) == (
        "PushTelemetryRequest.Metrics: length 70000 exceeds remaining 12 (at byte 22)"
    )
    assert result.path == ("PushTelemetryRequest", "Metrics") and result.where == (
        "PushTelemetryRequest.Metrics"
    )


def test_nested_errors_carry_the_whole_path() -> None:
    partition = MetadataResponse.MetadataResponsePartition(leader_id=1, isr_nodes=[1])
    topic = MetadataResponse.MetadataResponseTopic(name="t", partitions=[partition])
    valid = MetadataResponse(topics=[topic]).encode(1)
    isr_count_at = len(valid) - 8  # IsrNodes: int32 count, then one int32 (last field in v1)
    broken = valid[:isr_count_at] + hx("7fffffff") + valid[isr_count_at + 4 :]
    result = bounded(MetadataResponse, broken, 1)
    assert isinstance(result, DecodeError)
    assert result.where == "MetadataResponse.Topics[0].Partitions[0].IsrNodes"
    assert result.offset == isr_count_at
    assert re.search(r"array length 2147483647 exceeds remaining 4\b", str(result))


def test_string_elements_are_named_by_index() -> None:
    valid = GetTelemetrySubscriptionsResponse(requested_metrics=["org.", "kafka."]).encode(0)
    second = valid.index(b"\x07kafka.")  # compact length 7 → 6 bytes
    broken = valid[:second] + hx("ffffffff0f") + valid[second + 1 :]
    result = bounded(GetTelemetrySubscriptionsResponse, broken, 0)
    assert isinstance(result, DecodeError)
    assert result.where == "GetTelemetrySubscriptionsResponse.RequestedMetrics[1]"
    assert result.offset == second


@pytest.mark.parametrize(
    ("tags", "detail"),
    [
        pytest.param(hx("ffffffff0f", "0001"), "", id="tag-count-2**32-1"),
        pytest.param(
            hx("01", "05", "64", "00"),  # one tag: 5, size 100, then a single byte
            "tagged field 5 size 100 exceeds remaining 1",
            id="tag-size-over-remaining",
        ),
        pytest.param(hx("01", "8080808080", "00"), "longer than 5 bytes", id="tag-varint-6-bytes"),
    ],
)
def test_tag_sections_are_bounded_by_the_bytes_present(tags: bytes, detail: str) -> None:
    body = bytes(16) + tags  # ClientInstanceId, then the tag section
    result = bounded(GetTelemetrySubscriptionsRequest, body, 0)
    assert isinstance(result, DecodeError)
    assert result.path[:2] == ("GetTelemetrySubscriptionsRequest", "<tagged fields>")
    assert detail in str(result)


def test_trailing_bytes_are_an_error_at_their_offset() -> None:
    body = GetTelemetrySubscriptionsRequest().encode(0) + b"\x00\x00"
    result = bounded(GetTelemetrySubscriptionsRequest, body, 0)
    assert isinstance(result, DecodeError)
    assert result.offset == 17 and "2 trailing bytes" in str(result)


# --- zero copy --------------------------------------------------------------------------------


@pytest.mark.parametrize("container", [bytes, bytearray, memoryview], ids=lambda c: c.__name__)
def test_a_large_metrics_payload_is_a_view_of_the_input_not_a_copy(
    container: Callable[[bytes], Any],
) -> None:
    payload = bytes(range(256)) * 4096  # 1 MiB
    buf = container(PushTelemetryRequest(metrics=payload).encode(0))
    underlying = buf.obj if isinstance(buf, memoryview) else buf

    tracemalloc.start()
    try:
        decoded = PushTelemetryRequest.decode(buf, 0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert isinstance(decoded.metrics, memoryview)
    assert decoded.metrics.obj is underlying
    assert peak < 64 * 1024  # a copy would be 1 MiB
    assert decoded.metrics == payload


def test_produce_records_are_views_too() -> None:
    records = b"\x00" * 100_000
    partition = ProduceRequest.PartitionProduceData(index=0, records=records)
    topic = ProduceRequest.TopicProduceData(name="t", partition_data=[partition])
    buf = ProduceRequest(topic_data=[topic]).encode(9)
    decoded = ProduceRequest.decode(buf, 9)
    view = decoded.topic_data[0].partition_data[0].records
    assert isinstance(view, memoryview) and view.obj is buf and view == records
