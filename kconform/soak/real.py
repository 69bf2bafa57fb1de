"""Real clients in the fleet (`--real-clients confluent-kafka:20,java:4.1.0:5`).

Each runs through its driver (`fixtures/clients`, the same contract the client suites use),
producing real records to a topic of the run for the whole soak, with `enable.metrics.push` on
and a client.id the fleet's subscription matches (so it gets the same PushIntervalMs). What the
soak knows of them: their driver events (records delivered, errors, a clean close) and every
push of theirs the brokers' sinks received, from which the longest gap between two of their
pushes (a real client locked out shows as a gap of many intervals).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kconform.errors import UsageError
from kconform.fixtures.targets.base import BrokerTarget, Capability

RATE = 5.0  # records per second per real client


@dataclass
class RealRun:
    label: str
    client_id: str
    run: Any  # fixtures.clients.ClientRun


def parse_real_clients(text: str) -> list[tuple[str, int]]:
    """`confluent-kafka:20,java:4.1.0:5` -> [("confluent-kafka", 20), ("java:4.1.0", 5)]."""
    out = []
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, sep, count = entry.rpartition(":")
        if not sep or not count.isdigit() or not name:
            raise UsageError(f"--real-clients {entry!r}: expected NAME:COUNT, e.g. java:4.1.0:5")
        out.append((name, int(count)))
    return out


async def start_real_clients(
    text: str, target: BrokerTarget, tag: str, seconds: float
) -> tuple[list[RealRun], list[str]]:
    """Start every requested real client; notes say which could not run and why."""
    from kconform.fixtures.clients import Scenario, create_driver, parse_clients

    notes: list[str] = []
    topic = f"{tag}-real"
    if target.has(Capability.TOPIC_ADMIN):
        await asyncio.to_thread(target.create_topic, topic, 3)
    runs: list[RealRun] = []
    for name, count in parse_real_clients(text):
        (spec,) = parse_clients(name)
        driver = create_driver(spec)
        reason = driver.unavailable_reason()
        if reason:
            notes.append(f"real client {name} unavailable: {reason}")
            continue
        for i in range(count):
            client_id = f"{tag}-real-{spec.kind}-{i}"
            config = {"client.id": client_id, "enable.metrics.push": "true"}
            scenario = Scenario.produce(topic, rate=RATE, seconds=seconds)
            run = await driver.start(target.bootstrap, config, scenario)
            runs.append(RealRun(spec.label, client_id, run))
    return runs, notes


async def finish_real_clients(
    runs: Sequence[RealRun], pushes: dict[str, list[float]] | None = None, interval_s: float = 0.0
) -> list[dict[str, Any]]:
    """Stop (if still running) and summarise every real client."""
    out = []
    for real in runs:
        with contextlib.suppress(Exception):
            await real.run.wait(15.0)  # its scenario ends with the soak; stopped if it overruns
        events = real.run.events
        seen = sorted((pushes or {}).get(real.client_id, []))
        gaps = [b - a for a, b in itertools.pairwise(seen)]
        out.append(
            {
                "client": real.label,
                "client_id": real.client_id,
                "delivered": sum(1 for e in events if e.event == "delivered"),
                "errors": sum(1 for e in events if e.event == "error"),
                "closed": any(e.event == "closed" for e in events),
                "returncode": real.run.returncode,
                "pushes_at_sink": len(seen),
                "longest_gap_s": round(max(gaps, default=0.0), 1),
                "longest_gap_intervals": round(max(gaps, default=0.0) / interval_s, 2)
                if interval_s
                else None,
            }
        )
    return out
