"""Request fuzzing: unusual and malformed requests never hang or kill a broker.

For ApiVersions, GetTelemetrySubscriptions, PushTelemetry and the config APIs, Hypothesis draws
requests from the codec's declarations (`inputs.py`): well-formed ones with unusual values, and
malformed ones. Each goes out on its own connection; the oracle (`oracle.py`) wants a decodable
answer with defined error codes or a close, within the timeout, and then a plain ApiVersions
answered on a new connection. A target that dies or hangs fails the case with the shrunk input,
described field by field and in hex, and the input joins the regression corpus.

Spec: SPEC rulings 11 ("a broker must answer (not crash or close) either way") and 12 ("the
broker staying healthy and answering later requests is MUST"); SPEC B.2/B.4 (unsupported
versions and unknown api keys: the v0 fallback, or the connection closed).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import example, given, seed

from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.check import Check
from kconform.suites.fuzz import budget, corpus, inputs, mutations, oracle
from kconform.suites.fuzz.engine import Arena, Finding, FuzzSession, fuzz_cases, guarded
from kconform.suites.fuzz.inputs import FuzzRequest
from kconform.suites.model import Level, case

REQUEST_TIMEOUT = 3.0
"""Seconds a target may take to answer or close; longer is a hang."""
SPEC = (
    "SPEC rulings 11 and 12 (answer, do not crash; stay healthy); SPEC B.2/B.4 (unsupported "
    "versions and unknown api keys: v0 fallback or close)"
)
RULE = "every request answered decodably (defined ErrorCode) or closed; target alive after each"
EXPECTED = (
    f"a decodable answer with defined error codes, or the connection closed, within "
    f"{REQUEST_TIMEOUT:.0f}s; then ApiVersions answered on a new connection"
)
TITLES = {
    "api_versions": "ApiVersions",
    "get_telemetry": "GetTelemetrySubscriptions",
    "push_telemetry": "PushTelemetry",
    "configs": "DescribeConfigs/AlterConfigs/IncrementalAlterConfigs/ListConfigResources",
}
REQUIRES: dict[str, tuple[Capability, ...]] = {
    "api_versions": (),
    "get_telemetry": (Capability.TELEMETRY,),
    "push_telemetry": (Capability.TELEMETRY,),
    "configs": (Capability.CLIENT_METRICS_ADMIN,),
}


# Fuzzing may kill a fragile target (it aborts the librdkafka mock): after every other case.
pytestmark = pytest.mark.kconform_disruptive


async def fuzz_requests(
    target: BrokerTarget, check: Check, request: pytest.FixtureRequest, group: str, broken: bool
) -> None:
    """Run the group's requests through the oracle under Hypothesis (see the module)."""
    await asyncio.to_thread(target.check_alive)  # a target that died earlier: error, not fail
    profile = request.config.getoption("--kconform-profile")
    session = FuzzSession(check, budget.limits("request", profile, *fuzz_cases(request)))
    arena = Arena(target)

    @guarded
    def one(fuzz: FuzzRequest) -> None:
        session.begin_example()
        broker = arena.broker()
        exchange = oracle.exchange(broker, fuzz, REQUEST_TIMEOUT, session.log, "fuzz")
        outcome = session.io(exchange, REQUEST_TIMEOUT)
        liveness = session.io(oracle.alive(broker, REQUEST_TIMEOUT, session.log), REQUEST_TIMEOUT)
        session.count(outcome.shape)
        problem, death = outcome.problem, None
        if liveness is not None:
            death = arena.death()
            arena.died(death or liveness)
        if problem is None and liveness is None:
            return
        what = f"{outcome.kind}: {outcome.detail}"
        if liveness is not None:
            what = "the target died" if death else "the target stopped answering"
        session.found(
            Finding(
                summary=f"{what} after {fuzz.description[:400]}",
                report=report(check, arena, fuzz, outcome, liveness, death, what),
                size=len(fuzz.frame()),
                replay=fuzz.to_replay(),
            )
        )
        raise AssertionError(what)

    strategy = mutations.malformed(group) if broken else inputs.well_formed(group)
    test: Any = given(strategy)(one)
    for replay in corpus.replays(session.root, check.info.id):
        test = example(FuzzRequest.from_replay(replay))(test)
    test = session.settings()(test)
    if budget.seed() is not None:
        test = seed(budget.seed())(test)
    try:
        await session.run(test)
    finally:
        await asyncio.to_thread(arena.close)
    if arena.respawns:
        check.note(f"shrunk on {arena.respawns} fresh instance(s) of {target.name} after it died")
    session.conclude(RULE, EXPECTED)


def report(
    check: Check,
    arena: Arena,
    fuzz: FuzzRequest,
    outcome: oracle.Outcome,
    liveness: str | None,
    death: str | None,
    what: str,
) -> str:
    """The bug report of one failing input: readable first, bytes last."""
    size = "correct" if fuzz.size is None else f"{fuzz.size} (wrong)"
    lines = [
        f"{check.info.id} on {arena.shared.name}: {what}",
        f"  request:  {fuzz.description}",
        f"  frame:    {len(fuzz.frame())} bytes, size prefix {size}"
        + (", then EOF (half-close)" if fuzz.eof else ", connection kept open"),
        f"  answer:   {outcome.kind}: {outcome.detail}",
        f"  liveness: {liveness or 'ApiVersions v0 answered on a new connection'}",
    ]
    if death:
        lines.append(f"  target:   {death}")
    lines.append(f"  hex:      {fuzz.hex(4096)}")
    return "\n".join(lines)


def _request_case(group: str, broken: bool) -> Any:
    kind = "malformed" if broken else "well_formed"
    title = (
        f"Malformed {TITLES[group]} requests (bit flips, truncation, wrong size prefixes, "
        f"versions and api keys, garbage tags) never hang or kill the target"
        if broken
        else f"{TITLES[group]} requests with unusual values (every version, extreme lengths, "
        f"empty/huge arrays, odd UUIDs) are answered or closed, and the target stays alive"
    )

    @case(
        f"fuzz.request.{group}.{kind}",
        title=title,
        spec=SPEC,
        level=Level.MUST,
        requires=REQUIRES[group],
    )
    async def test(target: BrokerTarget, check: Check, request: pytest.FixtureRequest) -> None:
        await fuzz_requests(target, check, request, group, broken)

    test.__name__ = f"test_{group}_{kind}"
    return test


# Order matters on a target that crashes: what cannot kill it runs first.
for _group in ("api_versions", "configs", "get_telemetry", "push_telemetry"):
    for _broken in (False, True):
        _test = _request_case(_group, _broken)
        globals()[_test.__name__] = _test
