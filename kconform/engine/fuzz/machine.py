"""Random client sessions as a Hypothesis state machine, every answer checked against the model.

Rules are what a KIP-714 client (and a careless one) does: Get with a null, known, foreign or
reserved ClientInstanceId; Push early or late, Terminating or not, with the current, a stale or
a foreign SubscriptionId, each compression type, an empty, null, oversized or undecodable
payload; create, alter and delete its CLIENT_METRICS subscriptions through
IncrementalAlterConfigs; open a new connection; wait part of an interval. The same requests go
to the target and to `TimedModel`; a difference fails the example with a step-by-step trace
naming the rule involved, and Hypothesis shrinks it to the shortest such session.

Each example is its own client (a fresh client id; its subscriptions match only that id and are
deleted at teardown), so examples cannot disturb each other or the other cases.

What the rulings accept from a real broker is accepted here:

- a subscription change reaches the broker's telemetry code asynchronously: after each change
  the session waits until it is visible (`actions.await_visible`) and records how long it took;
- ruling 5: a Get for a known id may echo it or return null;
- ruling 11: a push with a null Metrics field may be answered or get its connection closed; on
  a close the session opens a new connection and forgets the instance (Apache 4.x drops an
  instance when its connection closes, 3.x keeps it: neither is wrong);
- a difference a known deviation explains (`deviations.py`: the session replayed through the
  reference model with that deviation's mutants gives every answer the target gave) is
  reported with that deviation's rule and `why`; a SHOULD/INFO one (ruling 4's Get
  throttling) is adopted and the session goes on against that model, a MUST one fails;
- any other ruling-4 difference is recorded and the rest of that example is not compared.

Hypothesis must see the same draws whatever the target answers, or it reports "inconsistent
data generation" (FlakyStrategyDefinition) when a timing-dependent step answers differently on
a replay. So strategies are static, a rule resolves them against the session's state in its
body, and a failed or diverged session keeps drawing: its remaining rules do nothing, and
teardown raises the failure.
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from kconform.codecs.errors import ErrorCode, error_name
from kconform.codecs.messages import (
    GetTelemetrySubscriptionsRequest,
    PushTelemetryRequest,
)
from kconform.codecs.schema import Message
from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.engine.fuzz import actions as a
from kconform.engine.fuzz import model as m
from kconform.engine.fuzz.engine import guarded
from kconform.engine.fuzz.judge import Judge
from kconform.errors import SubjectViolation
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.reference import RequestContext

MAX_CONNECTIONS = 3
MAX_WAIT_MS = 300  # a wait never exceeds this, whatever the interval (300000 without a match)


class Mismatch(SubjectViolation, AssertionError):
    """The target answered differently from the model."""


def step(body: Callable[..., None]) -> Callable[..., None]:
    """A rule: does nothing once the session failed or diverged (Hypothesis still draws its
    arguments, so the draws never depend on the target's answers), and its unexpected
    exceptions are the harness's (`guarded`)."""

    @functools.wraps(body)
    def run(self: TelemetryMachine, *args: Any, **kwargs: Any) -> None:
        if self.judge.comparing:
            body(self, *args, **kwargs)

    return guarded(run)


class TelemetryMachine(RuleBasedStateMachine):
    """One client's random session (see the module docstring)."""

    def __init__(self, world: a.World) -> None:
        super().__init__()
        world.session.begin_example()
        world.examples += 1
        self.world = world
        self.client_id = f"{world.client_prefix}-{world.examples}"
        self.trace = a.Trace(self.client_id)
        self.judge = Judge(world, self.client_id, self.trace, seed=world.examples)
        self.connections: list[tuple[KafkaConnection, RequestContext]] = []
        self.opened = 0
        self.instance: a.Pair | None = None
        self.subscription_ids: dict[Any, list[a.Pair]] = {}
        self.issued: set[uuid.UUID] = set()
        self.interval_ms = 300_000
        self.created: set[str] = set()

    # --- rules -------------------------------------------------------------------------------

    @initialize(
        subscribe=st.booleans(),
        metrics=st.sampled_from(a.METRIC_SETS),
        interval=st.integers(100, 300),
    )
    @step
    def start(self, subscribe: bool, metrics: str, interval: int) -> None:
        """How a client starts: connect, maybe be subscribed (short interval), Get an id."""
        self._connect()
        if subscribe:
            self._set(0, metrics, interval, "exact", False)
        self._get("null")

    @rule()
    @step
    def new_connection(self) -> None:
        if len(self.connections) < MAX_CONNECTIONS:
            self._connect()

    @rule(which=st.sampled_from(["null", "known", "foreign", "one"]))
    @step
    def get(self, which: str) -> None:
        self._get(which)

    @rule(
        terminating=st.sampled_from([False, False, False, True]),
        codec=st.sampled_from(sorted(a.CODECS)),
    )
    @step
    def push(self, terminating: bool, codec: int) -> None:
        """What a well-behaved client does: its current instance and SubscriptionId, OTLP."""
        self._push("current", "current", terminating, (codec, "otlp"))

    @rule(
        payload=st.sampled_from(list(a.ODD_PAYLOADS)).flatmap(
            lambda kind: st.sampled_from(a.ODD_PAYLOADS[kind])
        ),
        terminating=st.booleans(),
        fresh=st.booleans(),
    )
    @step
    def push_payload(self, payload: tuple[int, str], terminating: bool, fresh: bool) -> None:
        """A push with the client's own ids but an odd CompressionType or Metrics; `fresh`: as
        the first push of a new instance (a Get first), so the interval check lets it through
        to the compression, size and payload checks."""
        if fresh:
            self._get("null")
        self._push("current", "current", terminating, payload)

    @rule(
        instance=st.sampled_from(["current", "foreign", "zero", "one"]),
        subscription=st.sampled_from(["current", "stale", "foreign"]),
        terminating=st.booleans(),
    )
    @step
    def push_ids(self, instance: str, subscription: str, terminating: bool) -> None:
        """A push with a reserved, foreign or stale ClientInstanceId or SubscriptionId."""
        self._push(instance, subscription, terminating, (0, "otlp"))

    @rule(
        slot=st.integers(0, 1),
        metrics=st.sampled_from(a.METRIC_SETS),
        interval=st.one_of(st.integers(100, 300), st.sampled_from([99, 3600001])),
        match=st.sampled_from(["exact", "inner"]),
        unknown_key=st.sampled_from([False, False, False, True]),
    )
    @step
    def set_subscription(
        self, slot: int, metrics: str, interval: int, match: str, unknown_key: bool
    ) -> None:
        self._set(slot, metrics, interval, match, unknown_key)

    @rule(slot=st.integers(0, 1))
    @step
    def delete_subscription(self, slot: int) -> None:
        deleted: dict[str, tuple[int, str | None]] = dict.fromkeys(
            a.SUBSCRIPTION_KEYS, (a.DELETE, None)
        )
        self._alter(slot, f"IncrementalAlterConfigs DELETE s{slot}", deleted)

    @rule(fraction=st.sampled_from([0.5, 1.1]))
    @step
    def wait(self, fraction: float) -> None:
        # without a subscription the interval is 300000 ms: a short pause is all that is useful
        interval = self.interval_ms if self.interval_ms <= MAX_WAIT_MS else 100
        seconds = interval * fraction / 1000
        self.world.session.io(self.world.session.check.wait(seconds), seconds)
        self.trace.log(f"wait {seconds * 1000:.0f} ms ({fraction} x {interval} ms)")

    def teardown(self) -> None:
        self.world.ambiguous_steps += self.judge.model.ambiguous_steps
        with contextlib.suppress(Exception):
            self.world.session.io(self._cleanup(), a.REQUEST_TIMEOUT * 3)
        if self.judge.failed is not None:
            raise Mismatch(self.judge.failed)

    # --- what the rules do -------------------------------------------------------------------

    def _get(self, which: str) -> None:
        if which == "one":
            self._get_one()
            return
        if which == "known" and self.instance is None:
            which = "null"  # nothing known yet: a first Get
        foreign = uuid.uuid4()
        asked = {"null": a.Pair(ZERO_UUID, ZERO_UUID), "foreign": a.Pair(foreign, foreign)}.get(
            which, self.instance
        )
        assert asked is not None
        action = (
            f"Get(ClientInstanceId={'null' if which == 'null' else self.trace.name(asked.real)})"
        )
        before = self.judge.model.broker.telemetry.instance(asked.model)
        chosen, body = self._exchange(
            action,
            GetTelemetrySubscriptionsRequest(client_instance_id=asked.real),
            GetTelemetrySubscriptionsRequest(client_instance_id=asked.model),
            0,
            last_error=before.last_known_error if before else ErrorCode.NONE,
        )
        if chosen is None or body is None or body.error_code:
            return
        predicted = chosen.outcome.response_body
        assert predicted is not None
        if which == "null":
            fresh = body.client_instance_id not in (ZERO_UUID, ONE_UUID, *self.issued)
            self.judge.require(
                fresh,
                action,
                f"a fresh id, got {self.trace.name(body.client_instance_id)}",
                m.FRESH_ID_RULE,
            )
            self.issued.add(body.client_instance_id)
            pair = a.Pair(body.client_instance_id, predicted.client_instance_id)
        else:  # ruling 5: the id is echoed (Apache) or null (the KIP); both are fine
            pair = asked
        self._subscription_id(action, pair, a.Pair(body.subscription_id, predicted.subscription_id))
        self.instance, self.interval_ms = pair, int(predicted.push_interval_ms)

    def _set(self, slot: int, metrics: str, interval: int, match: str, unknown_key: bool) -> None:
        # "inner" is found inside this client's id by a search, but matches no id when anchored
        value = self.client_id if match == "exact" else self.client_id[1:]
        changes = {"metrics": metrics, "interval.ms": str(interval), "match": f"client_id={value}"}
        if unknown_key:  # not a CLIENT_METRICS key: the whole change is refused (§D)
            changes["push.interval.ms"] = str(interval)
        action = f"IncrementalAlterConfigs SET s{slot}: " + "; ".join(
            f"{k}={v!r}" for k, v in changes.items()
        )
        self._alter(slot, action, {k: (a.SET, v) for k, v in changes.items()})

    def _connect(self) -> None:
        address = self.world.broker
        self.opened += 1
        opening = KafkaConnection.open(
            address.host,
            address.port,
            client_id=self.client_id,
            timeout=a.REQUEST_TIMEOUT,
            wire_log=self.world.session.log,
            label=f"fuzz c{self.opened}",
        )
        connection = self.world.session.io(opening, a.REQUEST_TIMEOUT)
        port = connection.local_address[1]
        ctx = RequestContext(f"c{self.opened}", source_port=port)
        self.connections.append((connection, ctx))
        self.trace.log(f"connect c{self.opened}")

    async def _cleanup(self) -> None:
        if self.created:
            conn = await KafkaConnection.open(self.world.broker.host, self.world.broker.port)
            try:
                await conn.request(
                    a.delete_body(sorted(self.created)), 1, timeout=a.REQUEST_TIMEOUT
                )
            finally:
                await conn.close()
        for connection, _ in self.connections:
            await connection.close()

    def _get_one(self) -> None:
        """Get with the reserved ONE id. A broker treats it as an ordinary id (only null/ZERO is
        special in a Get, §C.2 step 1), so its one instance is shared by every client of the
        target and outlives the example: the model cannot know its state, and only "answered
        NONE or THROTTLING_QUOTA_EXCEEDED" is checked (the model is not told)."""
        connection, _ = self.connections[-1]
        body, t0, _ = self.world.session.io(
            a.timed(connection, GetTelemetrySubscriptionsRequest(client_instance_id=ONE_UUID), 0),
            a.REQUEST_TIMEOUT,
        )
        seen = m.observed_signature(body) if isinstance(body, Message) else (body,)
        self.world.session.count(("Get", str(seen[0])))
        self.trace.log(
            f"+{t0 - self.judge.started} ms".ljust(9) + f" Get(ClientInstanceId=ONE)\n"
            f"{'':14}-> {m.show(seen)}  [ONE is shared by every client: error code only]"
        )
        allowed = ("NONE", error_name(ErrorCode.THROTTLING_QUOTA_EXCEEDED))
        self.judge.require(
            seen[0] in allowed,
            "Get(ClientInstanceId=ONE)",
            f"answered {m.show(seen)}",
            m.GET_RULES[ErrorCode.NONE],
        )

    def _push(
        self, instance: str, subscription: str, terminating: bool, payload: tuple[int, str]
    ) -> None:
        if not self.judge.comparing:
            return  # the Get before it (push_payload's `fresh`) ended the comparison
        who = {"zero": a.Pair(ZERO_UUID, ZERO_UUID), "one": a.Pair(ONE_UUID, ONE_UUID)}.get(
            instance
        )
        if who is None:
            foreign = uuid.uuid4()  # never drawn: a shrunk uuid would recur across examples
            who = self.instance if instance == "current" and self.instance else None
            who = who or a.Pair(foreign, foreign)
        history = self.subscription_ids.get(who.real, [])
        if subscription == "current" and history:
            sub = history[-1]
        elif subscription == "stale" and len(history) > 1:
            sub = history[-2]
        else:
            known = {p.real for p in history} | {p.model for p in history}
            value = next(v for v in range(0x5EEDBEEF, 0x5EEDBEEF + 99) if v not in known)
            sub = a.Pair(value, value)
        ctype, kind = payload
        metrics, what = a.metrics(ctype, kind, self.world.telemetry_max_bytes)
        named = f"{self.trace.name(who.real)}, SubscriptionId={self.trace.subscription(sub.real)}"
        action = (
            f"Push({named}, terminating={str(terminating).lower()}, "
            f"{a.CODECS.get(ctype, ctype)}, {what})"
        )

        def body(instance_id: uuid.UUID, subscription_id: int) -> Message:
            return PushTelemetryRequest(
                client_instance_id=instance_id,
                subscription_id=subscription_id,
                terminating=terminating,
                compression_type=ctype,
                metrics=metrics,
            )

        self._exchange(action, body(who.real, sub.real), body(who.model, sub.model), 0)

    def _alter(self, slot: int, action: str, changes: dict[str, tuple[int, str | None]]) -> None:
        """The change, then the sentinel's; then wait until the broker shows the sentinel's
        (`actions` module docstring: the log applies the change first)."""
        name = f"{self.client_id}-s{slot}"
        self.created.add(name)
        body = a.alter_body([(name, changes)])
        chosen, _ = self._exchange(action, body, body, 1)
        if chosen is None:
            return
        marker = self.world.next_marker()
        sentinel = a.alter_body([self.world.sentinel(marker)])
        what = f"IncrementalAlterConfigs SET {self.world.sentinel_name}: metrics={marker!r}"
        chosen, _ = self._exchange(what, sentinel, sentinel, 1, shown=False)
        if chosen is None:
            return
        seconds = self.world.session.io(
            a.await_visible(self.world, marker, a.PROPAGATION_LIMIT, self.world.session.log),
            a.PROPAGATION_LIMIT + a.REQUEST_TIMEOUT,
        )
        if seconds is None:
            self.judge.require(
                False,
                action,
                f"the change was accepted but a new client does not see it after "
                f"{a.PROPAGATION_LIMIT:.0f}s",
                m.PROPAGATION_RULE,
            )
            return
        self.world.propagation_ms.append(round(seconds * 1000))
        self.trace.annotate(f"(visible to new clients {seconds * 1000:.0f} ms later)")

    # --- talking to the target ---------------------------------------------------------------

    def _exchange(
        self,
        action: str,
        real: Message,
        modelled: Message,
        version: int,
        last_error: ErrorCode = ErrorCode.NONE,
        *,
        shown: bool = True,
    ) -> tuple[m.Candidate | None, Any]:
        """`Judge.exchange` on the newest connection; a new one if the target closed it."""
        connection, ctx = self.connections[-1]
        found = self.judge.exchange(
            connection, ctx, action, real, modelled, version, last_error, shown=shown
        )
        if self.judge.closed:  # ruling 11: the connection is gone, and with it (maybe) the id
            self.connections.pop()
            self.world.session.io(connection.close(), a.REQUEST_TIMEOUT)
            self.instance = None
            self._connect()
        return found

    def _subscription_id(self, action: str, instance: a.Pair, sub: a.Pair) -> None:
        history = self.subscription_ids.setdefault(instance.real, [])
        if history:
            real_changed, model_changed = (
                history[-1].real != sub.real,
                history[-1].model != sub.model,
            )
            self.judge.require(
                real_changed == model_changed,
                action,
                f"SubscriptionId {'changed' if real_changed else 'unchanged'} while "
                f"the model's {'changed' if model_changed else 'did not'}",
                m.SUBSCRIPTION_ID_RULE,
            )
        if not history or history[-1].real != sub.real:
            history.append(sub)
            self.trace.name_subscription(sub.real)
