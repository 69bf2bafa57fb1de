"""KIP-714 client telemetry when the broker it uses moves to a new address (issue 31, KAFKA-20393).

Spec: KIP-714 "Connection selection" (a client keeps its telemetry connection "until the
connection goes down, at which time it may choose to reconnect and continue using the same
broker, or switch over to another broker connection"); ruling 21: the same broker is where the
latest Metadata says it is, so once told a broker's new address a client opens no connection to
its old one.

The scenario, on the reference target with a scripted telemetry broker: an idle producer pushes
every MOVED_INTERVAL_MS (idle, so nothing but telemetry needs the moved broker again); right
after its first push is answered, the proxy moves that push's broker to a new listener and drops
the client's connections to it, as a broker that comes back on a new IP does. The old listener
keeps accepting, serves nothing and logs whoever connects (`fixtures.proxy.listeners`). The Java
client 3.7.0-4.2.0 and 4.3.x keep the broker's Node object they picked for telemetry and
reconnect to its old address at their next push (NetworkClient.TelemetrySender); 4.2.1 and 4.4.0
check the Node against Metadata first.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from kconform.engine.check import Check, present
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.proxy.injections import Injection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.types import BrokerAddress
from kconform.fixtures.wirelog import WireLog
from kconform.suites.client.helpers import POLL, TELEMETRY, run_client
from kconform.suites.client.scripted import ScriptedTelemetry
from kconform.suites.client.traffic import EVIDENCE_KEYS, METADATA, Exchange, Traffic, collect
from kconform.suites.client.traffic import TELEMETRY as TELEMETRY_KEYS

MOVED_INTERVAL_MS = 1000
PUSHES_AFTER = 3  # pushes after the move that end the window early: the next ones go alike
WINDOW = 1.5 * MOVED_INTERVAL_MS / 1000 + 12.0
"""Seconds from the client's first request: its first push (at most 1.5 intervals), then room
for a Metadata refresh and several pushes after the move."""
ANSWER_LEFT = 0.1  # seconds after the first push is answered before the broker moves
GRACE = 0.25
"""Seconds from the Metadata answer that gave the new address to the client acting on it: a
connection to the old address that began before then is not counted."""


@dataclass
class Move:
    """Which broker the proxy moved, from where to where, and when (monotonic)."""

    old: BrokerAddress | None = None
    new: BrokerAddress | None = None
    at: float | None = None


async def _move_telemetry_broker(
    scripted: ScriptedTelemetry, move: Move, target: BrokerTarget, log: WireLog, mark: int,
    client_id: list[str],
) -> None:  # fmt: skip
    """Once the first push is answered, move the broker it went to and drop the client's
    connections to it."""
    proxy = target.proxy  # type: ignore[attr-defined]
    while scripted.pushes < 1 or not client_id:
        await asyncio.sleep(POLL)
    await asyncio.sleep(ANSWER_LEFT)
    pushes = collect(log.since(mark), client_id[0]).pushes
    node = pushes[0].broker if pushes else None
    if node is None:
        return
    move.old, move.new = await proxy.move_node(node)
    move.at = time.monotonic()
    proxy.drop_connections(client_id[0], f"dropped: broker {node} moved to {move.new}", node)


def _told_at(traffic: Traffic, new: BrokerAddress, moved_at: float) -> Exchange | None:
    """The first Metadata answer after the move that gave the moved broker its new address."""
    for exchange in traffic.after(moved_at, METADATA):
        body = exchange.response
        if body is None or exchange.answered is None:
            continue
        if any(b.node_id == new.node_id and b.port == new.port for b in body.brokers):
            return exchange
    return None


def _old_address_connections(traffic: Traffic, old: BrokerAddress) -> list[tuple[str, float]]:
    """(connection, when accepted) for each of the client's connections to the old address."""
    marker = f"at its old address {old}"
    accepted: dict[str, float] = {}
    for entry in traffic.entries:
        if marker in entry.connection:
            accepted.setdefault(entry.connection, entry.monotonic)
    return list(accepted.items())


@case(
    "kip714.client.follows_metadata",
    rules=["kip714.client.follows_metadata"],
    title="Once told its telemetry broker's new address, a client never connects to the old one",
    spec="KIP-714 Connection selection ('at which time it may choose to reconnect and continue "
    "using the same broker'); ruling 21; an idle producer, PushIntervalMs "
    f"{MOVED_INTERVAL_MS}; after its first push the broker it pushed to moves to a new "
    "listener, its connections to it are dropped, and the old address serves nothing",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_follows_metadata(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    scripted = ScriptedTelemetry(MOVED_INTERVAL_MS)
    move = Move()
    client_id: list[str] = []
    log: WireLog = client_target.wire_log  # type: ignore[attr-defined]
    director = asyncio.create_task(
        _move_telemetry_broker(scripted, move, client_target, log, log.mark(), client_id)
    )

    def pushed_after() -> bool:
        return move.at is not None and scripted.pushes > PUSHES_AFTER

    def injections(cid: str) -> list[Injection]:
        client_id.append(cid)
        return []

    try:
        recording = await run_client(
            check, client, client_target, Scenario.idle(seconds=WINDOW), scripted=scripted,
            injections=injections, until=pushed_after,
            shown=(METADATA, *EVIDENCE_KEYS),  # the Metadata answer that told it is evidence
        )  # fmt: skip
    finally:
        director.cancel()
        await asyncio.gather(director, return_exceptions=True)
        if move.old is not None:
            await client_target.proxy.restore_node(move.old.node_id)  # type: ignore[attr-defined]
    _judge(check, recording.traffic, move)


def _judge(check: Check, traffic: Traffic, move: Move) -> None:
    check.precondition(
        "a push of the client answered, and its broker moved", "moved",
        "the client pushed nothing" if move.at is None else f"moved at {move.at:.3f}",
        ok=move.at is not None,
    )  # fmt: skip
    moved_at = present(move.at, "when the broker moved")
    old = present(move.old, "the moved broker's old address")
    new = present(move.new, "the moved broker's new address")
    check.observe("the move", f"broker {old.node_id}: {old} -> {new}")
    told = _told_at(traffic, new, moved_at)
    check.precondition(
        f"a Metadata answer to the client giving broker {new.node_id} its new address",
        "received", "none: the client asked for no Metadata after the move" if told is None
        else f"{told} answered at {told.answered:.3f}", ok=told is not None,
    )  # fmt: skip
    answered = present(present(told, "the Metadata answer").answered, "its answer's time")
    check.observe(
        "the Metadata answer that gave the new address",
        f"{told} answered at {answered:.3f}, {answered - moved_at:.3f} s after the move",
    )
    since = answered + GRACE
    after = traffic.after(since, *TELEMETRY_KEYS)
    check.observe(
        "telemetry after the client was told",
        [f"{e} -> {'answered' if e.answered else 'no answer'}" for e in after[:6]] or "none",
    )
    stale = _old_address_connections(traffic, old)
    check.observe(
        "connections to the old address before the client was told (not judged)",
        [f"{c.split()[0]} at {t:.3f}" for c, t in stale if t < since] or "none",
    )
    check.expect(
        f"connections to broker {old.node_id}'s old address {old} accepted more than "
        f"{GRACE:g} s after the Metadata answer that gave its new one",
        [], [f"{c.split()[0]} at {t:.3f} (+{t - answered:.3f} s)" for c, t in stale
             if t >= since],
    )  # fmt: skip
