"""KIP-714 client handshake over a client's life: 71/72 withdrawn by a broker, then advertised
again (issue 31: "71/72 no longer advertised and then advertised again").

Spec: KIP-714 "Receiving broker behavior" ("We allow clients to send the
GetTelemetrySubscriptions and PushTelemetry requests to any connected broker that reports support
for both these APIs in its ApiVersionResponse"; "clients will not attempt to push metrics to
brokers that are not capable of receiving them"), judged per connection: what a connection's own
ApiVersions answer said is what that broker supports now. When the broker comes back with them,
the KIP is silent; ruling 19 asks for telemetry again within ruling 17's bound.

The scenario, on the reference target with a scripted telemetry broker: a producer pushes every
WITHDRAWN_INTERVAL_MS; right after its first push is answered the proxy drops all its connections
and answers ApiVersions on the new ones without 71/72 (a broker rolled without its metrics
reporter); WITHDRAWN_INTERVALS intervals later it drops them again and advertises 71/72 again.
Producing keeps the client reconnecting (a client only reconnects when it needs a connection).
A client that comes back ends the window at once; one that waits (the Java client's
DEFAULT_PUSH_INTERVAL_MS, 300 s) is held up to the bound.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import pytest

from kconform.engine.check import Check, present
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver
from kconform.fixtures.proxy.injections import Injection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import (
    POLL,
    TELEMETRY,
    Recording,
    for_client,
    lag_text,
    run_while,
    shared_run,
)
from kconform.suites.client.scripted import ScriptedTelemetry, without_telemetry_keys
from kconform.suites.client.timing import RESUME_SLACK, resume_within
from kconform.suites.client.traffic import API_VERSIONS, Exchange, Traffic
from kconform.suites.client.traffic import TELEMETRY as TELEMETRY_KEYS

WITHDRAWN_INTERVAL_MS = 1000
WITHDRAWN_INTERVALS = 3  # intervals the broker goes without 71/72: each a push the client skips
RESUME_WITHIN = resume_within(WITHDRAWN_INTERVAL_MS)  # ruling 19: ruling 17's bound
ANSWER_LEFT = 0.1  # seconds after a push is answered before its connections drop: none in flight
WAITS_THE_BOUND = pytest.mark.kconform_timeout(RESUME_WITHIN + 150)
"""A client that waits out the bound (the Java client) holds the case past --case-timeout's 120 s:
its start (30 s), a first push, the withdrawal, the bound and slack, its close (30 s)."""
RECIPE = "readvertised"
BEHAVIOR = "KIP-714 Receiving broker behavior"


@dataclass
class Lifecycle:
    """When the proxy withdrew 71/72 and advertised them again (monotonic), and the client."""

    client_id: str = ""
    withdrawn: float | None = None
    readvertised: float | None = None
    telemetry_at_readvertising: int = 0

    @property
    def withholding(self) -> bool:
        return self.withdrawn is not None and self.readvertised is None


async def _direct(scripted: ScriptedTelemetry, life: Lifecycle, target: BrokerTarget) -> None:
    """Withdraw 71/72 right after the first push is answered, advertise them again
    WITHDRAWN_INTERVALS later; each time every connection of the client is dropped, as a
    broker restarted with the other configuration drops them."""
    proxy = target.proxy  # type: ignore[attr-defined]
    while scripted.pushes < 1 or not life.client_id:
        await asyncio.sleep(POLL)
    await asyncio.sleep(ANSWER_LEFT)
    life.withdrawn = time.monotonic()
    proxy.drop_connections(life.client_id, "dropped: the broker restarts without 71/72")
    await asyncio.sleep(WITHDRAWN_INTERVALS * WITHDRAWN_INTERVAL_MS / 1000)
    life.telemetry_at_readvertising = scripted.gets + scripted.pushes
    life.readvertised = time.monotonic()
    proxy.drop_connections(life.client_id, "dropped: the broker restarts with 71/72 again")


async def _record(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    scripted = ScriptedTelemetry(WITHDRAWN_INTERVAL_MS)
    life = Lifecycle()

    def injections(client_id: str) -> list[Injection]:
        life.client_id = client_id
        return [for_client(client_id, API_VERSIONS, replace_body=without_telemetry_keys,
                           predicate=lambda _: life.withholding,
                           name="ApiVersions without keys 71/72 while withdrawn")]  # fmt: skip

    def resumed() -> bool:
        return life.readvertised is not None and (
            scripted.gets + scripted.pushes > life.telemetry_at_readvertising
        )

    window = (1.5 + WITHDRAWN_INTERVALS) * WITHDRAWN_INTERVAL_MS / 1000 + RESUME_WITHIN
    recording = await run_while(
        check, client, target, _direct(scripted, life, target),
        window + 2 * RESUME_SLACK, scripted=scripted, injections=injections, until=resumed,
    )  # fmt: skip
    recording.derived[RECIPE] = life
    return recording


async def _readvertised_run(
    check: Check, client: ClientDriver, target: BrokerTarget
) -> tuple[Recording, Lifecycle]:
    recording = await shared_run(
        check, client, target, RECIPE, lambda: _record(check, client, target)
    )
    life: Lifecycle = recording.derived[RECIPE]
    check.observe(
        "the broker's 71/72",
        "withdrawn: never (the client did not push)" if life.withdrawn is None else
        f"withdrawn at {life.withdrawn:.3f}, advertised again at "
        f"{life.readvertised:.3f}" if life.readvertised is not None else
        f"withdrawn at {life.withdrawn:.3f}, never advertised again (the window ended)",
    )  # fmt: skip
    check.precondition(
        "a push of the client answered before 71/72 were withdrawn",
        ">= 1", len(recording.traffic.pushes), ok=life.withdrawn is not None,
    )  # fmt: skip
    return recording, life


def _advertised(exchange: Exchange) -> bool | None:
    """Whether an ApiVersions answer listed both 71 and 72 (None: no usable answer)."""
    body = exchange.response
    if exchange.api_key != API_VERSIONS or body is None or body.error_code != 0:
        return None
    return {k.api_key for k in body.api_keys} >= set(TELEMETRY_KEYS)


def _connection_advertisement(traffic: Traffic) -> list[tuple[Exchange, bool | None]]:
    """Each telemetry request with what its own connection's latest ApiVersions answer before it
    said of 71/72 (None: the connection had no usable answer)."""
    latest: dict[str, bool | None] = {}
    judged = []
    for exchange in traffic.exchanges:
        if exchange.api_key == API_VERSIONS:
            said = _advertised(exchange)
            if said is not None:
                latest[exchange.connection] = said
        elif exchange.api_key in TELEMETRY_KEYS:
            judged.append((exchange, latest.get(exchange.connection)))
    return judged


@WAITS_THE_BOUND
@case(
    "kip714.client.handshake.withdrawn",
    rules=["kip714.client.handshake.advertised_only"],
    title="No Get/Push on a connection whose ApiVersions no longer list 71/72",
    spec=f"{BEHAVIOR} ('to any connected broker that reports support for both these APIs in its "
    "ApiVersionResponse'; 'clients will not attempt to push metrics to brokers that are not "
    f"capable of receiving them'); the broker drops the client's connections after its first "
    f"push and answers ApiVersions without 71/72 for {WITHDRAWN_INTERVALS} x PushIntervalMs "
    f"{WITHDRAWN_INTERVAL_MS}",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
    shares=RECIPE,
)
async def test_withdrawn(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
    recording, life = await _readvertised_run(check, client, client_target)
    traffic = recording.traffic
    unadvertised = [e for e in traffic.of(API_VERSIONS)
                    if _advertised(e) is False and e.sent > (life.withdrawn or 0)]  # fmt: skip
    check.observe(
        "the client's connections whose ApiVersions lacked 71/72",
        list(dict.fromkeys(e.connection.split()[0] for e in unadvertised)),
    )
    check.precondition(
        "a connection of the client answered ApiVersions without 71/72 (it reconnected while "
        "they were withdrawn)",
        ">= 1", 0, ok=bool(unadvertised),
    )  # fmt: skip
    judged = _connection_advertisement(traffic)
    unknown = [str(e) for e, said in judged if said is None]
    if unknown:
        check.note(f"telemetry on connections without an ApiVersions answer: {unknown[:5]}")
    check.expect(
        "Get/Push requests on connections whose ApiVersions answer lacked 71/72",
        [], [str(e) for e, said in judged if said is False][:10],
    )  # fmt: skip


@WAITS_THE_BOUND
@case(
    "kip714.client.handshake.readvertised",
    rules=["kip714.client.handshake.readvertised_resumes"],
    title="Telemetry resumes once a broker advertises 71/72 again",
    spec=f"{BEHAVIOR} (telemetry to 'any connected broker that reports support'); ruling 19; "
    f"71/72 withdrawn for {WITHDRAWN_INTERVALS} x PushIntervalMs {WITHDRAWN_INTERVAL_MS}, then "
    f"advertised again: a Get or Push within {RESUME_WITHIN:g} s (+ {RESUME_SLACK:g} s) of the "
    "first ApiVersions answer that lists them again",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
    shares=RECIPE,
)
async def test_readvertised(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording, life = await _readvertised_run(check, client, client_target)
    traffic = recording.traffic
    since = life.readvertised
    check.precondition(
        "71/72 advertised again within the client's window",
        "yes", "no (the window ended first)", ok=since is not None,
    )  # fmt: skip
    since = present(since, "the time 71/72 came back, found above")
    again = [e for e in traffic.of(API_VERSIONS)
             if e.sent > since and _advertised(e) and e.answered is not None]  # fmt: skip
    check.precondition(
        "a connection of the client answered ApiVersions with 71/72 after they came back",
        ">= 1", 0, ok=bool(again),
    )  # fmt: skip
    first = min(again, key=lambda e: e.answered or 0.0)
    learned = first.answered or 0.0
    check.observe("first ApiVersions answer listing 71/72 again", f"{first}, answered at "
                  f"{learned:.3f}")  # fmt: skip
    closing = recording.event_time("closing")
    after = [e for e in traffic.after(learned, *TELEMETRY_KEYS)
             if not e.terminating and (closing is None or e.sent < closing)]  # fmt: skip
    delay = None if not after else round(after[0].sent - learned, 3)
    check.observe("next telemetry request", f"{after[0]} after {delay} s" if after else "none")
    bound = round(RESUME_WITHIN + RESUME_SLACK + recording.harness_lag, 3)
    check.expect(
        f"a Get or Push within {bound:g} s of 71/72 advertised again{lag_text(recording)}",
        f"<= {bound:g}", delay, delay is not None and delay <= bound,
    )  # fmt: skip
