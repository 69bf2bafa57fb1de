"""One simulated telemetry client as a sans-IO state machine: the KIP's client behaviour.

The driver (`fleet.py`) asks `next_action(now)` what to do (connect, send a request, wait,
disconnect, or nothing more) and reports what happened (`on_connected`, `on_response`,
`on_disconnected`, ...). No sockets, no clocks, no sleeping here, so every reaction is
unit-tested by feeding it responses (tests/soak/test_client.py).

What the client does, with the KIP-714 sentence or docs section (§) it follows:

- ApiVersions v3 with its ClientSoftwareName/Version (KIP-511), then GetTelemetrySubscriptions
  with a zero ClientInstanceId once in its life, its assigned id after that ("Client behavior").
- After every successful Get, the next push after U(0.5, 1.5) x PushIntervalMs ("The first
  metrics push should be randomized between 0.5 * PushIntervalMs and 1.5 * PushIntervalMs";
  the Java client re-jitters after every Get, §E.1); after an accepted push, exactly
  PushIntervalMs. An empty RequestedMetrics: Get again after PushIntervalMs.
- Push errors ('Error handling' table): UNKNOWN_SUBSCRIPTION_ID (117) and
  UNSUPPORTED_COMPRESSION_TYPE (76): Get immediately; THROTTLING_QUOTA_EXCEEDED (89): back off
  one PushIntervalMs, then Get; TELEMETRY_TOO_LARGE (118): halve the payload, push after the
  interval; INVALID_REQUEST (42), INVALID_RECORD (87) and any code outside the table: stop
  telemetry. A Get answered 89 backs off the same way; any other Get error stops telemetry.
- Payloads: compressed with the first AcceptedCompressionTypes entry (ruling 8), sums DELTA or
  CUMULATIVE as DeltaTemporality says (ruling 6).
- Connection selection: the same broker until the connection goes down, then reconnect to it
  or another one ('Connection selection'), with a backoff; after reconnecting, ApiVersions and
  a Get with the instance's id, then the jittered first push.
- Termination: a clean close sends one push with Terminating=true if a subscription is loaded
  ('Client termination'); a kill closes the socket with nothing sent.

Everything observable goes to `events` (an outbox the driver empties) as `Event` tuples.
"""

from __future__ import annotations

import enum
import random
import uuid
from dataclasses import dataclass
from typing import NamedTuple

from kconform.codecs.compression import compress
from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import (
    ApiVersionsRequest,
    GetTelemetrySubscriptionsRequest,
    PushTelemetryRequest,
)
from kconform.codecs.schema import Message
from kconform.codecs.wire import ZERO_UUID, kafka_uuid_str
from kconform.soak.payload import ClientProfile, PayloadBuilder

API_VERSIONS_VERSION = 3
DEFAULT_INTERVAL_MS = 300_000  # KIP-714: "The default PushIntervalMs is 300000 ms"
RECONNECT_BACKOFF = (0.05, 1.0)  # Kafka's reconnect.backoff.ms / .max.ms (seconds)
SUPPORTED_COMPRESSION = frozenset({1, 2, 3, 4})
IMMEDIATE_GET = frozenset(
    {ErrorCode.UNKNOWN_SUBSCRIPTION_ID, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE}
)
STOP_TELEMETRY = frozenset({ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_RECORD})
KIP_PUSH_ERRORS = frozenset(
    {
        ErrorCode.NONE,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.INVALID_RECORD,
        ErrorCode.TELEMETRY_TOO_LARGE,
        ErrorCode.UNKNOWN_SUBSCRIPTION_ID,
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
        ErrorCode.THROTTLING_QUOTA_EXCEEDED,
    }
)
"""KIP-714 'Error handling' table, plus NONE and the rate limit's THROTTLING_QUOTA_EXCEEDED."""


class Event(NamedTuple):
    """One thing a client saw; plain data so worker processes can ship it."""

    kind: str  # apiversions | get | push | conn | life | files (the fleet ran out of them)
    t: float  # wall clock, seconds
    client: int
    code: int = 0  # error code of a response
    latency_ms: float = 0.0
    node: int = 0  # broker node id
    instance: str = ""  # ClientInstanceId (Kafka's string form)
    stamp: int = 0  # push: time_unix_nano naming it (0: empty payload)
    value: int = 0  # get: PushIntervalMs; push: payload bytes
    detail: str = ""  # push: "T" when Terminating; conn/life: what happened


class Phase(enum.Enum):
    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    HANDSHAKE = "handshake"  # ApiVersions due or in flight
    NEED_GET = "need_get"
    WAIT_GET = "wait_get"
    GET_IN_FLIGHT = "get_in_flight"
    WAIT_PUSH = "wait_push"
    PUSH_IN_FLIGHT = "push_in_flight"
    TERMINATING = "terminating"  # the Terminating push is in flight
    IDLE = "idle"  # telemetry stopped or not offered: connected, nothing to send
    DONE = "done"


@dataclass(frozen=True)
class Connect:
    node: int


@dataclass(frozen=True)
class Send:
    api: str  # apiversions | get | push
    body: Message
    version: int


@dataclass(frozen=True)
class Wait:
    until: float


@dataclass(frozen=True)
class Disconnect:
    abort: bool  # a kill: no clean close


@dataclass(frozen=True)
class Finished:
    pass


Action = Connect | Send | Wait | Disconnect | Finished
FOREVER = float("inf")


class SimClient:
    """One client's telemetry life; see the module docstring."""

    def __init__(
        self,
        profile: ClientProfile,
        nodes: list[int],
        *,
        rng: random.Random,
        now: float,
        node: int | None = None,
    ) -> None:
        self.profile = profile
        self.index = profile.index
        self.nodes = nodes
        self.rng = rng
        self.node = node if node is not None else nodes[profile.index % len(nodes)]
        self.payload = PayloadBuilder(profile, nodes, rng)
        self.events: list[Event] = [Event("life", now, self.index, detail="started")]
        self.phase = Phase.DISCONNECTED
        self.wake_at = now
        self.instance_id: uuid.UUID = ZERO_UUID
        self.subscription_id = 0
        self.interval_ms = 0
        self.compression = 0
        self.closing: str | None = None  # "clean" | "kill"
        self.stopped: str | None = None  # why telemetry stopped (IDLE)
        self._failures = 0
        self._move = False
        self._pending: tuple[int, int, bool] = (0, 0, False)  # the push in flight

    # --- what to do next ----------------------------------------------------------------------

    def next_action(self, now: float) -> Action:
        """The driver's next step; call again after reporting its outcome (or after a Wait)."""
        phase = self.phase
        if phase is Phase.DONE:
            return Finished()
        if self.closing == "kill":
            return self._finish(now, "killed", abort=True)
        if phase is Phase.DISCONNECTED:
            if self.closing:
                self.phase = Phase.DONE
                self._event(now, "life", detail="closed")
                return Finished()
            if now < self.wake_at:
                return Wait(self.wake_at)
            self.phase = Phase.CONNECTING
            return Connect(self.node)
        if self.closing == "clean":
            return self._close_cleanly(now)
        if self._move:
            return self._moved(now)
        if phase is Phase.HANDSHAKE:
            body = ApiVersionsRequest(
                client_software_name=self.profile.software_name,
                client_software_version=self.profile.software_version,
            )
            return Send("apiversions", body, API_VERSIONS_VERSION)
        if phase is Phase.NEED_GET or (phase is Phase.WAIT_GET and now >= self.wake_at):
            self.phase = Phase.GET_IN_FLIGHT
            body = GetTelemetrySubscriptionsRequest(client_instance_id=self.instance_id)
            return Send("get", body, 0)
        if phase is Phase.WAIT_PUSH and now >= self.wake_at:
            self.phase = Phase.PUSH_IN_FLIGHT
            return Send("push", self._push(now, terminating=False), 0)
        if phase in (Phase.WAIT_GET, Phase.WAIT_PUSH):
            return Wait(self.wake_at)
        return Wait(FOREVER)  # IDLE: nothing until the driver is told to close or move

    def _close_cleanly(self, now: float) -> Action:
        if self.phase is Phase.WAIT_PUSH:  # a subscription is loaded: one Terminating push
            self.phase = Phase.TERMINATING
            return Send("push", self._push(now, terminating=True), 0)
        return self._finish(now, "closed", abort=False)

    def _finish(self, now: float, how: str, *, abort: bool) -> Action:
        connected = self.phase not in (Phase.DISCONNECTED, Phase.CONNECTING, Phase.DONE)
        self.phase = Phase.DONE
        self._event(now, "life", detail=how)
        return Disconnect(abort) if connected else Finished()

    def _moved(self, now: float) -> Action:
        """Churn: reconnect to another broker ('Connection selection')."""
        self._move = False
        others = [n for n in self.nodes if n != self.node]
        if others:
            self.node = self.rng.choice(others)
        self.phase = Phase.DISCONNECTED
        self.wake_at = now
        self._event(now, "life", detail="moved")
        return Disconnect(False)

    def _push(self, now: float, *, terminating: bool) -> Message:
        metrics = b""
        compression = 0
        if not self.payload.empty:
            metrics = self.payload.build(int(now * 1e9))
            if self.compression:
                metrics = compress(metrics, self.compression, snappy_framing="xerial")
                compression = self.compression
        self._pending = (self.payload.last_stamp if metrics else 0, len(metrics), terminating)
        return PushTelemetryRequest(
            client_instance_id=self.instance_id,
            subscription_id=self.subscription_id,
            terminating=terminating,
            compression_type=compression,
            metrics=metrics,
        )

    # --- what happened ------------------------------------------------------------------------

    def on_connected(self, now: float) -> None:
        self._failures = 0
        self.phase = Phase.HANDSHAKE
        self._event(now, "conn", detail="connected")

    def on_connect_failed(self, now: float, reason: str) -> None:
        """Refused or timed out: back off, then try the next broker."""
        self._event(now, "conn", detail="refused")
        self._backoff(now)
        self.node = self.nodes[(self.nodes.index(self.node) + 1) % len(self.nodes)]

    def on_disconnected(self, now: float, reason: str) -> None:
        """The connection went down (with or without a request in flight): reconnect."""
        if self.phase is Phase.DONE:
            return
        self._event(now, "conn", detail=reason)
        if self.phase is Phase.TERMINATING:
            self.phase = Phase.DONE
            self._event(now, "life", detail="closed")
            return
        self._backoff(now)

    def _backoff(self, now: float) -> None:
        low, high = RECONNECT_BACKOFF
        delay = min(high, low * 2**self._failures) * self.rng.uniform(0.8, 1.2)
        self._failures += 1
        self.phase = Phase.DISCONNECTED
        self.wake_at = now + delay

    def on_response(self, now: float, api: str, body: Message, latency_ms: float) -> None:
        if api == "apiversions":
            self._on_api_versions(now, body, latency_ms)
        elif api == "get":
            self._on_get(now, body, latency_ms)
        else:
            self._on_push(now, body, latency_ms)

    def _on_api_versions(self, now: float, body: Message, latency_ms: float) -> None:
        code = int(body.error_code)
        self._event(now, "apiversions", code=code, latency_ms=latency_ms)
        keys = {k.api_key for k in body.api_keys}
        if self.stopped and not self.stopped.startswith("no_telemetry"):
            self.phase = Phase.IDLE  # stopped for good: "stop pushing metrics"
        elif code == ErrorCode.NONE and {71, 72} <= keys:
            self.phase = Phase.NEED_GET
        elif code == ErrorCode.NONE:
            self._stop(now, "no_telemetry")  # the broker has no receiver (§B.4)
        else:
            self._stop(now, f"apiversions_{code}")

    def _on_get(self, now: float, body: Message, latency_ms: float) -> None:
        code = int(body.error_code)
        if code == ErrorCode.NONE:
            self.instance_id = body.client_instance_id
            self.subscription_id = int(body.subscription_id)
            self.interval_ms = int(body.push_interval_ms) or DEFAULT_INTERVAL_MS
            types = [int(t) for t in body.accepted_compression_types]
            self.compression = next((t for t in types if t in SUPPORTED_COMPRESSION), 0)
            self.payload.configure(
                list(body.requested_metrics), bool(body.delta_temporality), int(now * 1e9)
            )
            if not body.requested_metrics:
                self.phase, self.wake_at = Phase.WAIT_GET, now + self.interval_ms / 1000
            else:
                jitter = self.rng.uniform(0.5, 1.5)
                self.phase, self.wake_at = Phase.WAIT_PUSH, now + jitter * self.interval_ms / 1000
        elif code == ErrorCode.THROTTLING_QUOTA_EXCEEDED:
            self.phase, self.wake_at = Phase.WAIT_GET, now + self._interval() / 1000
        else:
            self._stop(now, f"get_{code}")
        self._event(
            now,
            "get",
            code=code,
            latency_ms=latency_ms,
            instance=self._instance(),
            value=self.interval_ms,
        )

    def _on_push(self, now: float, body: Message, latency_ms: float) -> None:
        code = int(body.error_code)
        stamp, size, terminating = self._pending
        self._event(
            now,
            "push",
            code=code,
            latency_ms=latency_ms,
            instance=self._instance(),
            stamp=stamp,
            value=size,
            detail="T" if terminating else "",
        )
        if terminating:  # the response to the final push is only recorded (§E.1)
            self.phase = Phase.DONE
            self._event(now, "life", detail="closed")
            return
        if code == ErrorCode.NONE:
            self.phase, self.wake_at = Phase.WAIT_PUSH, now + self.interval_ms / 1000
        elif code in IMMEDIATE_GET:
            self.phase = Phase.NEED_GET
        elif code == ErrorCode.THROTTLING_QUOTA_EXCEEDED:
            self.phase, self.wake_at = Phase.WAIT_GET, now + self._interval() / 1000
        elif code == ErrorCode.TELEMETRY_TOO_LARGE:
            self.payload.shrink()
            self.phase, self.wake_at = Phase.WAIT_PUSH, now + self._interval() / 1000
        else:  # 42, 87 and codes outside the KIP's table
            self._stop(now, f"push_{code}")

    def _stop(self, now: float, why: str) -> None:
        self.phase = Phase.IDLE
        self.stopped = why
        self._event(now, "life", detail=f"stopped:{why}")

    # --- commands (churn) -----------------------------------------------------------------

    def close(self, *, kill: bool = False) -> None:
        """Ask the client to end: cleanly (Terminating push) or killed (nothing sent)."""
        if self.closing != "kill":
            self.closing = "kill" if kill else "clean"

    def move(self) -> None:
        """Ask the client to reconnect to another broker."""
        self._move = True

    # --- helpers ----------------------------------------------------------------------------

    def _interval(self) -> int:
        return self.interval_ms or DEFAULT_INTERVAL_MS

    def _instance(self) -> str:
        return "" if self.instance_id == ZERO_UUID else kafka_uuid_str(self.instance_id)

    def _event(
        self,
        now: float,
        kind: str,
        *,
        code: int = 0,
        latency_ms: float = 0.0,
        instance: str = "",
        stamp: int = 0,
        value: int = 0,
        detail: str = "",
    ) -> None:
        self.events.append(
            Event(
                kind, now, self.index, code, latency_ms, self.node, instance, stamp, value, detail
            )
        )
