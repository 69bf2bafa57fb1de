"""The worker pool at the scale where the coordinator and a worker once deadlocked: each blocked
sending to the other over full pipes (commands down, event batches up). Commands now go down
from a thread per worker while the loop keeps reading events, so 40,000 clients dealt in 800
commands of 50 reach the workers and every client's events come back. (With the commands sent
from the loop, as before, this test hangs: checked.)

The clients start an hour from now (they only wait), so the test measures the pipes, not a
broker; the port they would connect to is closed.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from kconform.soak.client import Event
from kconform.soak.fleet import FleetConfig
from kconform.soak.pool import WorkerPool

CLIENTS = 40_000


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_forty_thousand_clients_dealt_to_workers_without_deadlock(workers: int) -> None:
    events: list[Event] = []

    async def main() -> float:
        config = FleetConfig({1: ("127.0.0.1", closed_port())}, seed=1, tag="kcsoak-pool")
        pool = WorkerPool(config, workers, events.extend)
        pool.start(stop_timeout=10.0)
        began = time.monotonic()
        later = time.time() + 3600
        for at in range(0, CLIENTS, 50):
            pool.add(list(range(at, at + 50)), start_at=later)
        while sum(e.detail == "started" for e in events) < CLIENTS:
            assert time.monotonic() - began < 90, "the pool stalled (a deadlock?)"
            await asyncio.sleep(0.2)
        await pool.stop(10.0)
        assert not pool.notes, pool.notes  # every worker stopped when told, none killed
        return time.monotonic() - began

    took: list[float] = []
    # a deadlocked loop cannot fail an assertion: the test watches it from outside
    runner = threading.Thread(target=lambda: took.append(asyncio.run(main())), daemon=True)
    runner.start()
    runner.join(120)
    assert not runner.is_alive(), "the coordinator's loop is stuck (a deadlock)"
    assert took, "the pool failed (see the thread's traceback above)"
    started = {e.client for e in events if e.detail == "started"}
    assert started == set(range(CLIENTS)), len(started)
    assert took[0] < 90
