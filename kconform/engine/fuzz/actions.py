"""What the stateful fuzzer's clients send: payloads, subscription changes, timed requests.

Building blocks for `machine.py`, kept apart so the state machine reads as its rules: what the
examples of one case share (`World`), values known under two names (`Pair`), the payloads,
subscription changes and timed requests the rules send, and the trace they write.

**Waiting for a subscription change.** On a KRaft broker an accepted CLIENT_METRICS change
reaches the telemetry code asynchronously (controller, metadata log, broker). After each change
a session sends, it sets the case's *sentinel* subscription to a new marker metric, in a second
request; the sentinel matches only the case's probe client. The metadata log is applied in
order, so once a Get by the probe client lists the new marker, the session's change (earlier
in the log) is visible too (`await_visible`). One request for both would not do: the
controller may write its two records in two batches (seen on 3.7.0: the second resource
became visible 60 ms after the first). The probe's Gets use a zero ClientInstanceId: each is a
new instance, which no broker throttles. The sentinel changes every time, so every change a
session sends re-resolves the broker's instances (§C.2 step 2): whether re-setting
unchanged values does that too is left open by the KIP, and the model need not guess.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from kconform.codecs.compression import compress
from kconform.codecs.messages import (
    GetTelemetrySubscriptionsRequest,
    IncrementalAlterConfigsRequest,
)
from kconform.codecs.schema import Message
from kconform.codecs.subscription import kafka_uuid_str
from kconform.codecs.wire import ONE_UUID, ZERO_UUID, DecodeError
from kconform.engine.fuzz.engine import FuzzSession
from kconform.engine.fuzz.model import now_ms
from kconform.engine.payloads import payload as otlp_payload
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.base import BrokerAddress
from kconform.fixtures.wirelog import WireLog


@dataclass
class World:
    """What every example of one case shares: the target, the sentinel subscription and its
    probe connection, and what the examples observed."""

    session: FuzzSession
    broker: BrokerAddress
    telemetry_max_bytes: int
    client_prefix: str
    examples: int = 0
    divergences: list[str] = field(default_factory=list)
    ambiguous_steps: int = 0
    propagation_ms: list[int] = field(default_factory=list)
    markers: int = 0
    probe: KafkaConnection | None = None

    @property
    def sentinel_name(self) -> str:
        return f"{self.client_prefix}-sentinel"

    @property
    def probe_client_id(self) -> str:
        return f"{self.client_prefix}-probe"

    def next_marker(self) -> str:
        """A metric name the sentinel has never had in this case."""
        self.markers += 1
        return f"kconform.sentinel.{self.markers}"

    def sentinel(self, marker: str) -> tuple[str, dict[str, tuple[int, str | None]]]:
        """The sentinel resource of an IncrementalAlterConfigs: `marker` for the probe only."""
        return self.sentinel_name, {
            "metrics": (SET, marker),
            "match": (SET, f"client_id={self.probe_client_id}"),
        }

    async def close(self) -> None:
        """Delete the sentinel subscription and close the probe connection."""
        if self.probe is None:
            return
        try:
            await self.probe.request(delete_body([self.sentinel_name]), 1, timeout=REQUEST_TIMEOUT)
        finally:
            await self.probe.close()
            self.probe = None


@dataclass
class Pair:
    """A value as the target knows it and as the model knows it (instance ids differ)."""

    real: Any
    model: Any


REQUEST_TIMEOUT = 5.0
PROPAGATION_LIMIT = 15.0
"""Seconds a CLIENT_METRICS change may take to reach the broker's telemetry code (Apache: tens
of ms on an idle KRaft node; the limit is for a loaded one)."""
PROPAGATION_POLL = 0.01
CLIENT_METRICS = 16
SET, DELETE = 0, 1
SUBSCRIPTION_KEYS = ("metrics", "interval.ms", "match")
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CORRUPT = {  # a stream header each codec recognises, then bytes no decoder accepts
    1: b"\x1f\x8b\x08\x00" + b"\xff" * 16,
    2: b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" * 2 + b"\x7f\xff\xff\xff" + b"\xff" * 8,
    3: b"\x04\x22\x4d\x18" + b"\xff" * 12,
    4: b"\x28\xb5\x2f\xfd" + b"\xff" * 12,
}
ODD_PAYLOADS: dict[str, tuple[tuple[int, str], ...]] = {
    "oversized": ((0, "oversized"), (4, "oversized")),
    "corrupt": tuple((c, "corrupt") for c in CORRUPT),
    "unsupported compression": ((5, "otlp"), (-1, "otlp"), (127, "otlp")),
    "empty": ((0, "empty"),),
    "null": ((0, "null"),),
}
"""Odd (CompressionType, Metrics) pairs by kind (kinds first, so each kind is drawn as often).
A corrupt payload always claims a real codec: whether an uncompressed non-OTLP payload is
INVALID_RECORD depends on the broker's receiver plugin, not on the KIP."""
METRIC_SETS = (
    "org.apache.kafka.",
    "*",
    "org.apache.kafka.producer.,org.apache.kafka.consumer.",
    "",
)


def metrics(ctype: int, kind: str, telemetry_max_bytes: int) -> tuple[bytes | None, str]:
    """A push's Metrics field for `kind` (see ODD_PAYLOADS), and how the trace names it."""
    if kind == "otlp":
        raw = otlp_payload()
        data = compress(raw, ctype) if ctype in CODECS else raw
        return data, f"{len(data)} B OTLP"
    if kind == "corrupt":
        return CORRUPT[ctype], f"{len(CORRUPT[ctype])} B undecodable {CODECS[ctype]}"
    if kind == "oversized":
        size = telemetry_max_bytes + 1
        return b"\x5a" * size, f"{size} B (telemetry.max.bytes + 1)"
    return (b"", "empty") if kind == "empty" else (None, "null")


def alter_body(resources: list[tuple[str, dict[str, tuple[int, str | None]]]]) -> Message:
    """One IncrementalAlterConfigs over CLIENT_METRICS resources: {key: (operation, value)}."""
    req = IncrementalAlterConfigsRequest
    return req(
        resources=[
            req.AlterConfigsResource(
                resource_type=CLIENT_METRICS,
                resource_name=name,
                configs=[
                    req.AlterableConfig(name=k, config_operation=op, value=v)
                    for k, (op, v) in changes.items()
                ],
            )
            for name, changes in resources
        ]
    )


def delete_body(names: list[str]) -> Message:
    """Delete every key of these subscriptions: the broker then removes them (§D)."""
    return alter_body([(n, dict.fromkeys(SUBSCRIPTION_KEYS, (DELETE, None))) for n in names])


async def await_visible(
    world: World, marker: str, limit: float, log: WireLog | None = None
) -> float | None:
    """Seconds until a Get by the probe client lists `marker`; None if not within `limit`."""
    started = time.monotonic()
    if world.probe is None or world.probe.closed:
        world.probe = await KafkaConnection.open(
            world.broker.host,
            world.broker.port,
            client_id=world.probe_client_id,
            timeout=REQUEST_TIMEOUT,
            wire_log=log,
            label="propagation probe",
        )
    while True:
        answer = await world.probe.request(
            GetTelemetrySubscriptionsRequest(client_instance_id=ZERO_UUID), 0
        )
        elapsed = time.monotonic() - started
        if not answer.body.error_code and marker in answer.body.requested_metrics:
            return elapsed
        if elapsed > limit:
            return None
        await asyncio.sleep(PROPAGATION_POLL)


async def timed(connection: KafkaConnection, body: Message, version: int) -> tuple[Any, int, int]:
    """The answer (or what happened instead) and the clock before sending and after it."""
    t0 = now_ms()
    try:
        answer: Any = (
            await connection.request(body, version, strict=False, timeout=REQUEST_TIMEOUT)
        ).body
    except ConnectionError:
        answer = "closed"
    except TimeoutError:
        answer = "hang"
    except DecodeError:
        answer = "undecodable"
    return answer, t0, now_ms()


class Trace:
    """The readable account of one session: numbered steps, ids named #1, #2 and S1, S2.

    Names, not uuids, because the trace is the bug report: "Push(#1, S1) twice" reads; two
    22-character ids do not. The first characters of each id stay, to find it in the wire log.
    """

    def __init__(self, client_id: str) -> None:
        self.lines = [f"client_id={client_id}"]
        self._ids: dict[uuid.UUID, str] = {}
        self._subscriptions: dict[int, str] = {}

    @property
    def steps(self) -> int:
        return len(self.lines) - 1

    def log(self, line: str) -> None:
        self.lines.append(f"{len(self.lines):>3}. {line}")

    def annotate(self, text: str) -> None:
        """Add to the last step (what followed from it, not a step of its own)."""
        self.lines[-1] += f"\n{'':14}{text}"

    def name(self, instance_id: uuid.UUID) -> str:
        if instance_id in (ZERO_UUID, ONE_UUID):
            return "ZERO" if instance_id == ZERO_UUID else "ONE"
        known = self._ids.setdefault(instance_id, f"#{len(self._ids) + 1}")
        return f"{known}({kafka_uuid_str(instance_id)[:6]}…)"

    def name_subscription(self, subscription_id: int) -> None:
        self._subscriptions.setdefault(subscription_id, f"S{len(self._subscriptions) + 1}")

    def subscription(self, subscription_id: int) -> str:
        return self._subscriptions.get(subscription_id, f"{subscription_id} (never issued)")

    def report(self, headline: str) -> str:
        return "\n".join([headline, *self.lines])
