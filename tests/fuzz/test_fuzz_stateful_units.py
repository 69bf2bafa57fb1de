"""The stateful machine's parts that a real broker needs (issue 17), against fake brokers.

- Waiting for a subscription change: a fake broker whose CLIENT_METRICS changes become visible
  late, as a KRaft broker's do (controller, metadata log, broker).
- Ruling 11: a push with a null Metrics field may get its connection closed, or any answer.
- Known deviations: replaying a session through the reference model with a deviation's
  mutants tells Apache's KAFKA-20898 apart from a real new difference.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

import pytest
from fake_broker import FakeBroker

from kconform.codecs.framing import RequestFrame
from kconform.codecs.messages import (
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
    IncrementalAlterConfigsResponse,
    PushTelemetryRequest,
    PushTelemetryResponse,
)
from kconform.codecs.schema import Message
from kconform.codecs.wire import ZERO_UUID
from kconform.engine.fuzz import actions, deviations
from kconform.engine.fuzz import model as m
from kconform.engine.fuzz.engine import Finding
from kconform.engine.fuzz.judge import Judge
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.reference import RequestContext
from kconform.fixtures.targets.base import BrokerAddress
from kconform.fixtures.wirelog import WireLog

T = TypeVar("T")


@dataclass
class LaggingBroker(FakeBroker):
    """Answers IncrementalAlterConfigs at once but applies each change `lag` seconds later;
    a Get lists the `metrics` of the applied subscriptions whose `match` fits its client id."""

    lag: float = 0.0
    pending: list[tuple[float, str, dict[str, str]]] = field(default_factory=list)
    subscriptions: dict[str, dict[str, str]] = field(default_factory=dict)
    gets: list[tuple[str | None, uuid.UUID]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    push_answer: int | None = None  # error code for a null-Metrics push; None: close

    def answer(self, request: RequestFrame) -> tuple[Message, int] | None:
        body, now = request.body, time.monotonic()
        if request.api_key == 44:
            assert body is not None
            for resource in body.resources:
                changes = {c.name: c.value for c in resource.configs if c.config_operation == 0}
                self.pending.append((now + self.lag, resource.resource_name, changes))
                if any(c.config_operation == 1 for c in resource.configs):
                    self.deleted.append(resource.resource_name)
            responses = [
                IncrementalAlterConfigsResponse.AlterConfigsResourceResponse(
                    resource_type=r.resource_type, resource_name=r.resource_name
                )
                for r in body.resources
            ]
            return IncrementalAlterConfigsResponse(responses=responses), request.api_version
        if request.api_key == 71:
            assert body is not None
            client_id = request.header.client_id
            self.gets.append((client_id, body.client_instance_id))
            metrics = [m for s in self._applied(now) if _matches(s, client_id) for m in _list(s)]
            return GetTelemetrySubscriptionsResponse(
                client_instance_id=uuid.uuid4(), requested_metrics=metrics
            ), 0
        if request.api_key == 72:
            assert body is not None and body.metrics is None
            if self.push_answer is None:
                raise ConnectionResetError("null Metrics: the connection is closed")
            return PushTelemetryResponse(error_code=self.push_answer), 0
        return super().answer(request)

    def _applied(self, now: float) -> list[dict[str, str]]:
        for _, name, changes in [p for p in self.pending if p[0] <= now]:
            self.subscriptions.setdefault(name, {}).update(changes)
        self.pending = [p for p in self.pending if p[0] > now]
        return list(self.subscriptions.values())


def _matches(subscription: dict[str, str], client_id: str | None) -> bool:
    key, _, pattern = subscription.get("match", "").partition("=")
    return key == "client_id" and re.fullmatch(pattern, client_id or "") is not None


def _list(subscription: dict[str, str]) -> list[str]:
    return [v for v in subscription.get("metrics", "").split(",") if v]


class LoopSession:
    """What `Judge` needs of a FuzzSession: a loop thread to run I/O on, and findings."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.log = WireLog()
        self.findings: list[Finding] = []
        self.case_id, self.target_name = "fuzz.stateful.telemetry", "fake"

    def io(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout + 5)

    def count(self, shape: tuple[str, ...]) -> None:
        pass

    def found(self, finding: Finding) -> None:
        self.findings.append(finding)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def session() -> Iterator[LoopSession]:
    running = LoopSession()
    yield running
    running.close()


def _world(session: LoopSession, broker: FakeBroker) -> actions.World:
    address = BrokerAddress(1, "127.0.0.1", broker.port)
    return actions.World(cast(Any, session), address, 1_048_576, "fz-unit")


def _started(session: LoopSession, broker: FakeBroker) -> FakeBroker:
    session.io(broker.start(), 5)
    return broker


# --- waiting until a subscription change is visible -------------------------------------------


def test_the_session_waits_until_a_late_change_is_visible_and_times_it(
    session: LoopSession,
) -> None:
    broker = _started(session, LaggingBroker(node_id=1, lag=0.3))
    world = _world(session, broker)

    async def change_then_wait() -> float | None:
        admin = await KafkaConnection.open("127.0.0.1", broker.port)
        try:
            marker = world.next_marker()
            await admin.request(actions.alter_body([world.sentinel(marker)]), 1)
            return await actions.await_visible(world, marker, 2.0, WireLog())
        finally:
            await admin.close()
            await world.close()

    seconds = session.io(change_then_wait(), 5)
    assert seconds is not None and 0.25 <= seconds < 1.0  # the lag runs from the change
    probes = [g for g in broker.gets if g[0] == world.probe_client_id]
    assert len(probes) > 1  # it polled until the change arrived ...
    assert {instance for _, instance in probes} == {ZERO_UUID}  # ... as new, unthrottled ids
    assert broker.deleted == [world.sentinel_name]  # and the case cleans the sentinel up
    session.io(broker.stop(), 5)


def test_a_change_that_never_arrives_is_reported_after_the_limit(session: LoopSession) -> None:
    broker = _started(session, LaggingBroker(node_id=1, lag=60.0))
    world = _world(session, broker)
    started = time.monotonic()
    seconds = session.io(actions.await_visible(world, "kconform.sentinel.9", 0.3), 5)
    assert seconds is None and 0.3 <= time.monotonic() - started < 2.0
    session.io(world.close(), 5)
    session.io(broker.stop(), 5)


# --- ruling 11: a null Metrics field ------------------------------------------------------------


def _null_push(session: LoopSession, broker: LaggingBroker) -> tuple[Judge, Any]:
    world = _world(session, broker)
    judge = Judge(world, "fz-unit-1", actions.Trace("fz-unit-1"), seed=1)
    connection = session.io(KafkaConnection.open("127.0.0.1", broker.port), 5)
    push = PushTelemetryRequest(client_instance_id=uuid.uuid4(), subscription_id=0, metrics=None)
    found = judge.exchange(connection, RequestContext("c1"), "Push(null)", push, push, 0)
    session.io(connection.close(), 5)
    session.io(broker.stop(), 5)
    return judge, found


def test_a_close_after_a_null_metrics_push_conforms(session: LoopSession) -> None:
    judge, found = _null_push(session, _started(session, LaggingBroker(node_id=1)))
    assert found == (None, None) and judge.closed and judge.comparing
    assert not session.findings and not judge.history  # the model was not told
    assert "ruling 11" in judge.trace.report("")


def test_any_answer_to_a_null_metrics_push_conforms(session: LoopSession) -> None:
    judge, _ = _null_push(session, _started(session, LaggingBroker(node_id=1, push_answer=42)))
    assert judge.diverged and judge.failed is None and not session.findings
    assert any("ruling 11" in d for d in judge.world.divergences)


def test_no_answer_and_no_close_to_a_null_metrics_push_fails(
    session: LoopSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(actions, "REQUEST_TIMEOUT", 0.3)
    broker = LaggingBroker(node_id=1)
    monkeypatch.setattr(broker, "answer", lambda request: None)  # never answers
    judge, _ = _null_push(session, _started(session, broker))
    assert judge.failed is not None and "hang" in judge.failed
    assert "rule: kip714.robustness.malformed_answered" in session.findings[0].report
    assert "ruling 11" in session.findings[0].report


# --- known deviations: the session replayed with a deviation's mutants -------------------------


def _session_against(mutants: frozenset[str], then: str = "push") -> list[m.Step]:
    """Get, a Terminating push with a wrong SubscriptionId, then an ordinary push (or a Get):
    the answers a broker with `mutants` gives (the ids are the models': every seed-7 model
    issues the same ones)."""
    target = m.TimedModel(1_048_576, seed=7, mutants=mutants)
    ctx = RequestContext("c1")
    steps = []

    def send(body: Message, at: int) -> Any:
        assert body.api_key is not None
        frame = m.as_received(body, 0, "c")
        chosen = target.candidates(ctx, frame, at, at)[0]
        target.commit(chosen)
        steps.append(m.Step(ctx, frame, at, at, m.signature(chosen.outcome)))
        return chosen.outcome.response_body

    get = send(GetTelemetrySubscriptionsRequest(), 0)

    def push(subscription: int, terminating: bool) -> PushTelemetryRequest:
        return PushTelemetryRequest(
            client_instance_id=get.client_instance_id,
            subscription_id=subscription,
            terminating=terminating,
            metrics=b"",
        )

    send(push(get.subscription_id ^ 1, True), 1)  # UNKNOWN_SUBSCRIPTION_ID
    if then == "push":
        send(push(get.subscription_id, False), 2)
    else:
        send(GetTelemetrySubscriptionsRequest(client_instance_id=get.client_instance_id), 2)
    return steps


def _judge(session: LoopSession, history: list[m.Step]) -> Judge:
    world = actions.World(cast(Any, session), BrokerAddress(1, "127.0.0.1", 1), 1_048_576, "u")
    judge = Judge(world, "u-1", actions.Trace("u-1"), seed=7)
    judge.history = history
    return judge


def test_kafka_20898_is_recognised_by_replaying_the_session_with_its_mutant() -> None:
    deviation = deviations.TERMINATING_FLAG_ON_FAILED_PUSH
    steps = _session_against(deviation.mutants)
    assert steps[-1].seen == ("INVALID_REQUEST",)  # Apache: the failed push terminated it
    assert m.replay(steps, 1_048_576, 7, frozenset()) is None  # the KIP model disagrees
    replayed = m.replay(steps, 1_048_576, 7, deviation.mutants)
    assert replayed is not None and replayed[0].mutants == deviation.mutants


def test_the_judge_names_kafka_20898_a_must_deviation(session: LoopSession) -> None:
    steps = _session_against(deviations.TERMINATING_FLAG_ON_FAILED_PUSH.mutants)
    judge = _judge(session, steps[:-1])
    explained = judge._explain(steps[-1])
    assert explained is not None
    assert explained[0] is deviations.TERMINATING_FLAG_ON_FAILED_PUSH
    assert not explained[0].acceptable  # MUST (ruling 3): the case fails, naming KAFKA-20898
    assert "KAFKA-20898" in explained[0].why
    nonsense = replace(steps[-1], seen=("UNKNOWN_SERVER_ERROR",))  # no model says that
    assert judge._explain(nonsense) is None


def test_apache_3_7_get_throttling_is_acceptable_and_the_model_follows_it(
    session: LoopSession,
) -> None:
    """§C.2 step 3: 3.7.0-4.0.0 throttle the Get right after an UNKNOWN_SUBSCRIPTION_ID
    push; ruling 4 makes that a SHOULD, so the session goes on against a model that does it."""
    deviation = deviations.GET_THROTTLED_AFTER_PUSH_ERROR
    steps = _session_against(deviation.mutants, then="get")
    assert steps[-1].seen == ("THROTTLING_QUOTA_EXCEEDED",)
    judge = _judge(session, steps[:-1])
    explained = judge._explain(steps[-1])
    assert explained is not None and explained[0] is deviation and deviation.acceptable
    judge._adopt(*explained[:2], steps[-1], "Get")
    assert judge.model.mutants == deviation.mutants and judge.comparing
    assert judge.history[-1] is steps[-1]
