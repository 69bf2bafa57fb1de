"""The generated codec's whole-array paths (issue 16) read and write what the element-by-element
code does, and hand over to it, with the same errors, whenever an array is not plain."""

from __future__ import annotations

import struct

import pytest

from kconform.codecs.messages import ApiVersionsResponse, GetTelemetrySubscriptionsResponse
from kconform.codecs.wire import DecodeError, EncodeError

AV = ApiVersionsResponse


def keys(n: int) -> list[ApiVersionsResponse.ApiVersion]:
    return [AV.ApiVersion(api_key=k, min_version=k % 3, max_version=k % 17) for k in range(n)]


def entries(values: list[tuple[int, int, int]], tags: dict[int, bytes]) -> bytes:
    """Flexible ApiVersion entries written by hand: three int16s, then the tag section."""
    out = b""
    for i, v in enumerate(values):
        out += struct.pack(">hhh", *v)
        out += b"\x01" + bytes((7, len(tags[i]))) + tags[i] if i in tags else b"\x00"
    return out


@pytest.mark.parametrize("position", [0, 3, 5])
def test_an_entry_with_unknown_tags_anywhere_in_the_array_is_read_and_written_back(
    position: int,
) -> None:
    values = [(k, 0, k + 1) for k in range(6)]
    wire = b"\x00\x00" + b"\x07" + entries(values, {position: b"\xab"}) + b"\x00" * 4 + b"\x00"
    decoded = AV.decode(wire, 3)
    assert [(k.api_key, k.min_version, k.max_version) for k in decoded.api_keys] == values
    assert [k.unknown_tagged_fields for k in decoded.api_keys] == [
        {7: b"\xab"} if i == position else {} for i in range(6)
    ]
    assert decoded.encode(3) == wire


@pytest.mark.parametrize("version", [0, 2, 3])
def test_whole_array_encoding_matches_the_entries_written_one_by_one(version: int) -> None:
    body = AV(api_keys=keys(40))
    tag_section = b"\x00" if version >= 3 else b""
    expected = b"".join(
        struct.pack(">hhh", k.api_key, k.min_version, k.max_version) + tag_section
        for k in body.api_keys
    )
    assert expected in body.encode(version)
    assert AV.decode(body.encode(version), version) == body


@pytest.mark.parametrize("version", [0, 3])
def test_an_out_of_range_entry_names_the_struct_and_field(version: int) -> None:
    body = AV(api_keys=[*keys(3), AV.ApiVersion(api_key=70000)])
    with pytest.raises(EncodeError) as raised:
        body.encode(version)
    assert str(raised.value).startswith("ApiVersionsResponse.ApiKeys: ApiVersion.ApiKey: ")


def test_an_entry_of_the_wrong_type_is_reported_by_the_element_encoder() -> None:
    body = AV(api_keys=[*keys(2), None])
    with pytest.raises(EncodeError, match=r"^ApiVersionsResponse\.ApiKeys: ApiVersion\.ApiKey: "):
        body.encode(3)


def test_an_out_of_range_primitive_element_names_the_array() -> None:
    body = GetTelemetrySubscriptionsResponse(accepted_compression_types=[1, 300])
    try:
        struct.pack(">b", 300)
    except struct.error as exc:
        detail = str(exc)
    with pytest.raises(EncodeError) as raised:
        body.encode(0)
    assert str(raised.value) == f"{body.struct_name}.AcceptedCompressionTypes: {detail}"


def test_a_truncated_array_is_reported_at_the_first_entry_that_does_not_fit() -> None:
    wire = AV(api_keys=keys(3)).encode(3)
    cut = 2 + 1 + 7 * 2 + 3  # error code, length, two whole entries, half of the third
    with pytest.raises(DecodeError) as raised:
        AV.decode(wire[:cut], 3)
    assert raised.value.path == ("ApiVersionsResponse", "ApiKeys", "[2]", "MinVersion")
    assert raised.value.offset == 2 + 1 + 7 * 2 + 2


def test_primitive_arrays_read_whole_and_truncated() -> None:
    body = GetTelemetrySubscriptionsResponse(accepted_compression_types=[4, 3, 2, 1, 0])
    wire = body.encode(0)
    assert GetTelemetrySubscriptionsResponse.decode(wire, 0) == body
    with pytest.raises(DecodeError):
        GetTelemetrySubscriptionsResponse.decode(wire[:28], 0)


def test_unknown_tagged_fields_of_a_decoded_entry_behave_like_a_dict_of_its_own() -> None:
    decoded = AV.decode(AV(api_keys=keys(3)).encode(3), 3)
    first, second, _ = decoded.api_keys
    assert first.unknown_tagged_fields == {}
    assert first == AV.ApiVersion(api_key=0, min_version=0, max_version=0)
    assert "unknown_tagged_fields" not in repr(first)
    first.unknown_tagged_fields[9] = b"\x01"
    assert second.unknown_tagged_fields == {}
    assert first != AV.ApiVersion(api_key=0)
    assert AV.decode(decoded.encode(3), 3).api_keys[0].unknown_tagged_fields == {9: b"\x01"}
