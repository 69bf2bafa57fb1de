"""One request on one connection: send it, read the answer or the close, decode and judge it.

The request oracle's mechanics (`oracle.py` has its policy: what is acceptable, how long to
wait). Each exchange uses its own raw socket rather than `KafkaConnection`: the fuzzer must send
wrong size prefixes and half-close the connection, and must see exactly one answer or the
close. Every frame still goes to a wire log, decoded where it can be, as the evidence of a
finding.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field, replace

from kconform.codecs.errors import ErrorCode, error_name
from kconform.codecs.framing import FrameReader, decode_response
from kconform.codecs.messages import (
    ApiVersionsRequest,
    GetTelemetrySubscriptionsRequest,
    RequestHeader,
)
from kconform.codecs.schema import Message, Struct
from kconform.codecs.wire import INT32, DecodeError
from kconform.engine.fuzz.inputs import FuzzRequest, response_expected
from kconform.fixtures.targets.base import BrokerAddress
from kconform.fixtures.wirelog import WireLog

DEFINED_ERRORS = frozenset(int(code) for code in ErrorCode)
ACCEPTABLE = ("answered", "closed", "unverifiable", "unanswered")
"""Outcome kinds that break no rule (undefined error codes aside)."""


@dataclass(frozen=True)
class Outcome:
    """What one request got: `kind` is answered, closed, unanswered (nothing was owed), hang,
    undecodable, mismatched, unverifiable or unreachable; `seconds` from sending to the answer
    (or to giving up), against the request's `deadline`."""

    api: str  # what the header claims, readable ("PushTelemetry v0")
    kind: str
    error_codes: tuple[int, ...] = ()
    detail: str = ""
    body: Message | None = field(default=None, compare=False)  # the decoded answer
    seconds: float = field(default=0.0, compare=False)
    deadline: float = field(default=0.0, compare=False)

    @property
    def shape(self) -> tuple[str, str]:
        """The (api, answer) pair counted as a distinct response shape."""
        if self.kind == "answered":
            names = sorted({error_name(c) for c in self.error_codes})
            return self.api, "+".join(names) or "no ErrorCode"
        return self.api, self.kind

    @property
    def slow(self) -> bool:
        """Answered or closed, but after its deadline: a busy broker, not a broken one."""
        return self.kind in ("answered", "closed") and self.seconds > self.deadline > 0

    @property
    def problem(self) -> str | None:
        """Why this outcome breaks the oracle, or None when it is acceptable."""
        if self.kind in ACCEPTABLE:
            undefined = [c for c in self.error_codes if c not in DEFINED_ERRORS]
            if undefined:
                return f"answered with undefined error code(s) {undefined}: {self.detail}"
            return None
        return self.detail

    def timed(self, seconds: float, deadline: float) -> Outcome:
        return replace(self, seconds=seconds, deadline=deadline)


def error_codes(body: Struct) -> list[int]:
    """Every ErrorCode in a decoded body, nested ones included (per-resource config errors)."""
    found: list[int] = []
    for f in body.schema_fields:
        value = getattr(body, f.attr, None)
        if f.name == "ErrorCode" and isinstance(value, int):
            found.append(value)
        elif isinstance(value, Struct):
            found += error_codes(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Struct):
                    found += error_codes(item)
    return found


def answered_ok(outcome: Outcome) -> bool:
    return outcome.kind == "answered" and outcome.error_codes[:1] == (0,)


async def once(
    address: BrokerAddress, request: FuzzRequest, timeout: float, log: WireLog, label: str
) -> Outcome:
    """One connection, one request, its answer or close within `timeout` (no patience)."""
    api = request.readable_api()
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(address.host, address.port), timeout
        )
    except (OSError, TimeoutError) as exc:
        return Outcome(api, "unreachable", detail=f"cannot connect to {address}: {exc}")
    frames = FrameReader()
    try:
        async with asyncio.timeout(timeout):
            if request.session:
                prelude = await session_prelude(reader, writer, frames, log, label)
                if isinstance(prelude, Outcome):
                    return prelude
                request = prelude.with_ids(request)
            log.record(
                label,
                "client->broker",
                request.frame()[4:],
                summary=request.description[:300],
                note="fuzz" + (", then EOF" if request.eof or not request.answerable else ""),
            )
            writer.write(request.frame())
            await writer.drain()
            if (request.eof or not request.answerable) and writer.can_write_eof():
                writer.write_eof()  # nothing more is coming: the broker may stop waiting
            return await _answer(reader, frames, request, api, log, label)
    except TimeoutError:
        return Outcome(api, "hang", detail=f"no answer (or close) within {timeout:.1f}s")
    except (ConnectionError, OSError) as exc:
        return Outcome(api, "closed", detail=f"connection reset: {exc}")
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


@dataclass(frozen=True)
class Subscribed:
    client_instance_id: uuid.UUID
    subscription_id: int

    def with_ids(self, request: FuzzRequest) -> FuzzRequest:
        at, p = request.body_offset, request.payload
        ids = self.client_instance_id.bytes + INT32.pack(self.subscription_id)
        return replace(request, payload=p[:at] + ids + p[at + len(ids) :], session=False)


async def session_prelude(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    frames: FrameReader,
    log: WireLog,
    label: str,
) -> Subscribed | Outcome:
    """The GetTelemetrySubscriptions a session push starts with; its id and SubscriptionId."""
    get = GetTelemetrySubscriptionsRequest()
    header = RequestHeader(
        request_api_key=71, request_api_version=0, correlation_id=1, client_id="kconform-fuzz"
    )
    payload = header.encode(2) + get.encode(0)
    log.record(
        label,
        "client->broker",
        payload,
        api_key=71,
        api_version=0,
        correlation_id=1,
        summary=get.describe(0),
        note="session",
    )
    writer.write(INT32.pack(len(payload)) + payload)
    await writer.drain()
    probe = FuzzRequest(get.describe(0), payload)
    outcome = await _answer(reader, frames, probe, "GetTelemetrySubscriptions v0", log, label)
    if outcome.kind != "answered" or outcome.error_codes[:1] != (0,):
        return outcome
    body = outcome.body
    assert body is not None
    return Subscribed(body.client_instance_id, body.subscription_id)


async def _answer(
    reader: asyncio.StreamReader,
    frames: FrameReader,
    request: FuzzRequest,
    api: str,
    log: WireLog,
    label: str,
) -> Outcome:
    expected = response_expected(request)
    correlation_id = INT32.unpack_from(request.payload, 4)[0] if len(request.payload) >= 8 else None
    while True:
        try:
            data = await reader.read(65536)
        except (ConnectionError, OSError) as exc:  # a target that died mid-session resets it
            log.record(label, "broker->client", b"", summary="connection reset", note="closed")
            return Outcome(api, "closed", detail=f"connection reset: {exc}")
        if not data:
            log.record(label, "broker->client", b"", summary="connection closed", note="closed")
            return Outcome(api, "closed", detail="closed without an answer")
        try:
            payloads = frames.feed(data)
        except DecodeError as exc:
            return Outcome(api, "undecodable", detail=f"unreadable response frame: {exc}")
        if payloads:
            return judge_answer(payloads[0], expected, correlation_id, api, log, label)


def judge_answer(
    payload: bytes,
    expected: tuple[int, int] | None,
    correlation_id: int | None,
    api: str,
    log: WireLog,
    label: str,
) -> Outcome:
    """One answer's outcome, read as the (api key, version) `expected` (None: unreadable)."""
    answered = INT32.unpack_from(payload, 0)[0] if len(payload) >= 4 else None
    if expected is None:
        log.record(
            label,
            "broker->client",
            payload,
            correlation_id=answered,
            summary="answer to an api/version the codec does not know",
        )
        return Outcome(api, "unverifiable", detail="answered; the codec cannot read this api")
    key, version = expected
    try:
        _, body, read_at = decode_response(payload, key, version)
    except DecodeError as exc:
        log.record(
            label,
            "broker->client",
            payload,
            api_key=key,
            api_version=version,
            correlation_id=answered,
            summary=f"undecodable: {exc}",
        )
        return Outcome(api, "undecodable", detail=f"response does not decode as v{version}: {exc}")
    described = body.describe(read_at)  # once: it costs as much as the decode
    log.record(
        label,
        "broker->client",
        payload,
        api_key=key,
        api_version=read_at,
        correlation_id=answered,
        summary=described,
    )
    if correlation_id is not None and answered != correlation_id:
        detail = f"answered correlation id {answered}, sent {correlation_id}"
        return Outcome(api, "mismatched", detail=detail)
    return Outcome(api, "answered", tuple(error_codes(body)), described[:300], body)


PLAIN_API_VERSIONS = FuzzRequest(
    "ApiVersionsRequest v0 {} (liveness check)",
    bytes.fromhex("00120000") + INT32.pack(7) + b"\x00\x08kconform",
)
"""ApiVersions v0, header v1 (correlation id 7, client id "kconform"), empty body."""


assert ApiVersionsRequest.api_key == 18  # PLAIN_API_VERSIONS hard-codes the key
