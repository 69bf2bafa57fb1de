"""Cases whose answers cost the broker work that grows with the request wait for them, however
long a busy machine makes it (BULK_ANSWER_TIMEOUT).

The loaded main job ended `error` on kip714.push.size_limit.* (the reference took longer than the
connection's 5 s to decode a 3 MiB push while both cores were busy) and on
kip714.subscriptions.instance_id.assigned_unique (1,000 pipelined Gets). Here the reference is
slowed past a shortened connection timeout (the machine's load, in miniature); the verdicts must
stay `pass`. Costs about 4 s (one single-broker reference, payloads of a few KiB).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest

from kconform.engine.check import Check
from kconform.engine.model import CaseInfo
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.reference import receiver, telemetry
from kconform.fixtures.runtime import LoopThread
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.targets.reference import ReferenceTarget
from kconform.suites.broker import (
    test_push_size_limit,
    test_security,
    test_subscriptions_instance_id,
)
from kconform.suites.broker.helpers import BULK_ANSWER_TIMEOUT

CONNECTION_TIMEOUT = 0.3  # stands for the connection's 5 s
DECODE_SECONDS = 0.8  # stands for decoding megabytes on a busy machine
GET_SECONDS = 0.002  # x 1,000 Gets: stands for a busy machine's pace
Case = Callable[[BrokerTarget, Check], Coroutine[Any, Any, None]]


@pytest.fixture(scope="module")
def reference() -> Iterator[ReferenceTarget]:
    with ReferenceTarget(brokers=1, telemetry_max_bytes=4096) as target:
        yield target


def judged(target: ReferenceTarget, test: Case, monkeypatch: pytest.MonkeyPatch) -> Check:
    """`test` run against `target` as the plugin runs it, its connections' timeout shortened."""
    connect = Check.connect

    async def short_connect(self: Check, *args: Any, **kwargs: Any) -> KafkaConnection:
        return await connect(self, *args, **{**kwargs, "timeout": CONNECTION_TIMEOUT})

    monkeypatch.setattr(Check, "connect", short_connect)
    info: CaseInfo = next(m.args[0] for m in getattr(test, "pytestmark", ())
                          if m.name == "kconform_case")  # fmt: skip
    check = Check(info, target)
    runtime = LoopThread()
    try:
        runtime.run(test(target, check), timeout=30)
        for cleanup in reversed(check.cleanups):
            cleanup()
        runtime.run(check.close())
    finally:
        runtime.stop()
    return check


@pytest.mark.parametrize(
    "test",
    [test_push_size_limit.test_size_limit_exceeded,
     test_push_size_limit.test_size_limit_after_compression],
    ids=lambda t: t.__name__,
)  # fmt: skip
def test_size_limit_waits_for_a_slow_decode(
    reference: ReferenceTarget, test: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow_receive(payload: bytes, *, lenient: bool = False) -> None:
        time.sleep(DECODE_SECONDS)  # blocks the reference's loop, as a busy CPU does
        receiver.receive(payload, lenient=lenient)

    monkeypatch.setattr(telemetry, "receive", slow_receive)
    check = judged(reference, test, monkeypatch)
    assert check.expectations and all(e.ok for e in check.expectations), check.expectations


def test_a_thousand_gets_are_all_awaited(
    reference: ReferenceTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = telemetry.ClientMetricsManager.get_subscriptions

    def slow_get(self: telemetry.ClientMetricsManager, *args: Any) -> Any:
        time.sleep(GET_SECONDS)
        return answer(self, *args)

    monkeypatch.setattr(telemetry.ClientMetricsManager, "get_subscriptions", slow_get)
    test = test_subscriptions_instance_id.test_instance_id_assigned_unique
    check = judged(reference, test, monkeypatch)
    assert check.expectations and all(e.ok for e in check.expectations), check.expectations


BULK_CASES = [
    test_push_size_limit.test_size_limit_exceeded,
    test_push_size_limit.test_size_limit_after_compression,
    test_security.test_oversized_rejected,
    test_security.test_at_limit_accepted,
    test_security.test_size_limit_after_compression,
    test_security.test_many_points,
    test_subscriptions_instance_id.test_instance_id_assigned_unique,
]


@pytest.mark.parametrize("test", BULK_CASES, ids=lambda t: f"{t.__module__}.{t.__name__}")
def test_a_bulk_case_may_outlive_its_answer_bound(test: Case) -> None:
    """many_points took 96 s of --case-timeout's 120 in a loaded main job: the case's own limit
    must leave room for BULK_ANSWER_TIMEOUT and the payload it builds first."""
    limits = [m.args[0] for m in getattr(test, "pytestmark", ()) if m.name == "kconform_timeout"]
    assert limits and max(limits) >= BULK_ANSWER_TIMEOUT + 60, limits
