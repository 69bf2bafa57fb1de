"""Two behaviours of a broker the harness was never tuned on get verdicts, not `error`.

- A broker that accepts CLIENT_METRICS subscriptions but never serves one in a Get: the
  applied case fails `kip714.get.subscription.applied` with the answers as evidence, and every
  later case that needs a subscription is `not-applicable` at once (no Get, no wait), naming
  that rule. A broker that served subscriptions before and misses one now is a stall
  (Inconclusive), not that verdict.
- A broker that closes the connection on an ApiVersions version it lacks, where KIP-511 asks
  for a v0 UNSUPPORTED_VERSION answer: the fallback case fails, the retry case is
  `not-applicable` naming the fallback rule.

Each is run against a scripted broker (`tests/support/fake_broker.py`) that does it, and against
one that does not, so a judgement that went the other way fails here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any

import pytest

from kconform.codecs.framing import RequestFrame
from kconform.codecs.messages import GetTelemetrySubscriptionsResponse
from kconform.codecs.schema import Message
from kconform.engine.check import Check
from kconform.engine.model import CaseInfo
from kconform.errors import Inconclusive, PreconditionUnmet
from kconform.fixtures.runtime import LoopThread
from kconform.fixtures.targets.base import BrokerAddress, BrokerTarget, Capability, Subscription
from kconform.suites.broker import helpers, test_apiversions, test_subscriptions
from tests.support.fake_broker import FakeBroker

Case = Callable[[BrokerTarget, Check], Coroutine[Any, Any, None]]
VISIBLE_TIMEOUT = 0.3  # stands for the 15 s a change may take to reach a broker
FALLBACK_RULE = "kip511.apiversions.unsupported_version.fallback"


class ScriptedBroker(FakeBroker):
    """Serves the subscriptions set on it (by client id) unless `applies` is off; closes the
    connection on ApiVersions above `close_above` when set."""

    def __init__(self) -> None:
        super().__init__(node_id=1)
        self.subscribed: dict[str, tuple[str, ...]] = {}
        self.applies = True
        self.close_above: int | None = None

    def answer(self, request: RequestFrame) -> tuple[Message, int] | None:
        key, version = request.api_key, request.api_version
        if key == 18 and self.close_above is not None and version > self.close_above:
            raise ConnectionResetError("closed instead of answering")  # _serve closes
        if key == 71:
            client_id = request.header.client_id or ""
            metrics = self.subscribed.get(client_id, ()) if self.applies else ("",)
            return GetTelemetrySubscriptionsResponse(requested_metrics=list(metrics)), 0
        return super().answer(request)

    def gets(self) -> int:
        return sum(1 for r in self.received if r.api_key == 71)


class ScriptedTarget(BrokerTarget):
    name = "scripted"
    capabilities = frozenset({Capability.TELEMETRY, Capability.CLIENT_METRICS_ADMIN})

    def __init__(self, broker: ScriptedBroker) -> None:
        self.broker = broker

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    @property
    def brokers(self) -> Sequence[BrokerAddress]:
        return [BrokerAddress(1, "127.0.0.1", self.broker.port)]

    def set_subscription(self, subscription: Subscription) -> None:
        self.broker.subscribed[subscription.match["client_id"]] = tuple(subscription.metrics)

    def delete_subscription(self, name: str) -> None:
        pass


@pytest.fixture
def runtime() -> Iterator[LoopThread]:
    loop = LoopThread()
    yield loop
    loop.stop()


@pytest.fixture
def broker(runtime: LoopThread) -> Iterator[ScriptedBroker]:
    scripted = ScriptedBroker()
    runtime.run(scripted.start())
    yield scripted
    runtime.run(scripted.stop())


@pytest.fixture(autouse=True)
def short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(helpers, "SUBSCRIPTION_VISIBLE_TIMEOUT", VISIBLE_TIMEOUT)
    monkeypatch.setattr(test_subscriptions, "SUBSCRIPTION_VISIBLE_TIMEOUT", VISIBLE_TIMEOUT)


def judged(runtime: LoopThread, target: BrokerTarget, test: Case) -> Check:
    """`test` run against `target` as the plugin runs it; its exception, if any, propagates."""
    info: CaseInfo = next(m.args[0] for m in getattr(test, "pytestmark", ())
                          if m.name == "kconform_case")  # fmt: skip
    check = Check(info, target)
    try:
        runtime.run(test(target, check), timeout=30)
    finally:
        for cleanup in reversed(check.cleanups):
            cleanup()
        runtime.run(check.close())
    return check


def test_never_applied_fails_once_then_cases_are_not_applicable_at_once(
    runtime: LoopThread, broker: ScriptedBroker
) -> None:
    broker.applies = False
    target = ScriptedTarget(broker)
    check = judged(runtime, target, test_subscriptions.test_subscription_applied)
    assert check.violated
    bad = [e for e in check.expectations if not e.ok]
    assert len(bad) == 1 and bad[0].observed == [""]  # the broker's unchanging answer
    assert helpers.never_applied(target) is not None
    gets, started = broker.gets(), time.monotonic()
    with pytest.raises(PreconditionUnmet, match="never applies") as unmet:
        judged(runtime, target, test_subscriptions.test_metrics_all)
    assert unmet.value.needs == helpers.APPLIED_RULE
    assert time.monotonic() - started < VISIBLE_TIMEOUT  # no wait for it again
    assert broker.gets() == gets  # nor a Get


def test_never_applied_found_by_any_case_is_remembered(
    runtime: LoopThread, broker: ScriptedBroker
) -> None:
    broker.applies = False
    target = ScriptedTarget(broker)
    with pytest.raises(PreconditionUnmet, match=r"metrics \[''\]"):
        judged(runtime, target, test_subscriptions.test_metrics_all)
    gets = broker.gets()
    with pytest.raises(PreconditionUnmet):
        judged(runtime, target, test_subscriptions.test_metrics_union)
    assert broker.gets() == gets


def test_a_broker_that_applies_subscriptions_passes(
    runtime: LoopThread, broker: ScriptedBroker
) -> None:
    target = ScriptedTarget(broker)
    check = judged(runtime, target, test_subscriptions.test_subscription_applied)
    assert not check.violated and check.expectations
    assert helpers.never_applied(target) is None


def test_a_stall_after_changes_applied_is_inconclusive(
    runtime: LoopThread, broker: ScriptedBroker
) -> None:
    target = ScriptedTarget(broker)

    async def settle_once(target: BrokerTarget, check: Check) -> None:
        await helpers.add_subscription(check, {"client_id": check.unique("client")})

    settle_once.pytestmark = test_subscriptions.test_metrics_all.pytestmark  # type: ignore[attr-defined]
    judged(runtime, target, settle_once)
    broker.applies = False
    with pytest.raises(Inconclusive, match="not visible"):
        judged(runtime, target, settle_once)
    assert helpers.never_applied(target) is None


def test_closed_instead_of_the_fallback_answer_fails(
    runtime: LoopThread, broker: ScriptedBroker
) -> None:
    broker.close_above = 3
    target = ScriptedTarget(broker)
    check = judged(runtime, target, test_apiversions.test_unsupported_version_fallback)
    closed = [e for e in check.expectations if not e.ok]
    assert closed and all("connection closed" in str(e.observed) for e in closed)
    assert [e.what for e in closed] == ["v4: answered", "v127: answered", "v32767: answered"]
    with pytest.raises(PreconditionUnmet, match="connection closed") as unmet:
        judged(runtime, target, test_apiversions.test_fallback_range_usable)
    assert unmet.value.needs == FALLBACK_RULE


def test_the_fallback_answer_passes(runtime: LoopThread, broker: ScriptedBroker) -> None:
    target = ScriptedTarget(broker)  # answers v0 UNSUPPORTED_VERSION with ApiVersions' range
    check = judged(runtime, target, test_apiversions.test_unsupported_version_fallback)
    assert check.expectations and not check.violated
