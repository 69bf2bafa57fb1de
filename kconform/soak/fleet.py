"""Many simulated clients on one asyncio event loop, and worker processes that each run one.

`Fleet` executes `SimClient` actions: one task per client, one TCP connection per client (as a
real client has), frames through the codec's `Correlator`/`FrameReader` on a bare
`asyncio.Protocol` (no stream objects, no wire log: at thousands of clients the harness's own
overhead must stay small next to the broker's). A waiting client also wakes when its
connection drops, so a restarted broker is noticed at once, as a real client notices it.

Events leave in batches (`emit`, every `FLUSH_EVERY` seconds), together with the loop's lag
(how late a 100 ms timer fires): a lagging loop inflates latencies, and the soak says so rather
than blaming the broker.

`worker_main` runs a `Fleet` in a process of its own (`--workers`); the coordinator sends it
commands over a pipe (add, close, kill, move, stop) and gets event batches back. A worker whose
pipe closes (the coordinator ended or died) stops its clients and exits: no process outlives
the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from kconform.codecs.framing import Correlator, FrameReader
from kconform.codecs.schema import Message
from kconform.codecs.wire import DecodeError
from kconform.fixtures.targets.nanny import signal_on_parent_death
from kconform.soak.client import Connect, Disconnect, Event, Finished, Send, SimClient, Wait
from kconform.soak.descriptors import out_of_files
from kconform.soak.payload import make_profile

FLUSH_EVERY = 0.25  # seconds between event batches
LAG_EVERY = 0.1  # seconds between event-loop lag probes
REQUEST_TIMEOUT = 10.0  # Kafka's request.timeout.ms is 30 s; a soak wants to know sooner
CONNECT_TIMEOUT = 5.0

Emit = Callable[[list[Event]], None]


@dataclass(frozen=True)
class FleetConfig:
    """What a fleet (in-process or in a worker) needs to know; plain data, picklable."""

    brokers: dict[int, tuple[str, int]]  # node id -> (host, port)
    seed: int
    tag: str
    request_timeout: float = REQUEST_TIMEOUT


class _Wire(asyncio.Protocol):
    """One client connection: requests out, responses matched back by correlation id."""

    def __init__(self, client_id: str) -> None:
        self.correlator = Correlator(client_id=client_id)
        self.frames = FrameReader()
        self.transport: asyncio.Transport | None = None
        self.waiting: dict[int, tuple[asyncio.Future[tuple[Message, float]], float]] = {}
        self.lost: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        try:
            for payload in self.frames.feed(data):
                cid, _, body, _ = self.correlator.response(payload)
                entry = self.waiting.pop(cid, None)
                if entry is not None and not entry[0].done():
                    entry[0].set_result((body, (now - entry[1]) * 1000))
        except DecodeError as exc:
            self._fail(f"undecodable: {exc}")
            if self.transport is not None:
                self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail("lost")

    def _fail(self, reason: str) -> None:
        if not self.lost.done():
            self.lost.set_result(reason)
        for future, _ in self.waiting.values():
            if not future.done():
                future.set_exception(ConnectionError(reason))
        self.waiting.clear()

    def request(self, body: Message, version: int) -> asyncio.Future[tuple[Message, float]]:
        future: asyncio.Future[tuple[Message, float]] = asyncio.get_running_loop().create_future()
        if self.lost.done() or self.transport is None:
            future.set_exception(ConnectionError(self.lost.result() if self.lost.done() else ""))
            return future
        cid, frame = self.correlator.request(body, version)
        self.waiting[cid] = (future, time.perf_counter())
        self.transport.write(frame)
        return future

    def close(self, abort: bool = False) -> None:
        if self.transport is not None:
            self.transport.abort() if abort else self.transport.close()


class Fleet:
    """Simulated clients on the running loop; commands by client index."""

    def __init__(self, config: FleetConfig, emit: Emit) -> None:
        self.config = config
        self.emit = emit
        self.nodes = sorted(config.brokers)
        self.clients: dict[int, SimClient] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self._waiters: dict[int, asyncio.Future[None]] = {}
        self._outbox: list[Event] = []
        self._lags: list[float] = []
        self._background: list[asyncio.Task[None]] = []
        self.out_of_files = ""  # "EMFILE"/"ENFILE" once a connect ran out of descriptors

    def start(self) -> None:
        """Start the flusher and the lag probe (call on the loop that runs the fleet)."""
        self._background = [
            asyncio.create_task(self._flush_loop()),
            asyncio.create_task(self._lag_loop()),
        ]

    def add(self, indices: Iterable[int], *, start_at: float | None = None) -> None:
        """Start clients `indices`; each connects at `start_at` (wall clock) or now."""
        now = time.time()
        for index in indices:
            if index in self.clients:
                continue
            profile = make_profile(index, self.config.seed, self.config.tag)
            rng = random.Random(f"{self.config.seed}/{index}/client")
            client = SimClient(profile, self.nodes, rng=rng, now=now)
            client.wake_at = max(now, start_at or now)
            self._outbox.extend(client.events)
            client.events = self._outbox
            self.clients[index] = client
            self.tasks[index] = asyncio.create_task(self._run(client))

    def close(self, indices: Iterable[int], *, kill: bool) -> None:
        for index in indices:
            client = self.clients.get(index)
            if client is not None:
                client.close(kill=kill)
                self._wake(index)

    def move(self, indices: Iterable[int]) -> None:
        for index in indices:
            client = self.clients.get(index)
            if client is not None:
                client.move()
                self._wake(index)

    async def stop(self, timeout: float, spread: float = 0.0) -> None:
        """Close every client cleanly (Terminating pushes) over `spread` seconds, as a fleet's
        applications end one by one rather than at one instant; bounded by `timeout`."""
        indices = list(self.clients)
        step = max(1, len(indices) // 20)
        for at in range(0, len(indices), step):
            self.close(indices[at : at + step], kill=False)
            if spread > 0 and at + step < len(indices):
                await asyncio.sleep(spread / 20)
        pending = [t for t in self.tasks.values() if not t.done()]
        if pending:
            _, still = await asyncio.wait(pending, timeout=timeout)
            for task in still:
                task.cancel()
            await asyncio.gather(*still, return_exceptions=True)
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._flush()

    @property
    def live(self) -> int:
        return sum(1 for t in self.tasks.values() if not t.done())

    # --- one client ------------------------------------------------------------------------

    async def _run(self, client: SimClient) -> None:
        wire: _Wire | None = None
        loop = asyncio.get_running_loop()
        timeout = self.config.request_timeout
        try:
            while True:
                action = client.next_action(time.time())
                if isinstance(action, Finished):
                    break
                if isinstance(action, Wait):
                    await self._sleep(client.index, action.until, wire)
                    if wire is not None and wire.lost.done():
                        client.on_disconnected(time.time(), wire.lost.result())
                        wire = None
                elif isinstance(action, Connect):
                    host, port = self.config.brokers[action.node]
                    try:
                        factory = functools.partial(_Wire, client.profile.client_id)
                        _, wire = await asyncio.wait_for(
                            loop.create_connection(factory, host, port), CONNECT_TIMEOUT
                        )
                        client.on_connected(time.time())
                    except (OSError, TimeoutError) as exc:
                        self._connect_failed(client, exc)
                        wire = None
                elif isinstance(action, Send):
                    wire = await self._send(client, action, wire, timeout)
                elif isinstance(action, Disconnect):
                    if wire is not None:
                        wire.close(abort=action.abort)
                    wire = None
        finally:
            if wire is not None:
                wire.close()

    def _connect_failed(self, client: SimClient, exc: BaseException) -> None:
        """A refused or timed-out connect; the first that ran out of file descriptors is told
        once, as a "files" event (the coordinator stops the soak: `soak.descriptors`)."""
        now = time.time()
        name = out_of_files(exc)
        if name and not self.out_of_files:
            self.out_of_files = name
            self._outbox.append(Event("files", now, client.index, detail=name))
        client.on_connect_failed(now, name or type(exc).__name__)

    async def _send(
        self, client: SimClient, action: Send, wire: _Wire | None, timeout: float
    ) -> _Wire | None:
        if wire is None:
            client.on_disconnected(time.time(), "lost")
            return None
        try:
            body, latency = await asyncio.wait_for(
                wire.request(action.body, action.version), timeout
            )
        except ConnectionError:
            client.on_disconnected(time.time(), "lost")
            wire.close(abort=True)
            return None
        except TimeoutError:
            client.on_disconnected(time.time(), "timeout")
            wire.close(abort=True)
            return None
        client.on_response(time.time(), action.api, body, latency)
        return wire

    async def _sleep(self, index: int, until: float, wire: _Wire | None) -> None:
        """Until `until`, a command for this client, or its connection dropping."""
        delay = until - time.time()
        if delay <= 0:
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters[index] = waiter
        handle = loop.call_later(delay, _release, waiter) if delay != float("inf") else None

        def lost(_: object) -> None:
            _release(waiter)

        if wire is not None:
            wire.lost.add_done_callback(lost)
        try:
            await waiter
        finally:
            if handle is not None:
                handle.cancel()
            if wire is not None:
                wire.lost.remove_done_callback(lost)
            if self._waiters.get(index) is waiter:
                del self._waiters[index]

    def _wake(self, index: int) -> None:
        waiter = self._waiters.get(index)
        if waiter is not None:
            _release(waiter)

    # --- background ------------------------------------------------------------------------

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_EVERY)
            self._flush()

    def _flush(self) -> None:
        now = time.time()
        if self._lags:
            self._outbox.append(
                Event("lag", now, -1, latency_ms=max(self._lags), value=len(self._lags))
            )
            self._lags = []
        if self._outbox:
            batch, self._outbox[:] = list(self._outbox), []
            self.emit(batch)

    async def _lag_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            expected = loop.time() + LAG_EVERY
            await asyncio.sleep(LAG_EVERY)
            self._lags.append(max(0.0, (loop.time() - expected) * 1000))


def _release(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


# --- worker processes ---------------------------------------------------------------------------


STOP_SPREAD = 5.0  # seconds over which a fleet's clients close at the end of a run


def worker_main(connection: Connection, config: FleetConfig, stop_timeout: float) -> None:
    """A worker process: a fleet driven by the coordinator's commands (module docstring)."""
    _die_with_parent()
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C reaches the coordinator, which stops us
        asyncio.run(_worker(connection, config, stop_timeout))


def _die_with_parent() -> None:
    """Linux: SIGTERM this worker when the coordinator dies (even by SIGKILL); elsewhere the
    closed pipe still stops it, only later."""
    signal_on_parent_death(signal.SIGTERM)


async def _worker(connection: Connection, config: FleetConfig, stop_timeout: float) -> None:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def emit(batch: list[Event]) -> None:
        with contextlib.suppress(OSError, ValueError):
            connection.send([tuple(e) for e in batch])

    fleet = Fleet(config, emit)
    fleet.start()

    orphaned = False

    def on_command() -> None:
        nonlocal orphaned
        try:
            command: tuple[Any, ...] = connection.recv()
        except (EOFError, OSError):  # the coordinator is gone: nobody will read a clean stop
            orphaned, command = True, ("stop",)
            loop.remove_reader(connection.fileno())
        apply_command(fleet, command, done)

    loop.add_reader(connection.fileno(), on_command)
    try:
        await done
    finally:
        loop.remove_reader(connection.fileno())
        await fleet.stop(1.0 if orphaned else stop_timeout, 0.0 if orphaned else STOP_SPREAD)
        with contextlib.suppress(OSError, ValueError):
            connection.send(("stopped", fleet.live))
        connection.close()


def apply_command(fleet: Fleet, command: tuple[Any, ...], done: asyncio.Future[None]) -> None:
    """One coordinator command: ("add", indices, start_at), ("close", indices, kill),
    ("move", indices) or ("stop",)."""
    kind = command[0]
    if kind == "add":
        fleet.add(command[1], start_at=command[2])
    elif kind == "close":
        fleet.close(command[1], kill=command[2])
    elif kind == "move":
        fleet.move(command[1])
    elif not done.done():
        done.set_result(None)
