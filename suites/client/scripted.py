"""A scripted telemetry broker for one client: the proxy answers its Get/Push itself.

The reference broker models Apache's rate limiter, which is right for judging brokers but gets
in the way of error-path client cases: a push the reference accepted and an injection then turned
into UNKNOWN_SUBSCRIPTION_ID leaves the reference expecting no Get for a whole interval, so the
client's correct immediate Get would be throttled. Here the proxy answers the client's
GetTelemetrySubscriptions and PushTelemetry requests from a script instead (a `Respond` injection
matching only that client id), so each case decides every field the client sees: interval,
requested metrics, compression list, temporality, size limit, and per push the error code and
ThrottleTimeMs. Everything else the client sends still reaches the reference.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kconform.codecs.framing import RequestFrame
from kconform.codecs.messages import GetTelemetrySubscriptionsResponse, PushTelemetryResponse
from kconform.codecs.schema import Message
from kconform.codecs.wire import ZERO_UUID
from kconform.fixtures.proxy.injections import Injection, Respond
from kconform.suites.client.traffic import GET_TELEMETRY_SUBSCRIPTIONS, TELEMETRY

DEFAULT_COMPRESSION = (4, 3, 1, 2)  # zstd, lz4, gzip, snappy: Apache's order (§C.2)


@dataclass(frozen=True)
class PushAnswer:
    error_code: int = 0
    throttle_time_ms: int = 0


PushScript = Callable[[int, Message], PushAnswer]
"""(1-based push number, the PushTelemetryRequest) -> how to answer it."""


def accept(_: int, __: Message) -> PushAnswer:
    return PushAnswer()


def fail_pushes(error_code: int, *numbers: int, terminating: bool | None = None) -> PushScript:
    """Answer the given push numbers (all pushes when none given) with `error_code`.

    `terminating` restricts the error to pushes with that Terminating flag (counted among them).
    """
    seen = {"count": 0}

    def script(number: int, request: Message) -> PushAnswer:
        if terminating is not None and bool(request.terminating) != terminating:
            return PushAnswer()
        seen["count"] += 1
        n = seen["count"] if terminating is not None else number
        return PushAnswer(error_code) if not numbers or n in numbers else PushAnswer()

    return script


@dataclass
class ScriptedTelemetry:
    """The script; `injection(client_id)` installs it in the proxy for one client."""

    push_interval_ms: int
    requested_metrics: Sequence[str] = ("*",)
    accepted_compression_types: Sequence[int] = DEFAULT_COMPRESSION
    delta_temporality: bool = True
    telemetry_max_bytes: int = 1_048_576
    push: PushScript = accept
    # (1-based Get number) -> field overrides for that Get's response, e.g. a null instance id
    get_overrides: Callable[[int], dict[str, Any]] = lambda _: {}
    compression_rotation: bool = False  # rotate the compression list by one on every Get
    client_instance_id: uuid.UUID = field(default_factory=uuid.uuid4)
    gets: int = 0
    pushes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def injection(self, client_id: str) -> Injection:
        def mine(request: RequestFrame) -> bool:
            return request.api_key in TELEMETRY and request.header.client_id == client_id

        return Injection(predicate=mine, respond=Respond(self.answer), name=f"scripted {client_id}")

    def subscription_id(self, get_number: int) -> int:
        return 1000 + get_number  # a new subscription on every Get, as after a config change

    def compression_for(self, get_number: int) -> list[int]:
        types = list(self.accepted_compression_types)
        if self.compression_rotation and types:
            shift = (get_number - 1) % len(types)
            types = types[shift:] + types[:shift]
        return types

    def answer(self, request: RequestFrame) -> Message:
        """Runs on the proxy's loop for each of the client's Get/Push requests."""
        with self._lock:
            if request.api_key == GET_TELEMETRY_SUBSCRIPTIONS:
                self.gets += 1
                return self._get(self.gets)
            self.pushes += 1
            number = self.pushes
        if request.body is None:
            return PushTelemetryResponse(throttle_time_ms=0, error_code=42)
        answer = self.push(number, request.body)
        return PushTelemetryResponse(
            throttle_time_ms=answer.throttle_time_ms, error_code=answer.error_code
        )

    def _get(self, number: int) -> Message:
        fields: dict[str, Any] = {
            "throttle_time_ms": 0,
            "error_code": 0,
            "client_instance_id": self.client_instance_id,
            "subscription_id": self.subscription_id(number),
            "accepted_compression_types": self.compression_for(number),
            "push_interval_ms": self.push_interval_ms,
            "telemetry_max_bytes": self.telemetry_max_bytes,
            "delta_temporality": self.delta_temporality,
            "requested_metrics": list(self.requested_metrics),
        }
        fields.update(self.get_overrides(number))
        return GetTelemetrySubscriptionsResponse(**fields)


NULL_INSTANCE_ID = ZERO_UUID


def without_telemetry_keys(body: Message) -> Message:
    """An ApiVersions answer as a broker without a client-metrics receiver gives it: no 71/72."""
    if body.error_code != 0:
        return body
    values = {f.attr: getattr(body, f.attr) for f in body.schema_fields}
    values["api_keys"] = [k for k in body.api_keys if k.api_key not in TELEMETRY]
    return type(body)(**values)
