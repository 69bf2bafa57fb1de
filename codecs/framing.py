"""Kafka frames: size prefix, header, body. Pure functions and one small state machine.

A frame on the wire is an int32 size followed by that many bytes: a request or response header
(whose version follows from the api key and version, §A.3) and the body. Responses do not
name their api, so a client must remember what it asked for: `Correlator` does that, and reads
ApiVersions answers the way KIP-511 needs (an unsupported version is answered with a v0 body).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kconform.codecs.messages import (
    API_VERSIONS_KEY,
    REQUESTS,
    RESPONSES,
    ApiVersionsResponse,
    RequestHeader,
    ResponseHeader,
    request_header_version,
    response_header_version,
)
from kconform.codecs.schema import Message
from kconform.codecs.wire import INT16, INT32, DecodeError, EncodeError

DEFAULT_MAX_FRAME = 100 * 1024 * 1024
"""Kafka's `socket.request.max.bytes` default (104857600)."""


def frame(payload: bytes) -> bytes:
    """Prefix `payload` with its int32 size."""
    return INT32.pack(len(payload)) + payload


def encode_request(
    body: Message,
    version: int,
    correlation_id: int,
    client_id: str | None = "kconform",
    *,
    strict: bool = True,
) -> bytes:
    """A complete request frame (size prefix included)."""
    api_key = body.api_key
    if api_key is None:
        raise EncodeError(f"{body.struct_name} is not a request")
    header = RequestHeader(
        request_api_key=api_key,
        request_api_version=version,
        correlation_id=correlation_id,
        client_id=client_id,
    )
    header_version = request_header_version(api_key, version)
    return frame(header.encode(header_version) + body.encode(version, strict=strict))


def encode_response(body: Message, version: int, correlation_id: int) -> bytes:
    """A complete response frame; ApiVersions responses get header v0 whatever the version."""
    api_key = body.api_key
    if api_key is None:
        raise EncodeError(f"{body.struct_name} is not a response")
    header_version = response_header_version(api_key, version)
    header = ResponseHeader(correlation_id=correlation_id)
    return frame(header.encode(header_version) + body.encode(version))


@dataclass
class RequestFrame:
    """A request as a broker sees it. `body` is None when the body could not be read."""

    header: Message  # a RequestHeader
    header_version: int
    body: Message | None
    body_error: DecodeError | None = None

    @property
    def api_key(self) -> int:
        return int(self.header.request_api_key)

    @property
    def api_version(self) -> int:
        return int(self.header.request_api_version)

    def describe(self) -> str:
        if self.body is not None:
            return self.body.describe(self.api_version)
        reason = f": {self.body_error}" if self.body_error else ""
        known = REQUESTS.get(self.api_key)
        name = known.struct_name if known else f"api {self.api_key}"
        return f"{name} v{self.api_version} (body not decoded{reason})"


def peek_request_api(payload: bytes | memoryview) -> tuple[int, int]:
    """Api key and version of a request payload (the first 4 bytes of every header version)."""
    if len(payload) < 4:
        raise DecodeError("request shorter than api key and version", offset=0, path=("Request",))
    return INT16.unpack_from(payload, 0)[0], INT16.unpack_from(payload, 2)[0]


def decode_request_header(payload: bytes | memoryview) -> Message:
    """A request's header alone (who sent it: `client_id`), its body left unread."""
    buf = payload if isinstance(payload, memoryview) else memoryview(payload)
    return _request_header(buf)[0]


def _request_header(buf: memoryview) -> tuple[Message, int, int]:
    """(header, header version, where the body starts); DecodeError if the header does not
    decode."""
    api_key, api_version = peek_request_api(buf)
    header_version = request_header_version(api_key, api_version)
    header, pos = RequestHeader.decode_from(buf, 0, len(buf), header_version)
    return header, header_version, pos


def decode_request(payload: bytes | memoryview, *, strict: bool = True) -> RequestFrame:
    """Decode a request payload (without size prefix), as a broker would.

    The header is read with the header version its api key and version imply; a body for an
    unknown api key or an unsupported version is left undecoded (`body_error` says why), so
    the caller can answer as Kafka does (ApiVersions at an unsupported version gets a v0
    UNSUPPORTED_VERSION response, KIP-511). A header that does not decode raises DecodeError.
    """
    buf = payload if isinstance(payload, memoryview) else memoryview(payload)
    header, header_version, pos = _request_header(buf)
    api_key, api_version = int(header.request_api_key), int(header.request_api_version)
    request = REQUESTS.get(api_key)
    if request is None:
        error = DecodeError(f"unknown api key {api_key}", offset=0, path=("RequestHeader",))
        return RequestFrame(header, header_version, None, error)
    if api_version not in request.valid_versions:
        error = DecodeError(
            f"version {api_version} outside {request.valid_versions}", offset=2, path=("Request",)
        )
        return RequestFrame(header, header_version, None, error)
    try:
        body, end = request.decode_from(buf, pos, len(buf), api_version, strict=strict)
        if end != len(buf):
            raise DecodeError(
                f"{len(buf) - end} trailing bytes", offset=end, path=(request.struct_name,)
            )
    except DecodeError as exc:
        return RequestFrame(header, header_version, None, exc)
    return RequestFrame(header, header_version, body)


def decode_response(
    payload: bytes | memoryview,
    api_key: int,
    api_version: int,
    *,
    strict: bool = True,
    allow_trailing: bool = False,
) -> tuple[Message, Message, int]:
    """Decode a response payload; returns header, body and the version the body was read at.

    ApiVersions bodies are read at v0 when the requested version is one the codec does not know,
    or when reading at the requested version fails: a broker answers an unsupported ApiVersions
    version with a v0 body (KIP-511; Kafka's `ApiVersionsResponse.parse` does the same fallback).
    Trailing bytes after the body are an error unless `allow_trailing` (Java clients ignore them,
    so a proxy must too; a conformance check must not).
    """
    buf = payload if isinstance(payload, memoryview) else memoryview(payload)
    header, pos = ResponseHeader.decode_from(
        buf, 0, len(buf), response_header_version(api_key, api_version)
    )
    response = RESPONSES.get(api_key)
    if response is None:
        raise DecodeError(f"unknown api key {api_key}", offset=0, path=("ResponseHeader",))
    if api_key == API_VERSIONS_KEY:
        if api_version in response.valid_versions:
            try:
                body = _decode_exact(response, buf, pos, api_version, strict, allow_trailing)
                return header, body, api_version
            except DecodeError:
                if api_version == 0:
                    raise
        return header, _decode_exact(ApiVersionsResponse, buf, pos, 0, strict, allow_trailing), 0
    body = _decode_exact(response, buf, pos, api_version, strict, allow_trailing)
    return header, body, api_version


def _decode_exact(
    cls: type[Message],
    buf: memoryview,
    pos: int,
    version: int,
    strict: bool,
    allow_trailing: bool = False,
) -> Message:
    body, end = cls.decode_from(buf, pos, len(buf), version, strict=strict)
    if end != len(buf) and not allow_trailing:
        raise DecodeError(f"{len(buf) - end} trailing bytes", offset=end, path=(cls.struct_name,))
    return body


def frame_size(buffer: bytes | bytearray | memoryview, offset: int, max_frame_size: int) -> int:
    """The size prefix at `offset` (4 bytes must be there); DecodeError outside 0..max."""
    (size,) = INT32.unpack_from(buffer, offset)
    if size < 0 or size > max_frame_size:
        raise DecodeError(
            f"frame size {size} outside 0..{max_frame_size}", offset=0, path=("Frame",)
        )
    return int(size)


class FrameReader:
    """Splits a byte stream into frames (payloads without their size prefix)."""

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame_size = max_frame_size
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return every frame now complete. Bad sizes raise DecodeError."""
        self._buffer += data
        frames: list[bytes] = []
        while len(self._buffer) >= 4:
            size = frame_size(self._buffer, 0, self.max_frame_size)
            if len(self._buffer) < 4 + size:
                break
            frames.append(bytes(self._buffer[4 : 4 + size]))
            del self._buffer[: 4 + size]
        return frames

    @property
    def pending(self) -> int:
        """Bytes received but not yet part of a complete frame."""
        return len(self._buffer)


@dataclass
class Correlator:
    """Client side of one connection: correlation ids out, matching responses in."""

    client_id: str | None = "kconform"
    next_correlation_id: int = 0
    in_flight: dict[int, tuple[int, int]] = field(default_factory=dict)

    def request(self, body: Message, version: int, *, strict: bool = True) -> tuple[int, bytes]:
        """Encode `body`; remember what to expect back. Returns (correlation id, frame)."""
        correlation_id = self.next_correlation_id
        self.next_correlation_id = (self.next_correlation_id + 1) & 0x7FFFFFFF
        data = encode_request(body, version, correlation_id, self.client_id, strict=strict)
        assert body.api_key is not None
        self.in_flight[correlation_id] = (body.api_key, version)
        return correlation_id, data

    def expect(self, correlation_id: int, api_key: int, version: int) -> None:
        """Register a request sent as raw bytes (fuzzing) so its answer can be matched."""
        self.in_flight[correlation_id] = (api_key, version)

    def response(self, payload: bytes | memoryview) -> tuple[int, Message, Message, int]:
        """Match a response payload to its request: (correlation id, header, body, version)."""
        if len(payload) < 4:
            raise DecodeError("response shorter than a correlation id", offset=0, path=("Frame",))
        (correlation_id,) = INT32.unpack_from(payload, 0)
        if correlation_id not in self.in_flight:
            raise DecodeError(
                f"response for unknown correlation id {correlation_id}",
                offset=0,
                path=("ResponseHeader",),
            )
        api_key, version = self.in_flight.pop(correlation_id)
        header, body, body_version = decode_response(payload, api_key, version)
        return correlation_id, header, body, body_version
