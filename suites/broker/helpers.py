"""What the broker suites share: telemetry requests, subscriptions scoped to one case, payloads.

Cases share a target, so each case isolates itself: its subscriptions match only its own
client id (`match=client_id=<unique>`), its client instance ids are its own, and its
subscriptions are deleted when it ends.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import hashlib
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import pytest

from kconform.codecs.errors import ErrorCode, error_name
from kconform.codecs.messages import (
    GetTelemetrySubscriptionsRequest,
    PushTelemetryRequest,
)
from kconform.codecs.schema import Message
from kconform.codecs.subscription import kafka_uuid_str
from kconform.codecs.wire import ZERO_UUID
from kconform.engine.check import Check, present
from kconform.engine.payloads import payload as payload  # re-exported for the cases
from kconform.errors import Inconclusive, PreconditionUnmet
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget, Capability, SinkRecord, Subscription

T = TypeVar("T")

WAIT_MARGIN_MS = 30
"""Added to a push interval before the next request, so timer granularity never makes it early."""

SUBSCRIPTION_VISIBLE_TIMEOUT = 15.0
"""Seconds a CLIENT_METRICS change may take to reach a broker's telemetry code (KRaft metadata)."""

SHORT_INTERVAL_MS = 200
"""Push interval the suites subscribe with: short enough for fast runs, long enough to measure."""

BULK_ANSWER_TIMEOUT = 200.0
"""Seconds a case waits for an answer that costs the broker work growing with the request (a push
of megabytes of OTLP to decode: about 1 s of CPU per 3 MiB on the reference; a thousand pipelined
Gets). The rules these cases judge set no answer time, and that work takes many times longer on a
busy machine (the reference answered the 7 MB many_points push in 3 s alone, in 75 s inside the
main job beside a CPU burner per core), so the case waits for the answer itself, bounded by
the case's own limit (`WAITS_FOR_BULK`)."""

WAITS_FOR_BULK = pytest.mark.kconform_timeout(BULK_ANSWER_TIMEOUT + 100)
"""The case limit of a case that waits BULK_ANSWER_TIMEOUT: the answer plus the case's own work
(building the payload took up to 40 s in the same loaded runs), past --case-timeout's 120 s."""

INTERVAL_MS = 300  # cases that must stay inside one PushIntervalMs never wait for it
WAIT_INTERVAL_MS = 100  # cases that must outlive one PushIntervalMs wait for this one
NONE, THROTTLED = ErrorCode.NONE, ErrorCode.THROTTLING_QUOTA_EXCEEDED
UNKNOWN_SUBSCRIPTION = ErrorCode.UNKNOWN_SUBSCRIPTION_ID


class _Default(enum.Enum):
    PAYLOAD = "payload"


PAYLOAD = _Default.PAYLOAD
"""`push()`'s default Metrics: a fresh valid OTLP payload (`payload()`); None sends null Metrics."""


async def subscribe(
    check: Check,
    *,
    metrics: tuple[str, ...] = ("org.apache.kafka.",),
    interval_ms: int = SHORT_INTERVAL_MS,
    client_id: str | None = None,
) -> str:
    """Create a subscription matching only `client_id` (default: a fresh one); returns the id,
    once every broker's telemetry code has the change (`settled`)."""
    client_id = client_id or check.unique("client")
    name = check.fresh("sub")  # several subscriptions in one case must not replace each other
    await add_subscription(check, {"client_id": client_id}, metrics, interval_ms, name=name)
    return client_id


async def put_subscription(check: Check, subscription: Subscription) -> None:
    """Create (or replace) a subscription, deleted when the case ends."""
    target = present(check.target, "a broker case's target")
    await asyncio.to_thread(target.set_subscription, subscription)
    check.defer(lambda: target.delete_subscription(subscription.name))


MARKER_METRIC = "kconform.settled."


APPLIED_RULE = "kip714.get.subscription.applied"
"""The rule a broker that accepts CLIENT_METRICS subscriptions but never serves them breaks."""

_NEVER_APPLIED: weakref.WeakKeyDictionary[BrokerTarget, str] = weakref.WeakKeyDictionary()
"""Per target: the evidence that it never applied a subscription it accepted (judged once)."""
_APPLIED_ONCE: weakref.WeakSet[BrokerTarget] = weakref.WeakSet()
"""Targets that have applied a subscription change at least once."""


def never_applied(target: BrokerTarget) -> str | None:
    """The evidence that `target` never applies the subscriptions it accepts, once a case saw it."""
    return _NEVER_APPLIED.get(target)


def record_never_applied(target: BrokerTarget, evidence: str) -> bool:
    """Remember that `target` never applied a subscription it accepted, unless it applied one
    before (then a miss is a stall, not its nature); whether it was recorded."""
    if target in _APPLIED_ONCE:
        return False
    _NEVER_APPLIED[target] = evidence
    return True


def _without_subscriptions(evidence: str) -> PreconditionUnmet:
    return PreconditionUnmet(
        f"the broker accepts CLIENT_METRICS subscriptions but never applies them ({evidence}); "
        f"judged by {APPLIED_RULE}",
        needs=APPLIED_RULE,
    )


async def settled(check: Check) -> float:
    """Seconds until every CLIENT_METRICS change this case made so far is visible to Gets.

    A KRaft broker applies a config change when it reads it from the metadata log, a moment after
    the controller answered; changes apply in order. So the case adds a marker subscription for
    a probe client id of its own and waits until Gets for that id show it on every broker: what
    came before it has landed too. The wait assumes nothing about the semantics under test
    (interval minimum, metric union), which a mutant may break. Null ids on a connection of its
    own, kept out of the case's wire log, are never throttled.

    A target that has never shown a change it accepted is taken not to apply subscriptions:
    this case and every later one that needs a subscription is `not-applicable` (at once, the
    evidence remembered per target; `APPLIED_RULE`'s case judges it). A target that applied
    changes before and misses one now leaves the case Inconclusive, as a stall would.
    """
    started = time.monotonic()
    target = present(check.target, "a broker case's target")
    if (evidence := _NEVER_APPLIED.get(target)) is not None:
        raise _without_subscriptions(evidence)
    probe_id, name = check.fresh("settle"), check.fresh("settle-sub")
    await put_subscription(
        check, Subscription(name, (MARKER_METRIC,), SHORT_INTERVAL_MS, {"client_id": probe_id})
    )
    for address in target.brokers:
        conn = await KafkaConnection.open(address.host, address.port, client_id=probe_id)
        try:
            response = await eventually(
                functools.partial(get, conn),
                lambda r: MARKER_METRIC in r.requested_metrics,
                timeout=SUBSCRIPTION_VISIBLE_TIMEOUT,
            )
        finally:
            await conn.close()
        if MARKER_METRIC not in response.requested_metrics:
            evidence = (
                f"a subscription change not visible on broker {address.node_id} after "
                f"{SUBSCRIPTION_VISIBLE_TIMEOUT:.0f}s (last answer: "
                f"{error_name(response.error_code)}, metrics {list(response.requested_metrics)})"
            )
            if not record_never_applied(target, evidence):
                raise Inconclusive(evidence)
            raise _without_subscriptions(evidence)
    _APPLIED_ONCE.add(target)
    waited = time.monotonic() - started
    if waited > 0.5:
        check.note(f"subscription changes visible to Gets after {waited * 1000:.0f} ms")
    return waited


async def get(
    conn: KafkaConnection, instance_id: uuid.UUID = ZERO_UUID, *, timeout: float | None = None
) -> Message:
    """A Get's response body (`timeout` None: the connection's)."""
    request = GetTelemetrySubscriptionsRequest(client_instance_id=instance_id)
    return (await conn.request(request, 0, timeout=timeout)).body


async def push(
    conn: KafkaConnection,
    instance_id: uuid.UUID,
    subscription_id: int,
    *,
    metrics: bytes | _Default | None = PAYLOAD,
    terminating: bool = False,
    compression_type: int = 0,
    strict: bool = True,
    timeout: float | None = None,
) -> Message:
    """The one PushTelemetry every broker case sends; the response body. `metrics` defaults to a
    valid OTLP payload; None is a null Metrics field (sent with `strict=False`)."""
    body = PushTelemetryRequest(
        client_instance_id=instance_id, subscription_id=subscription_id, terminating=terminating,
        compression_type=compression_type, metrics=payload() if metrics is PAYLOAD else metrics,
    )  # fmt: skip
    return (await conn.request(body, 0, strict=strict, timeout=timeout)).body


async def push_code(
    conn: KafkaConnection,
    sub: Message,
    *,
    metrics: bytes | None = None,
    terminating: bool = False,
    compression_type: int = 0,
    timeout: float | None = None,
) -> str:
    """`push()` as the instance `sub` (a Get response) describes; the answer's error code, named
    (`metrics` None: a valid OTLP payload; `timeout` None: the connection's)."""
    response = await push(
        conn, sub.client_instance_id, sub.subscription_id,
        metrics=PAYLOAD if metrics is None else metrics, terminating=terminating,
        compression_type=compression_type, timeout=timeout,
    )  # fmt: skip
    return err(response.error_code)


async def connection(
    check: Check, *, subscribed: bool | None = None, interval_ms: int = SHORT_INTERVAL_MS,
    broker: int = 0,
) -> KafkaConnection:  # fmt: skip
    """A connection to the `broker`-th broker with the case's client id (`check.unique("client")`),
    subscribed at `interval_ms` first when `subscribed` (None: where the target lets the harness
    subscribe; elsewhere unsubscribed, PushIntervalMs 300000)."""
    target = present(check.target, "a broker case's target")
    client_id = check.unique("client")
    if subscribed is None:
        subscribed = target.has(Capability.CLIENT_METRICS_ADMIN)
    if subscribed:
        await subscribe(check, interval_ms=interval_ms, client_id=client_id)
    return await check.connect(broker, client_id=client_id)


async def session(
    check: Check, *, subscribed: bool | None = None, interval_ms: int = SHORT_INTERVAL_MS,
    broker: int = 0,
) -> tuple[KafkaConnection, Message]:  # fmt: skip
    """The one client session every broker case starts from: `connection()` and its first Get,
    required to succeed."""
    conn = await connection(check, subscribed=subscribed, interval_ms=interval_ms, broker=broker)
    response = await get(conn)
    check.require("first Get ErrorCode", 0, response.error_code)
    return conn, response


async def new_instance(check: Check, conn: KafkaConnection) -> Message:
    """A Get with a Null id on `conn`: a new client instance, never throttled."""
    response = await get(conn)
    check.require("Get for a new instance", err(NONE), err(response.error_code))
    return response


def digest(data: bytes) -> str:
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}"


async def sink_records(target: BrokerTarget, instance_id: uuid.UUID) -> list[SinkRecord]:
    records = await asyncio.to_thread(target.telemetry_received)
    names = {kafka_uuid_str(instance_id), str(instance_id)}
    return [r for r in records if r.client_instance_id in names]


async def add_matching_subscription(check: Check) -> None:
    """One more subscription for the case's client id: its subscription set changes."""
    match = {"client_id": check.unique("client")}
    await add_subscription(
        check, match, ("org.apache.kafka.consumer.",), name=f"{check.unique('sub')}-extra"
    )


async def add_subscription(
    check: Check,
    match: Mapping[str, str],
    metrics: tuple[str, ...] = ("org.apache.kafka.",),
    interval_ms: int = INTERVAL_MS,
    *,
    name: str | None = None,
) -> str:
    """One more subscription (any match map; a fresh name unless given), deleted when the case
    ends; returns its name once every broker has the change (`settled`)."""
    name = name or check.unique("sub") + f"-{uuid.uuid4().hex[:4]}"
    await put_subscription(check, Subscription(name, metrics, interval_ms, dict(match)))
    await settled(check)
    return name


async def get_after_change(
    check: Check, conn: KafkaConnection, instance_id: uuid.UUID, interval_ms: int = INTERVAL_MS
) -> Message:
    """A Get after a subscription change; Apache answers it at once (the instance is rebuilt),
    a broker that throttles it is asked again after the interval (this case does not judge that)."""
    response = await get(conn, instance_id)
    if response.error_code == THROTTLED:
        check.note("the Get after a subscription change was throttled; asked again")
        await wait_interval(check, time.monotonic(), interval_ms)
        response = await get(conn, instance_id)
    check.require("Get after the subscription change", err(NONE), err(response.error_code))
    return response


TELEMETRY_ADMIN = (Capability.TELEMETRY, Capability.CLIENT_METRICS_ADMIN)


def err(code: int) -> str:
    """An error code as expectations show it: `THROTTLING_QUOTA_EXCEEDED (89)`."""
    return f"{error_name(code)} ({code})"


def answer(code: int, message: str | None) -> str:
    """A per-resource admin answer as expectations show it: name and the broker's message."""
    return f"{error_name(code)} ({message})" if message else error_name(code)


async def wait_interval(check: Check, since: float, interval_ms: int) -> None:
    """Sleep until PushIntervalMs (plus a margin) has passed since `since` (time.monotonic())."""
    delay = since + (interval_ms + WAIT_MARGIN_MS) / 1000 - time.monotonic()
    if delay > 0:
        await check.wait(delay)


async def eventually(
    fetch: Callable[[], Awaitable[T]], done: Callable[[T], bool], timeout: float = 5.0
) -> T:
    """`fetch()` until `done` holds or `timeout` passes; the last value either way.

    A KRaft broker applies a config change once it has read it from the metadata log, a moment
    after the controller answered; the reference applies it at once.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = await fetch()
        if done(value) or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.1)
