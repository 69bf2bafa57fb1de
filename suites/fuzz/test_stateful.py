"""Stateful model-based testing: random client sessions, every answer checked against the model.

A Hypothesis state machine (`machine.py`) plays KIP-714 clients against the target and, with
the same requests and the same clock readings, against the pure reference broker
(`fixtures/reference`, via `model.py`). Any answer the model would not give fails the case with
the shrunk session as a step-by-step trace naming the KIP rule involved (and, for a known
deviation of a real broker, its `why`). Intervals are real but short (subscriptions of 100-300
ms), so a quick run covers early and late pushes. On a KRaft broker subscription changes arrive
asynchronously: sessions wait until a change is visible and the case reports how long that took.

Needs TELEMETRY and CLIENT_METRICS_ADMIN: the sessions change their own subscriptions through
IncrementalAlterConfigs (a target without config APIs gets `unsupported`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import cast

import pytest
from hypothesis import seed
from hypothesis.stateful import run_state_machine_as_test

from kconform.codecs.messages import GetTelemetrySubscriptionsRequest
from kconform.engine.check import Check
from kconform.engine.fuzz import budget
from kconform.engine.fuzz.actions import PROPAGATION_LIMIT, World
from kconform.engine.fuzz.engine import FuzzSession, fuzz_cases
from kconform.engine.fuzz.machine import TelemetryMachine
from kconform.engine.fuzz.model import ORACLE_RULES
from kconform.engine.model import Level, case
from kconform.errors import Inconclusive
from kconform.fixtures.targets.base import BrokerTarget, Capability

DEFAULT_INTERVAL_MS = 300_000
RULE = "every answer of the target is one the reference model gives to the same session"
EXPECTED = (
    "the reference semantics (§C.2-C.4, D; rulings 1-5, 11): error codes, intervals, "
    f"metrics, fresh ids, SubscriptionId changes; subscription changes visible within "
    f"{PROPAGATION_LIMIT:.0f}s"
)


# Fuzzing may kill a fragile target (it aborts the librdkafka mock): after every other case.
pytestmark = pytest.mark.kconform_disruptive


async def probe(check: Check) -> int:
    """TelemetryMaxBytes, from a Get by a client no subscription should match."""
    connection = await check.connect(client_id=check.unique("fz-probe"))
    body = (await connection.request(GetTelemetrySubscriptionsRequest(), 0)).body
    if body.error_code:
        raise Inconclusive(f"a first Get answered error {body.error_code}; nothing to compare")
    if body.requested_metrics or body.push_interval_ms != DEFAULT_INTERVAL_MS:
        # Either a subscription matching every client is left on the target (the model cannot
        # know it), or the target breaks §C.2 step 4; the sessions' first Get will differ.
        check.note(
            f"a client no subscription of this case matches is asked for "
            f"{list(body.requested_metrics)} every {body.push_interval_ms} ms: a subscription "
            "matching every client exists on the target, or it breaks §C.2 step 4"
        )
    return int(body.telemetry_max_bytes)


@case(
    "fuzz.stateful.telemetry",
    rules=[
        "kip714.push.terminating.once",  # first: the MUST rule Apache is known to break
        "kip714.push.terminating.per_subscription",
        "kip714.get.metrics.all",
        *(r for r in ORACLE_RULES if r != "kip714.push.terminating.once"),
    ],
    title="Random client sessions (Get, Push, subscription changes, reconnects, waits) get the "
    "answers the reference model gives",
    spec="KIP-714 'Throttling and rate-limiting', 'Client termination', 'SubscriptionId', "
    "'Error handling', 'Client metrics configuration'; §C.2-C.4, D; rulings 1-5, 11",
    level=Level.MUST,
    requires=[Capability.TELEMETRY, Capability.CLIENT_METRICS_ADMIN],
)
async def test_telemetry_sessions(
    target: BrokerTarget, check: Check, request: pytest.FixtureRequest
) -> None:
    await asyncio.to_thread(target.check_alive)
    limits = budget.limits(
        "stateful", request.config.getoption("--kconform-profile"), *fuzz_cases(request)
    )
    session = FuzzSession(check, limits)
    world = World(session, target.brokers[0], await probe(check), check.unique("fz"))

    def machine() -> TelemetryMachine:
        return TelemetryMachine(world)

    if budget.seed() is not None:
        machine = seed(budget.seed())(machine)
    settings = session.settings(steps=limits.steps)
    # A factory function is fine ("anything which returns an instance", Hypothesis' docs); the
    # stub says type[...], hence the cast.
    factory = cast("type[TelemetryMachine]", machine)
    try:
        await session.run(lambda: run_state_machine_as_test(factory, settings=settings))
    finally:
        with contextlib.suppress(Exception):
            await world.close()
    check.observe("steps near an interval boundary (both answers accepted)", world.ambiguous_steps)
    check.observe(
        "differences rulings accept (SHOULD/INFO, not failures)", sorted(set(world.divergences))
    )
    delays = sorted(world.propagation_ms)
    check.observe("subscription changes waited for", len(delays))
    if delays:
        check.observe(
            "subscription change visible after (ms): median, max",
            [delays[len(delays) // 2], delays[-1]],
        )
    session.conclude(RULE, EXPECTED)
