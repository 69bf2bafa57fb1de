"""Frames, headers and correlation: what a connection or proxy builds on (§A.3, B.2)."""

from __future__ import annotations

import pytest

from kconform.codecs.framing import (
    Correlator,
    FrameReader,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from kconform.codecs.messages import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    GetTelemetrySubscriptionsRequest,
    PushTelemetryResponse,
    RequestHeader,
)
from kconform.codecs.wire import INT16, INT32, DecodeError


def test_request_frame_uses_header_v2_for_flexible_versions() -> None:
    data = encode_request(GetTelemetrySubscriptionsRequest(), 0, correlation_id=5, client_id="c")
    assert INT32.unpack_from(data, 0)[0] == len(data) - 4
    # api key 71, version 0, correlation 5, client id "c" as int16 string, empty tag section
    assert data[4:].hex().startswith("00470000" + "00000005" + "000163" + "00")
    request = decode_request(data[4:])
    assert request.header_version == 2
    assert request.header.client_id == "c"
    assert request.body == GetTelemetrySubscriptionsRequest()


def test_request_frame_uses_header_v1_for_classic_versions() -> None:
    data = encode_request(ApiVersionsRequest(), 2, correlation_id=1, client_id=None)
    assert data[4:].hex() == "00120002" + "00000001" + "ffff"
    assert decode_request(data[4:]).header_version == 1


def test_apiversions_responses_always_use_header_v0() -> None:
    frame = encode_response(ApiVersionsResponse(error_code=35), 3, correlation_id=9)
    # header v0 is the correlation id alone: no tag buffer before the body
    assert frame[4:8] == INT32.pack(9) and frame[8:10] == INT16.pack(35)
    header, body, version = decode_response(frame[4:], 18, 3)
    assert (header.correlation_id, body.error_code, version) == (9, 35, 3)


def test_unsupported_apiversions_version_is_read_with_header_v2_and_left_undecoded() -> None:
    header = RequestHeader(request_api_key=18, request_api_version=32767, correlation_id=3)
    payload = header.encode(2) + b"\x01\x02garbage"
    request = decode_request(payload)
    assert request.header_version == 2
    assert request.body is None and request.body_error is not None
    assert "outside" in str(request.body_error)


def test_unknown_api_key_keeps_the_header() -> None:
    header = RequestHeader(request_api_key=9999, request_api_version=0, correlation_id=4)
    request = decode_request(header.encode(2))
    assert request.api_key == 9999 and request.body is None


def test_apiversions_v0_fallback_body_is_read_at_v0() -> None:
    """KIP-511: a broker answers an ApiVersions version it does not support with a v0 body."""
    body = ApiVersionsResponse(
        error_code=35,
        api_keys=[ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=3)],
    )
    payload = encode_response(body, 0, correlation_id=2)[4:]
    for asked in (4, 5, 99):
        _, decoded, version = decode_response(payload, 18, asked)
        assert version == 0 and decoded.api_keys[0].max_version == 3


def test_body_trailing_bytes_are_a_decode_error() -> None:
    data = encode_request(GetTelemetrySubscriptionsRequest(), 0, correlation_id=1)[4:] + b"\x00"
    request = decode_request(data)
    assert request.body is None and "trailing" in str(request.body_error)


def test_frame_reader_splits_and_bounds_frames() -> None:
    reader = FrameReader(max_frame_size=64)
    one = INT32.pack(3) + b"abc"
    two = INT32.pack(0)
    stream = one + two + INT32.pack(5) + b"xy"
    assert reader.feed(stream[:2]) == []
    assert reader.feed(stream[2:]) == [b"abc", b""]
    assert reader.pending == 6
    assert reader.feed(b"zzz") == [b"xyzzz"]
    with pytest.raises(DecodeError, match="frame size"):
        FrameReader(max_frame_size=64).feed(INT32.pack(65))
    with pytest.raises(DecodeError, match="frame size"):
        FrameReader().feed(INT32.pack(-1))


def test_correlator_matches_responses_to_requests() -> None:
    correlator = Correlator(client_id="kconform")
    cid_a, _ = correlator.request(ApiVersionsRequest(client_software_name="a"), 3)
    cid_b, _ = correlator.request(GetTelemetrySubscriptionsRequest(), 0)
    assert cid_b == cid_a + 1
    reply_b = encode_response(PushTelemetryResponse(), 0, cid_b)  # wrong type for key 71
    with pytest.raises(DecodeError):
        correlator.response(reply_b[4:])
    reply_a = encode_response(ApiVersionsResponse(error_code=0), 3, cid_a)
    cid, _, body, version = correlator.response(reply_a[4:])
    assert (cid, body.error_code, version) == (cid_a, 0, 3)
    with pytest.raises(DecodeError, match="unknown correlation id"):
        correlator.response(reply_a[4:])
