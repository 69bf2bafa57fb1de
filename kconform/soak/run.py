"""The soak coordinator: target, fleet, schedule, sink and samples, then verdicts and reports.

One asyncio loop does everything that is not a client: it feeds the clients' events into the
`Ledger` and the `DeliveryMatcher`, reads the sinks every second, runs the schedule's steps
one after another, closes a sample interval every `sample_seconds`, and stops the fleet when
the duration is up (every client then closes cleanly, with its Terminating push). Blocking
target calls (admin, restarts, /proc, the sinks' HTTP) run in threads.

Whatever ends the run (the duration, Ctrl-C, a crash), `run_soak` stops the fleet and the
target it started and judges what was measured; `SoakRun.interrupted`/`.crash` say why it
ended early. With `--shard i/n` each process runs every n-th client; shard 0 alone changes
subscriptions and restarts brokers; each shard judges its own clients against the same sinks.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import time
import uuid
from typing import Any

from kconform.fixtures.targets.base import BrokerTarget, Capability, Subscription
from kconform.soak.broker_stats import BrokerStats
from kconform.soak.client import Event
from kconform.soak.delivery import DeliveryMatcher
from kconform.soak.descriptors import out_of_files, quiet_accepts, stopped_line
from kconform.soak.fleet import FLUSH_EVERY, FleetConfig
from kconform.soak.ledger import Fault, Ledger
from kconform.soak.options import SoakOptions, SoakRun, make_target, progress_line
from kconform.soak.pool import LocalFleet, WorkerPool
from kconform.soak.samples import SampleWriter
from kconform.soak.schedule import Step, plan
from kconform.soak.sink import HttpSink, ReferenceSink, sink_reader

SINK_EVERY = 1.0  # seconds between sink reads
FAST_SINK_EVERY = 0.2  # while a node restarts: catch what it accepted before it went down
HEAP_EVERY = 5.0  # seconds between readings of the brokers' heap (where the plugin shows it)
BASE_METRICS = ("org.apache.kafka.producer.", "org.apache.kafka.consumer.")
CHURN_METRICS = {
    "create": ("org.apache.kafka.consumer.coordinator.", "org.apache.kafka.producer.node."),
    "alter": ("org.apache.kafka.producer.record.",),
}


class Coordinator:
    """One soak run (module docstring); `run()` returns the `SoakRun` whatever happens."""

    def __init__(self, options: SoakOptions) -> None:
        self.options = options
        run_id = options.run_id or uuid.uuid4().hex[:8]
        self.run = SoakRun(options, run_id, time.time())
        self.tag = f"kcsoak-{run_id}"
        self.rng = random.Random(f"{options.seed}/schedule/{options.shard[0]}")
        self.target: BrokerTarget | None = None
        self.fleet: LocalFleet | WorkerPool | None = None
        self.fleet_stopped = False
        self.sink: ReferenceSink | HttpSink | None = None
        self.sink_lock = asyncio.Lock()
        self.paused_nodes: set[int] = set()
        self.subscriptions: list[str] = []
        self.next_index = 0
        self.stop_requested = asyncio.Event()
        self.schedule_done = asyncio.Event()  # set: no further step starts
        self.sink_reads: set[asyncio.Task[int]] = set()
        self.sink_records = 0
        self.faults_in_bucket: list[str] = []
        self.real_pushes: dict[str, list[float]] = {}  # real client.id -> sink times
        self.heap_floor: int | None = None  # the lowest heap reading of this interval
        self.files_cause = ""  # "EMFILE"/"ENFILE": descriptors ran out (`soak.descriptors`)

    # --- the run ---------------------------------------------------------------------------

    async def run_soak(self) -> SoakRun:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
            loop.add_signal_handler(signal.SIGTERM, self._interrupt)

        def accept_failed(name: str) -> None:  # from whichever thread's loop logged it
            with contextlib.suppress(RuntimeError):  # this loop closed: the run is over
                loop.call_soon_threadsafe(self._out_of_files, name)

        with quiet_accepts(accept_failed):
            try:
                await self._run()
            except Exception as exc:  # a crash still ends in a report of what was measured
                self._crashed(exc)
            finally:
                self._name_out_of_files()
                with contextlib.suppress(Exception):
                    await self._shutdown()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(sig)
            self.run.finished = time.time()
        return self.run

    def _background_ended(self, task: asyncio.Task[None]) -> None:
        """A loop that failed is a crash: the run stops early and judges what it measured."""
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        assert exc is not None
        self._crashed(exc)
        self.stop_requested.set()

    def _crashed(self, exc: BaseException) -> None:
        """A crash, unless it is descriptors running out (a cause of its own, said once)."""
        name = out_of_files(exc)
        if name:
            self._out_of_files(name)
            return
        self.run.crash = self.run.crash or f"{type(exc).__name__}: {exc}"
        self.run.interrupted = True

    def _out_of_files(self, name: str) -> None:
        """The first EMFILE/ENFILE anywhere (a client's connect, a server's accept, a read):
        recorded once, then the soak stops as on Ctrl-C (`_name_out_of_files` says it)."""
        if self.files_cause:
            return
        self.files_cause = name
        self.run.interrupted = True
        self.stop_requested.set()

    def _name_out_of_files(self) -> None:
        """The line naming the cause, with the clients connected when the stop began."""
        if not self.files_cause or self.run.out_of_files:
            return
        connected = self.run.ledger.connected_clients() if self.run.ledger is not None else 0
        self.run.out_of_files = stopped_line(self.files_cause, connected)
        self.run.notes.append(self.run.out_of_files)

    def _interrupt(self) -> None:
        if self.stop_requested.is_set():
            raise KeyboardInterrupt  # a second Ctrl-C: stop harder (the report is still written)
        self.run.interrupted = True
        self.run.notes.append("interrupted (Ctrl-C or SIGTERM): stopped early, results kept")
        self.stop_requested.set()

    async def _run(self) -> None:
        from kconform.fixtures.targets.base import TargetUnavailable

        o = self.options
        target, kind = make_target(o)
        self.target = target
        try:
            await asyncio.to_thread(target.start)
        except TargetUnavailable as exc:
            self.run.unavailable = exc.reason
            self.target = None
            return
        self.run.target_info = target.describe()
        self.run.capabilities = frozenset(target.capabilities)
        interval_s = o.push_interval_ms / 1000
        ledger = Ledger(time.time(), interval_s, o.thresholds.lockout_intervals)
        self.run.ledger, self.run.matcher = ledger, DeliveryMatcher()
        self.run.writer = SampleWriter(o.out, run_id=self.run.run_id, shard=o.shard[0])
        stats = BrokerStats(target, kind.soak_stats)
        self.run.memory_source = stats.memory_source if stats.readable else ""
        if target.has(Capability.TELEMETRY_SINK):
            self.sink = sink_reader(target)
            if self.sink is not None:
                await asyncio.to_thread(self.sink.start)
        await self._base_subscription()
        nodes = [b.node_id for b in target.brokers]
        self.run.steps = plan(
            o.duration,
            o.cadences if o.leader else {"client_churn": o.cadences["client_churn"]},
            nodes=nodes,
            can_restart=target.has(Capability.RESTART),
        )
        if not target.has(Capability.RESTART) and any(
            o.cadences.get(k) != "none" for k in ("restart", "rolling_restart")
        ):
            self.run.notes.append(f"{target.name} cannot restart brokers: no restart faults")
        config = FleetConfig(
            {b.node_id: (b.host, b.port) for b in target.brokers},
            o.seed,
            self.tag,
            o.request_timeout,
        )
        self.fleet = (
            WorkerPool(config, o.workers, self._intake)
            if o.workers > 0
            else LocalFleet(config, self._intake)
        )
        self.fleet.start()
        start = time.time()
        ledger.begin(start)
        self._add_clients(o.clients, ramp=o.ramp())
        real = await self._start_real_clients()
        background = [
            asyncio.create_task(self._sample_loop(stats)),
            asyncio.create_task(self._sink_loop()),
            asyncio.create_task(self._schedule_loop(start)),
            asyncio.create_task(self._heap_loop(stats)),
        ]
        for task in background:
            task.add_done_callback(self._background_ended)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop_requested.wait(), o.duration)
        if self.files_cause:  # the fleet's events up to now in, to say how many were connected
            await asyncio.sleep(2 * FLUSH_EVERY)
            self._name_out_of_files()
        self.run.judged_at = time.time()
        self.schedule_done.set()  # a step under way (a restart) finishes; no new one starts
        await asyncio.gather(background[2], return_exceptions=True)
        await self.fleet.stop(o.request_timeout + 5)
        self.fleet_stopped = True
        self.run.notes += self.fleet.notes
        for task in (*background[:2], *background[3:]):
            task.cancel()
        await asyncio.gather(*background, *self.sink_reads, return_exceptions=True)
        await self._read_sink(final=True)
        await self._finish_real_clients(real)
        await self._sample(stats, final=True)

    async def _shutdown(self) -> None:
        """The fleet (if its stop did not finish: a crash, a second Ctrl-C), then the target."""
        if self.fleet is not None and not self.fleet_stopped:
            self.run.judged_at = self.run.judged_at or time.time()
            with contextlib.suppress(Exception):
                await self.fleet.stop(5)
        if self.target is not None:
            for name in self.subscriptions:
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self.target.delete_subscription, name)
            await asyncio.to_thread(self.target.stop)
            self.target = None

    # --- clients -----------------------------------------------------------------------------

    def _add_clients(self, count: int, *, ramp: float) -> list[int]:
        """`count` new clients of this shard, starting spread over `ramp` seconds."""
        assert self.fleet is not None
        shard, shards = self.options.shard
        indices: list[int] = []
        while len(indices) < count:
            if self.next_index % shards == shard:
                indices.append(self.next_index)
            self.next_index += 1
        now = time.time()
        for at, chunk in enumerate(_chunks(indices, 50)):
            offset = ramp * at * 50 / max(1, len(indices))
            self.fleet.add(chunk, start_at=now + offset)
        return indices

    def _intake(self, events: list[Event]) -> None:
        ledger, matcher = self.run.ledger, self.run.matcher
        assert ledger is not None and matcher is not None
        ledger.feed(events)
        for e in events:
            if e.kind == "files":
                self._out_of_files(e.detail)
            elif e.kind == "push" and e.code == 0 and e.stamp:
                matcher.ack(e.instance, e.stamp, e.node, e.t)
            elif e.kind == "get" and e.code == 0 and e.instance:
                matcher.instance(e.instance)

    # --- sinks -------------------------------------------------------------------------------

    async def _sink_loop(self) -> None:
        while True:
            await asyncio.sleep(SINK_EVERY)
            await self._read_sink()

    async def _read_sink(self, nodes: list[int] | None = None, *, final: bool = False) -> int:
        """One read of the sinks (skipping nodes being restarted unless asked for); returns
        the number of read errors. Never cancelled half-way: a read consumes what it reads
        (the reference's sink is drained, a cursor moves), so its records must be fed."""
        read = asyncio.ensure_future(self._read_sink_now(nodes, final))
        self.sink_reads.add(read)
        read.add_done_callback(self.sink_reads.discard)
        return await asyncio.shield(read)

    async def _read_sink_now(self, nodes: list[int] | None, final: bool) -> int:
        if self.sink is None or self.run.matcher is None:
            return 0
        sink, matcher = self.sink, self.run.matcher
        async with self.sink_lock:
            if isinstance(sink, HttpSink):
                chosen = nodes or [n for n in sink.endpoints if n not in self.paused_nodes]
                batch = await asyncio.to_thread(sink.read, chosen)
                if final:  # once more: pushes answered while the last read was under way
                    await asyncio.sleep(1.0)
                    again = await asyncio.to_thread(sink.read, chosen)
                    batch.records += again.records
                    batch.polls += again.polls
            else:
                batch = await asyncio.to_thread(sink.read)
        matcher.feed_sink(batch.records)
        real = f"{self.tag}-real-"
        for _, _, t, client_id in batch.records:
            if client_id.startswith(real):
                self.real_pushes.setdefault(client_id, []).append(t)
        for poll in batch.polls:
            matcher.poll(poll)
        self.sink_records += len(batch.records)
        return len(batch.errors)

    # --- the schedule ------------------------------------------------------------------------

    async def _schedule_loop(self, start: float) -> None:
        for step in self.run.steps:
            delay = start + step.at - time.time()
            if delay > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.schedule_done.wait(), delay)
            if self.schedule_done.is_set():
                return
            try:
                await self._step(step)
            except Exception as exc:  # a fault that could not be made is noted, the run goes on
                self.run.notes.append(
                    f"{step.kind} {step.detail} at {step.at:.0f} s failed: "
                    f"{type(exc).__name__}: {exc}"
                )

    async def _step(self, step: Step) -> None:
        ledger, target = self.run.ledger, self.target
        assert ledger is not None and target is not None
        started = time.time()
        if step.kind == "subscription":
            ledger.fault(Fault("subscription", started, started, step.detail))
            await asyncio.to_thread(self._churn_subscription, step.detail)
            self.faults_in_bucket.append(f"subscription {step.detail}")
        elif step.kind == "client_churn":
            detail = self._churn_clients()
            ledger.fault(Fault("client_churn", started, time.time(), detail))
            self.faults_in_bucket.append("client churn")
        else:
            nodes = (
                [int(step.detail)]
                if step.kind == "restart"
                else [b.node_id for b in target.brokers]
            )
            ledger.restarting = True
            try:
                for node in nodes:
                    await self._restart(node)
            finally:
                ledger.restarting = False
            label = "restart of node " + step.detail if step.kind == "restart" else step.kind
            ledger.fault(Fault(step.kind, started, time.time(), label, tuple(nodes)))
            self.faults_in_bucket.append(label.replace("_", " "))

    def _churn_subscription(self, detail: str) -> None:
        assert self.target is not None
        name = f"kcsoak-{self.run.run_id}-churn"
        if detail == "delete":
            self.target.delete_subscription(name)
            return
        interval = self.options.push_interval_ms
        self.target.set_subscription(
            Subscription(name, CHURN_METRICS[detail], interval, {"client_id": f"{self.tag}-.*"})
        )
        if name not in self.subscriptions:
            self.subscriptions.append(name)

    def _churn_clients(self) -> str:
        """Of the live clients: a fraction arrive anew, close, are killed, move brokers."""
        assert self.fleet is not None and self.run.ledger is not None
        live = [i for i, s in self.run.ledger.clients.items() if s.ended is None]
        count = max(1, round(self.options.churn_fraction * len(live)))
        chosen = self.rng.sample(live, min(len(live), 3 * count))
        closing, killed, moving = chosen[:count], chosen[count : 2 * count], chosen[2 * count :]
        self.fleet.close(closing, kill=False)
        self.fleet.close(killed, kill=True)
        self.fleet.move(moving)
        arrived = self._add_clients(count, ramp=0.0)
        return (
            f"{len(arrived)} arrived, {len(closing)} closed, {len(killed)} killed, "
            f"{len(moving)} moved to another broker"
        )

    async def _restart(self, node: int) -> None:
        """Restart one node, reading its sink fast until it goes down (so nothing it accepted
        before is unread), then from the start of its new sink."""
        assert self.target is not None
        target = self.target
        self.paused_nodes.add(node)
        restart = asyncio.create_task(asyncio.to_thread(target.restart, node))
        try:
            seen_down = False
            while not restart.done():
                if isinstance(self.sink, HttpSink) and not seen_down:
                    seen_down = await self._read_sink([node]) > 0
                await asyncio.wait({restart}, timeout=FAST_SINK_EVERY)
            await restart
            if isinstance(self.sink, HttpSink) and seen_down:
                self.sink.reset(node)
        finally:
            self.paused_nodes.discard(node)

    async def _base_subscription(self) -> None:
        """The fleet's own subscription (shard 0 creates it): every standard metric, the run's
        interval, matching only this fleet's client ids."""
        target = self.target
        assert target is not None
        if not target.has(Capability.CLIENT_METRICS_ADMIN):
            self.run.notes.append(
                f"{target.name} has no CLIENT_METRICS admin: clients get whatever subscriptions "
                "the broker already has (PushIntervalMs may not be --push-interval-ms)"
            )
            return
        if not self.options.leader:
            return
        name = f"kcsoak-{self.run.run_id}"
        subscription = Subscription(
            name, BASE_METRICS, self.options.push_interval_ms, {"client_id": f"{self.tag}-.*"}
        )
        await asyncio.to_thread(target.set_subscription, subscription)
        self.subscriptions.append(name)
        if not hasattr(target, "drain_telemetry"):
            await asyncio.sleep(2.0)  # KRaft applies config records asynchronously

    # --- samples -------------------------------------------------------------------------------

    async def _sample_loop(self, stats: BrokerStats) -> None:
        every = self.options.sample_interval()
        while True:
            await asyncio.sleep(every)
            await self._sample(stats)

    async def _heap_loop(self, stats: BrokerStats) -> None:
        """The brokers' heap every few seconds; each interval keeps its lowest reading, which
        is about the heap after a collection: what grows when a broker leaks."""
        while True:
            heap = await asyncio.to_thread(stats.heap)
            if heap is not None:
                self.heap_floor = heap if self.heap_floor is None else min(self.heap_floor, heap)
            await asyncio.sleep(HEAP_EVERY)

    async def _sample(self, stats: BrokerStats, *, final: bool = False) -> None:
        ledger, matcher, writer = self.run.ledger, self.run.matcher, self.run.writer
        assert ledger is not None and matcher is not None and writer is not None
        reading = await asyncio.to_thread(stats.read)
        now = time.time()
        counts = matcher.settle(now, final=final)
        extra = {
            "memory_bytes": reading.get("memory_bytes"),
            "heap_floor_bytes": self.heap_floor,
            "connections": reading.get("connections"),
            "cached_instances": reading.get("cached_instances"),
            "sink_records": self.sink_records,
            "acked_total": counts.acked,
            "matched_total": counts.matched,
            "missing_total": counts.missing,
            "unread_total": counts.unread,
            "duplicates_total": counts.duplicates,
            "faults": "; ".join(self.faults_in_bucket),
        }
        self.sink_records, self.faults_in_bucket, self.heap_floor = 0, [], None
        row = writer.write(ledger.close_bucket(now, extra))
        if self.options.progress:
            print(progress_line(row), flush=True)

    # --- real clients --------------------------------------------------------------------------

    async def _start_real_clients(self) -> list[Any]:
        if not self.options.real_clients or self.target is None:
            return []
        from kconform.soak.real import start_real_clients

        o = self.options
        runs, notes = await start_real_clients(o.real_clients, self.target, self.tag, o.duration)
        self.run.notes += notes
        return runs

    async def _finish_real_clients(self, runs: list[Any]) -> None:
        if not runs:
            return
        from kconform.soak.real import finish_real_clients

        self.run.real_clients = await finish_real_clients(
            runs, self.real_pushes, self.options.push_interval_ms / 1000
        )


def _chunks(items: list[int], size: int) -> list[list[int]]:  # itertools.batched: Python 3.12
    return [items[i : i + size] for i in range(0, len(items), size)]


async def run_soak(options: SoakOptions) -> SoakRun:
    """Run one soak to its end (or Ctrl-C, or a crash); the measurements, never an exception."""
    return await Coordinator(options).run_soak()
