"""KIP-714 client error handling when a broker restarts: every connection dropped, new ones
refused for longer than one interval, then served again (issue 31: "a broker restarted").

Spec: KIP-714 "Connection selection" (the client keeps its telemetry connection "until the
connection goes down, at which time it may choose to reconnect and continue using the same
broker, or switch over to another broker connection"); ruling 17: telemetry again within the
longer of 5 minutes and three PushIntervalMs. The lost-push cases (test_errors_transport.py)
lose one request and let the reconnection succeed; here nothing succeeds for DOWN_INTERVALS
intervals, so a client whose reconnection attempts fail in the meantime must still come back.

The reference drops the client's connections right after its first push is answered (none in
flight: losing a push is the lost-push cases' business) and, while down, closes any connection
of the client at its first request, unanswered, as the restartable reference target does (a
refused connect and one closed before its ApiVersions answer both leave the client without a
broker; the proxy keeps listening, so the client sees the second). Producing keeps the client
reconnecting.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import pytest

from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver
from kconform.fixtures.proxy.injections import Injection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import POLL, TELEMETRY, for_client, lag_text, run_while
from kconform.suites.client.scripted import ScriptedTelemetry
from kconform.suites.client.timing import RESUME_SLACK, resume_within
from kconform.suites.client.traffic import TELEMETRY as TELEMETRY_KEYS

RESTART_INTERVAL_MS = 1000
DOWN_INTERVALS = 3  # longer than one interval: a push falls due while the broker is down
RESUME_WITHIN = resume_within(RESTART_INTERVAL_MS)
ANSWER_LEFT = 0.1  # seconds after a push is answered before the broker goes down: none in flight
WAITS_THE_BOUND = pytest.mark.kconform_timeout(RESUME_WITHIN + 150)
"""A client that never comes back holds the case to the bound, past --case-timeout's 120 s."""


@dataclass
class Restart:
    """When the broker went down and came back (monotonic), and the client it restarts for."""

    client_id: str = ""
    down: float | None = None
    up: float | None = None
    telemetry_at_up: int = 0

    @property
    def refusing(self) -> bool:
        return self.down is not None and self.up is None


async def _restart(scripted: ScriptedTelemetry, restart: Restart, target: BrokerTarget) -> None:
    proxy = target.proxy  # type: ignore[attr-defined]
    while scripted.pushes < 1 or not restart.client_id:
        await asyncio.sleep(POLL)
    await asyncio.sleep(ANSWER_LEFT)
    restart.down = time.monotonic()
    proxy.drop_connections(restart.client_id, "dropped: the broker goes down")
    await asyncio.sleep(DOWN_INTERVALS * RESTART_INTERVAL_MS / 1000)
    restart.telemetry_at_up = scripted.gets + scripted.pushes
    restart.up = time.monotonic()


@WAITS_THE_BOUND
@case(
    "kip714.client.errors.broker_restarted",
    rules=["kip714.client.errors.transient_recovers"],
    title="A broker restart (connections dropped, new ones refused a while) does not end the "
    "client's telemetry",
    spec="KIP-714 Connection selection ('until the connection goes down, at which time it may "
    "choose to reconnect and continue'); ruling 17; the reference drops the client's "
    f"connections after its first push and closes every new one for {DOWN_INTERVALS} x "
    f"PushIntervalMs {RESTART_INTERVAL_MS}; a Get or Push within {RESUME_WITHIN:g} s "
    f"(+ {RESUME_SLACK:g} s) of the broker serving again",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_broker_restarted(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    scripted = ScriptedTelemetry(RESTART_INTERVAL_MS)
    restart = Restart()

    def injections(client_id: str) -> list[Injection]:
        restart.client_id = client_id
        return [for_client(client_id, close=True, predicate=lambda _: restart.refusing,
                           name="the broker is down: closed unanswered")]  # fmt: skip

    def resumed() -> bool:
        return restart.up is not None and (
            scripted.gets + scripted.pushes > restart.telemetry_at_up
        )

    window = (1.5 + DOWN_INTERVALS) * RESTART_INTERVAL_MS / 1000 + RESUME_WITHIN
    recording = await run_while(
        check, client, client_target, _restart(scripted, restart, client_target),
        window + 2 * RESUME_SLACK, scripted=scripted, injections=injections, until=resumed,
    )  # fmt: skip
    traffic = recording.traffic
    check.precondition(
        "a push of the client answered before the broker went down",
        ">= 1", len(traffic.pushes), ok=restart.down is not None,
    )  # fmt: skip
    check.precondition(
        "the broker served again within the client's window",
        "yes", "no (the window ended first)", ok=restart.up is not None,
    )  # fmt: skip
    down, up = restart.down or 0.0, restart.up or 0.0
    refused = [e for e in traffic.exchanges if down < e.sent < up]
    check.observe(
        "the restart",
        f"down at {down:.3f}, up at {up:.3f}; {len(refused)} requests of the client closed "
        f"unanswered meanwhile, on {len({e.connection for e in refused})} connections",
    )
    closing = recording.event_time("closing")
    after = [e for e in traffic.after(up, *TELEMETRY_KEYS)
             if not e.terminating and (closing is None or e.sent < closing)]  # fmt: skip
    delay = None if not after else round(after[0].sent - up, 3)
    check.observe("next telemetry request", f"{after[0]} after {delay} s" if after else "none")
    bound = round(RESUME_WITHIN + RESUME_SLACK + recording.harness_lag, 3)
    check.expect(
        f"a Get or Push within {bound:g} s of the broker serving again{lag_text(recording)}",
        f"<= {bound:g}", delay, delay is not None and delay <= bound,
    )  # fmt: skip
