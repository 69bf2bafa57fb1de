"""Cases that push megabytes of OTLP wait for the answer, however long a busy machine makes it.

The loaded main job ended `error` on kip714.push.size_limit.*: the reference took longer than the
connection's 5 s to decode a 3 MiB push while both cores were busy. Here the reference's receiver
is slowed past a shortened connection timeout (the machine's load, in miniature); the verdicts
must stay `pass`. Costs about 2 s (one single-broker reference, payloads of a few KiB).
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
from kconform.suites.broker import test_push_size_limit

CONNECTION_TIMEOUT = 0.3  # stands for the connection's 5 s
DECODE_SECONDS = 0.8  # stands for decoding megabytes on a busy machine
Case = Callable[[BrokerTarget, Check], Coroutine[Any, Any, None]]


@pytest.fixture(scope="module")
def slow_reference() -> Iterator[ReferenceTarget]:
    with ReferenceTarget(brokers=1, telemetry_max_bytes=4096) as target:
        yield target


def _info(test: Case) -> CaseInfo:
    info: CaseInfo = next(m.args[0] for m in getattr(test, "pytestmark", ())
                          if m.name == "kconform_case")  # fmt: skip
    return info


@pytest.mark.parametrize(
    "test",
    [test_push_size_limit.test_size_limit_exceeded,
     test_push_size_limit.test_size_limit_after_compression],
    ids=lambda t: t.__name__,
)  # fmt: skip
def test_size_limit_waits_for_a_slow_decode(
    slow_reference: ReferenceTarget, test: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow_receive(payload: bytes, *, lenient: bool = False) -> None:
        time.sleep(DECODE_SECONDS)  # blocks the reference's loop, as a busy CPU does
        receiver.receive(payload, lenient=lenient)

    connect = Check.connect

    async def short_connect(self: Check, *args: Any, **kwargs: Any) -> KafkaConnection:
        return await connect(self, *args, **{**kwargs, "timeout": CONNECTION_TIMEOUT})

    monkeypatch.setattr(telemetry, "receive", slow_receive)
    monkeypatch.setattr(Check, "connect", short_connect)
    check = Check(_info(test), slow_reference)
    runtime = LoopThread()
    try:
        runtime.run(test(slow_reference, check), timeout=30)
        for cleanup in reversed(check.cleanups):
            cleanup()
        runtime.run(check.close())
    finally:
        runtime.stop()
    assert check.expectations and all(e.ok for e in check.expectations), check.expectations
