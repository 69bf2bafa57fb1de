"""Where the fleet runs: on the coordinator's loop (`LocalFleet`) or in worker processes
(`WorkerPool`, `--workers N`). Both take the same commands; events come back through
`on_events` on the coordinator's loop either way.

Workers are `spawn`ed daemon processes, each with a pipe: event batches come up (read with
`add_reader` on the loop), commands go down from a sender thread per worker, so that the loop
never blocks on a full pipe while the worker blocks sending events to it (a deadlock at scale).
A worker stops when told to, when its pipe closes (the coordinator ended, normally or not:
then at once), and with the coordinator's death (PR_SET_PDEATHSIG on Linux), and is killed if
it does not stop in time: nothing outlives the run. Clients are dealt to workers by index.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import queue
import threading
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from typing import Any

from kconform.soak.client import Event
from kconform.soak.fleet import STOP_SPREAD, Fleet, FleetConfig, worker_main

OnEvents = Callable[[list[Event]], None]


class LocalFleet:
    """The fleet on the coordinator's own event loop (the default: up to a few thousand)."""

    def __init__(self, config: FleetConfig, on_events: OnEvents) -> None:
        self.fleet = Fleet(config, on_events)
        self.notes: list[str] = []

    def start(self) -> None:
        self.fleet.start()

    def add(self, indices: list[int], start_at: float | None = None) -> None:
        self.fleet.add(indices, start_at=start_at)

    def close(self, indices: list[int], kill: bool) -> None:
        self.fleet.close(indices, kill=kill)

    def move(self, indices: list[int]) -> None:
        self.fleet.move(indices)

    async def stop(self, timeout: float) -> None:
        await self.fleet.stop(timeout, STOP_SPREAD)


class WorkerPool:
    """`workers` processes, each running a `Fleet` (module docstring)."""

    def __init__(self, config: FleetConfig, workers: int, on_events: OnEvents) -> None:
        self.config = config
        self.count = workers
        self.on_events = on_events
        self.notes: list[str] = []
        self._processes: list[Any] = []
        self._pipes: list[Connection] = []
        self._stopped: set[int] = set()
        self._all_stopped: asyncio.Event | None = None
        self._outboxes: list[queue.SimpleQueue[tuple[Any, ...] | None]] = []
        self._senders: list[threading.Thread] = []

    def start(self, stop_timeout: float = 20.0) -> None:
        loop = asyncio.get_running_loop()
        self._all_stopped = asyncio.Event()
        context = multiprocessing.get_context("spawn")
        for worker in range(self.count):
            parent, child = context.Pipe()
            process = context.Process(
                target=worker_main,
                args=(child, self.config, stop_timeout),
                name=f"kconform-soak-worker-{worker}",
                daemon=True,
            )
            process.start()
            child.close()
            self._processes.append(process)
            self._pipes.append(parent)
            outbox: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
            sender = threading.Thread(
                target=_send_loop,
                args=(parent, outbox),
                name=f"soak-worker-{worker}-commands",
                daemon=True,
            )
            sender.start()
            self._outboxes.append(outbox)
            self._senders.append(sender)
            loop.add_reader(parent.fileno(), self._readable, worker)

    def _readable(self, worker: int) -> None:
        pipe = self._pipes[worker]
        try:
            message = pipe.recv()
        except (EOFError, OSError):
            self._gone(worker, "its pipe closed")
            return
        if isinstance(message, list):
            self.on_events([Event._make(item) for item in message])
        elif isinstance(message, tuple) and message[:1] == ("stopped",):
            self._gone(worker, None)

    def _gone(self, worker: int, problem: str | None) -> None:
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(self._pipes[worker].fileno())
        if worker not in self._stopped and problem:
            code = self._processes[worker].exitcode
            self.notes.append(f"worker {worker} ended early ({problem}, exit code {code})")
        self._stopped.add(worker)
        if len(self._stopped) == self.count and self._all_stopped is not None:
            self._all_stopped.set()

    def _send(self, worker: int, command: tuple[Any, ...]) -> None:
        if worker not in self._stopped:
            self._outboxes[worker].put(command)

    def _deal(self, indices: Iterable[int]) -> dict[int, list[int]]:
        dealt: dict[int, list[int]] = {}
        for index in indices:
            dealt.setdefault(index % self.count, []).append(index)
        return dealt

    def add(self, indices: list[int], start_at: float | None = None) -> None:
        for worker, mine in self._deal(indices).items():
            self._send(worker, ("add", mine, start_at))

    def close(self, indices: list[int], kill: bool) -> None:
        for worker, mine in self._deal(indices).items():
            self._send(worker, ("close", mine, kill))

    def move(self, indices: list[int]) -> None:
        for worker, mine in self._deal(indices).items():
            self._send(worker, ("move", mine))

    async def stop(self, timeout: float) -> None:
        """Every worker closes its clients cleanly and exits; killed after `timeout` + 5 s."""
        for worker in range(self.count):
            self._send(worker, ("stop",))
        if self._all_stopped is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_stopped.wait(), timeout + 5)
        for outbox in self._outboxes:
            outbox.put(None)
        for sender in self._senders:
            await asyncio.to_thread(sender.join, 5)
        for worker, process in enumerate(self._processes):
            await asyncio.to_thread(process.join, 5)
            if process.is_alive():
                self.notes.append(f"worker {worker} did not stop in time: killed")
                process.kill()
                await asyncio.to_thread(process.join, 5)
        for pipe in self._pipes:
            with contextlib.suppress(OSError, ValueError):
                asyncio.get_running_loop().remove_reader(pipe.fileno())
            pipe.close()


def _send_loop(pipe: Connection, outbox: queue.SimpleQueue[tuple[Any, ...] | None]) -> None:
    """A worker's commands, in order, until None (blocking sends, off the event loop)."""
    while (command := outbox.get()) is not None:
        try:
            pipe.send(command)
        except (OSError, ValueError):
            return  # the worker is gone; its end is noticed by the reader
