"""KIP-714 client error handling when the transport fails: a push lost with its connection, or
left unanswered past the client's request timeout.

Spec: KIP-714 "Connection selection" (the client keeps its telemetry connection "until the
connection goes down, at which time it may choose to reconnect and continue using the same
broker, or switch over to another broker connection"); the error table names no transport
failure, so ruling 17 says what is owed: telemetry again within the longer of 5 minutes and three
PushIntervalMs. The Java client 3.7.0-4.0.1 and 4.1.0 stop for good instead (KAFKA-19747); its
fixed releases wait DEFAULT_PUSH_INTERVAL_MS (300 s), so a client that waits is held that long
and one that comes back at once ends its case early (`run_client(until=...)`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from kconform.codecs.schema import Message
from kconform.engine.check import Check
from kconform.engine.model import Family, Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import (
    TELEMETRY,
    Recording,
    for_client,
    lag_text,
    run_client,
)
from kconform.suites.client.scripted import PushAnswer, ScriptedTelemetry
from kconform.suites.client.timing import RESUME_SLACK, resume_within
from kconform.suites.client.traffic import PUSH_TELEMETRY as PUSH

LOST_INTERVAL_MS = 1000
RESUME_WITHIN = resume_within(LOST_INTERVAL_MS)  # ruling 17: the longer of 5 min and 3 intervals
WAITS_THE_BOUND = pytest.mark.kconform_timeout(RESUME_WITHIN + 150)
"""A client that waits (Java 4.1.1: 300 s) or never comes back holds the case past
--case-timeout's 120 s: at most its start (--client-timeout, 30 s), the window (the bound, the
hold and the slack: 327 s), its close (RUN_MARGIN, 30 s)."""
REQUEST_TIMEOUT_MS = 2000  # asked of the client (Java's name; librdkafka's socket.timeout.ms)
HOLD = 15.0
"""Seconds the reference holds the answer: past the timeout asked, and past a default a client
cannot be given (franz-go times a request without a timeout field out after its
RequestTimeoutOverhead, 10 s); a client that comes back ends the case at once."""


@dataclass(frozen=True)
class Loss:
    """How the reference loses the client's first push."""

    how: str  # for the title
    spec: str
    injection: dict[str, Any]  # the proxy injection's action on that push
    config: dict[str, str]
    held: float  # seconds the answer is held, allowed on top of the bound
    answered: str  # why an answer could still have reached the client


CLOSED = Loss(
    "its connection is closed before the answer",
    "the reference closes the connection of the client's first push unanswered",
    {"close": True},
    {},
    0.0,
    "the proxy answered a push it was told to close on (a harness defect)",
)
TIMED_OUT = Loss(
    "its answer is held past the client's request timeout",
    f"request.timeout.ms and socket.timeout.ms {REQUEST_TIMEOUT_MS}; the reference holds the "
    f"answer to the client's first push {HOLD:g} s",
    {"delay": HOLD},
    {"request.timeout.ms": str(REQUEST_TIMEOUT_MS), "socket.timeout.ms": str(REQUEST_TIMEOUT_MS)},
    HOLD,
    f"the client waited the {HOLD:g} s out: its request timeout is longer than the "
    f"{REQUEST_TIMEOUT_MS} ms asked (a client that cannot be given one)",
)


def _lost_push_case(case_id: str, loss: Loss) -> Any:
    @WAITS_THE_BOUND
    @case(
        case_id,
        rules=["kip714.client.errors.transient_recovers"],
        title=f"A push lost to the transport ({loss.how}) does not end the client's telemetry",
        spec="KIP-714 Connection selection ('until the connection goes down, at which time it "
        f"may choose to reconnect and continue'); ruling 17; {loss.spec}; PushIntervalMs "
        f"{LOST_INTERVAL_MS}; a Get or Push again within {RESUME_WITHIN:g} s "
        f"(+ {RESUME_SLACK:g} s)",
        level=Level.MUST,
        requires=TELEMETRY,
        kind="client",
    )
    async def test(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
        gets_at_loss: list[int] = []

        def lose_first(number: int, _: Message) -> PushAnswer:
            if number == 1:
                gets_at_loss.append(scripted.gets)
            return PushAnswer()  # the injection below closes or holds it

        def resumed() -> bool:  # ends the window early: only a client that waits, waits
            return scripted.pushes >= 2 or bool(gets_at_loss and scripted.gets > gets_at_loss[0])

        scripted = ScriptedTelemetry(LOST_INTERVAL_MS, push=lose_first)
        window = 1.5 * LOST_INTERVAL_MS / 1000 + loss.held + RESUME_WITHIN + 2 * RESUME_SLACK
        recording = await run_client(
            check, client, client_target, Scenario.idle(seconds=window), config=loss.config,
            scripted=scripted, until=resumed,
            injections=lambda client_id: [for_client(client_id, PUSH, nth=1,
                                                     name="lose the first push", **loss.injection)],
        )  # fmt: skip
        _judge_lost_push(check, recording, loss)

    return test


def _judge_lost_push(check: Check, recording: Recording, loss: Loss) -> None:
    traffic = recording.traffic
    pushes = traffic.pushes
    check.precondition("PushTelemetry requests the client sent", ">= 1", 0, ok=bool(pushes))
    lost = pushes[0]
    closed = traffic.closed.get(lost.connection)
    check.observe(
        "the lost push",
        f"{lost}; connection closed {'at ' + format(closed, '.3f') if closed else 'never'}",
    )
    check.precondition(
        "the client got no answer to its first push",
        "no answer",
        f"answered after {(lost.answered or 0) - lost.sent:.3f} s: {loss.answered}",
        ok=lost.answered is None,
    )
    closing = recording.event_time("closing")
    after = [e for e in traffic.after(lost.sent, 71, 72)
             if not e.terminating and (closing is None or e.sent < closing)]  # fmt: skip
    delay = None if not after else round(after[0].sent - lost.sent, 3)
    where = "" if not after else "same" if after[0].connection == lost.connection else "new"
    check.observe(
        "next telemetry request",
        f"{after[0]} after {delay} s, on the {where} connection" if after else "none",
    )
    bound = round(loss.held + RESUME_WITHIN + RESUME_SLACK + recording.harness_lag, 3)
    check.expect(
        f"a Get or Push again after the lost push, within {bound:g} s{lag_text(recording)}",
        f"<= {bound:g}",
        delay,
        delay is not None and delay <= bound,
    )


LOST_PUSH = Family(_lost_push_case)
test_connection_lost = LOST_PUSH("kip714.client.errors.connection_lost", CLOSED)
test_push_timed_out = LOST_PUSH("kip714.client.errors.push_timed_out", TIMED_OUT)
