"""One volume run against one target: topics, traffic, samples before and after, Parquet out.

Shared by the suite (`test_volumes.py`, once per target and pytest session) and by
`kconform volumes`. Each source is collected where the target has the capability; what could
not be collected is said in `notes`, so "no KIP-977 rows" is never mistaken for "all agree".
The comparison itself is the Spark job's (`kconform.engine.volumes.compare`): this suite is the one
place where a suite hands its evidence to a pipeline, because the verdict is the pipeline's.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from kconform.engine.volumes.collect import (
    ClientTelemetry,
    Connect,
    admin_at,
    broker_metrics,
    client_telemetry,
    enable_partition_meters,
    end_offsets,
    leaders,
    read_back,
    settled_metrics,
)
from kconform.engine.volumes.model import quantity_of
from kconform.engine.volumes.workload import (
    Production,
    Workload,
    ledger_table,
    produce,
    samples_table,
)
from kconform.fixtures.targets.base import (
    BrokerTarget,
    Capability,
    PartitionMetric,
    Subscription,
    UnsupportedOperation,
)

Defer = Callable[[Callable[[], Any]], None]
"""Registers a cleanup to run after the run (`Check.defer` in a case)."""

PUSH_INTERVAL_MS = 500
LEDGER_FILE, SAMPLES_FILE, RUN_FILE = "ledger.parquet", "samples.parquet", "run.json"
NOT_BROKER = ("list_offsets", "client_telemetry")
BYTES_OUT = "BytesOutPerSec"
STOP_PRODUCING_S = 4.0  # under LoopThread.stop's 5 s for cancelling what is left


@dataclass
class VolumeRun:
    """What a run produced and collected, and where it wrote it."""

    target: str
    workload: Workload
    topics: dict[str, int]
    production: Production
    out_dir: Path
    samples: list[PartitionMetric] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # source -> collected, or why not
    read_back: int = 0
    trimmed: dict[tuple[str, int], int] = field(default_factory=dict)  # log start > 0
    telemetry: ClientTelemetry | None = None

    @property
    def ledger_path(self) -> Path:
        return self.out_dir / LEDGER_FILE

    @property
    def samples_path(self) -> Path:
        return self.out_dir / SAMPLES_FILE

    def describe(self) -> dict[str, Any]:
        """run.json: what the summary's numbers are about."""
        return {
            "target": self.target,
            "workload": asdict(self.workload),
            "topics": self.topics,
            "client": self.production.client,
            "client_id": self.production.client_id,
            "records_delivered": self.production.records(),
            "delivery_errors": self.production.errors[:20],
            "produce_seconds": round(self.production.seconds, 3),
            "records_read_back": self.read_back,
            "logs_trimmed": {f"{t}-{p}": start for (t, p), start in sorted(self.trimmed.items())},
            "sources": self.notes,
        }


async def run_volumes(
    target: BrokerTarget,
    connect: Connect,
    defer: Defer,
    workload: Workload,
    out_dir: Path,
    *,
    prefix: str,
) -> VolumeRun:
    """Create the run's topics, enable what can be enabled, sample, produce, read back, sample
    again; write ledger.parquet, samples.parquet and run.json under `out_dir`."""
    topics = {f"{prefix}-t{i}": workload.partitions for i in range(workload.topics)}
    admin = await admin_at(connect)
    placement: dict[str, dict[int, int]] = {}
    for topic, partitions in topics.items():
        await asyncio.to_thread(target.create_topic, topic, partitions)
        placement[topic] = await leaders(admin, topic, partitions)
    client_id = f"{prefix}-producer"
    production = Production(client_id, "confluent-kafka")
    run = VolumeRun(target.name, workload, topics, production, out_dir)
    offsets = target.has(Capability.PARTITION_METRICS)
    meters = target.has(Capability.KIP977)
    if meters:
        defer(await enable_partition_meters(admin, topics))
    telemetry = target.has(Capability.CLIENT_METRICS_ADMIN) and target.has(
        Capability.TELEMETRY_SINK
    )
    if telemetry:
        subscription = Subscription(
            f"{prefix}-sub", ("org.apache.kafka.",), PUSH_INTERVAL_MS, {"client_id": client_id}
        )
        await asyncio.to_thread(target.set_subscription, subscription)
        defer(lambda: target.delete_subscription(subscription.name))

    if offsets:
        run.samples += await end_offsets(target, connect, placement)
    before = await _broker_metrics(target, topics)  # None: the target has none to offer
    run.samples += before or []
    run.production = production = await _produced(target, list(topics), workload, client_id)
    if meters:  # BytesOutPerSec moves only when records leave the broker
        ends = {(t, p): 0 for t, parts in topics.items() for p in range(parts)}
        ends.update(production.end_offsets())
        back = await read_back(target, connect, placement, ends)
        run.read_back, run.trimmed = back.records, back.trimmed
    if offsets:
        run.samples += await end_offsets(target, connect, placement)
    if before is not None:
        run.samples += await settled_metrics(target, topics, _caught_up(run, before))
    if run.trimmed:  # part of the traffic cannot leave the broker again: not a miscount
        run.samples = [s for s in run.samples if s.metric != BYTES_OUT]
    if telemetry:
        run.telemetry = await _pushed(target, client_id)
        run.samples += run.telemetry.samples
    _note_sources(run, offsets=offsets, broker=before is not None, telemetry=telemetry)
    _write(run)  # the admin connection stays open: the verbosity restore needs it
    return run


async def _produced(
    target: BrokerTarget, topics: list[str], workload: Workload, client_id: str
) -> Production:
    """`produce` in a thread. Cancelled (the run interrupted), it tells the thread to stop and
    waits a little for the producer to close while its brokers still answer (a thread left
    producing would hold the interpreter open; a producer closed after them logs failures)."""
    stop = threading.Event()
    loop = asyncio.get_running_loop()
    call = functools.partial(
        produce, target.bootstrap, topics, workload, client_id=client_id, stop=stop
    )
    producing = loop.run_in_executor(None, call)
    try:
        return await asyncio.shield(producing)
    except asyncio.CancelledError:
        stop.set()
        deadline = loop.time() + STOP_PRODUCING_S
        while not producing.done() and loop.time() < deadline:
            try:  # the loop's shutdown cancels every task again: the wait stays bounded
                await asyncio.wait([producing], timeout=deadline - loop.time())
            except asyncio.CancelledError:
                continue
        raise


async def _broker_metrics(
    target: BrokerTarget, topics: dict[str, int]
) -> list[PartitionMetric] | None:
    try:
        return await asyncio.to_thread(broker_metrics, target, topics)
    except UnsupportedOperation:
        return None


def _caught_up(
    run: VolumeRun, before: list[PartitionMetric]
) -> Callable[[list[PartitionMetric]], bool]:
    """Every record-counting source has counted every delivered record (meters and sampled
    log gauges may lag the traffic), and BytesOutPerSec has seen the read-back."""
    delivered = run.production.records()

    def counted(readings: list[PartitionMetric]) -> dict[str, float]:
        sums: dict[str, float] = {}
        for r in readings:
            if r.partition >= 0 and quantity_of(r.source, r.metric) == "records":
                sums[r.source] = sums.get(r.source, 0.0) + r.value
        return sums

    base = counted(before)

    def done(readings: list[PartitionMetric]) -> bool:
        sums = counted(readings)
        out = any(r.metric == BYTES_OUT and r.partition >= 0 for r in readings)
        return (
            bool(sums)
            and all(total - base.get(s, 0.0) >= delivered for s, total in sums.items())
            and (not run.read_back or out)
        )

    return done


async def _pushed(target: BrokerTarget, client_id: str, timeout: float = 3.0) -> ClientTelemetry:
    """The client's pushes, once its final (terminating) push has arrived or at the timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        records = await asyncio.to_thread(target.telemetry_received)
        final = any(r.client_id == client_id and r.terminating for r in records)
        if final or loop.time() > deadline:
            return await asyncio.to_thread(client_telemetry, target, client_id)
        await asyncio.sleep(0.2)


def _note_sources(run: VolumeRun, *, offsets: bool, broker: bool, telemetry: bool) -> None:
    """Say, per source, what was collected or why nothing was."""
    count: dict[str, int] = {}
    for m in run.samples:
        count[m.source] = count.get(m.source, 0) + 1
    run.notes["list_offsets"] = (
        f"{count.get('list_offsets', 0)} end offsets before and after"
        if offsets
        else f"{run.target} lacks partition_metrics: end offsets not sampled"
    )
    own = ", ".join(f"{s}: {n}" for s, n in sorted(count.items()) if s not in NOT_BROKER)
    if not broker:
        run.notes["partition_metrics"] = f"{run.target} reports no partition metrics of its own"
    elif run.trimmed:
        starts = [f"{t}-{p} at {start}" for (t, p), start in sorted(run.trimmed.items())]
        cut = ", ".join(starts[:4]) + (f" and {len(starts) - 4} more" if len(starts) > 4 else "")
        run.notes["partition_metrics"] = (
            f"{own or 'no'} readings; metrics.verbosity high for {sorted(run.topics)}; "
            f"{BYTES_OUT} not judged: {run.target} no longer holds the start of "
            f"{len(run.trimmed)} of {sum(run.topics.values())} partitions (log start {cut}), "
            "so not every record can leave it again. The librdkafka mock under the embedded "
            "targets keeps about 5 MiB or 100,000 batches per partition: fewer --records or "
            "smaller --value-bytes keep them all"
        )
    elif run.read_back:
        run.notes["partition_metrics"] = (
            f"{own or 'no'} readings; metrics.verbosity high for {sorted(run.topics)}; "
            f"{run.read_back} records read back (Fetch v4-v12) for {BYTES_OUT}"
        )
    else:
        run.notes["partition_metrics"] = f"{own or 'no'} readings (no kip977: no meters)"
    run.notes["client_telemetry"] = (
        run.telemetry.finding(run.production.client)
        if telemetry and run.telemetry
        else f"{run.target} has no CLIENT_METRICS admin and telemetry sink: not collected"
    )


def _write(run: VolumeRun) -> None:
    run.out_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        ledger_table(run.production.deliveries, run.workload.compression), run.ledger_path
    )
    pq.write_table(samples_table(run.samples), run.samples_path)
    (run.out_dir / RUN_FILE).write_text(json.dumps(run.describe(), indent=1), encoding="utf-8")


def compare(spark: Any, run: VolumeRun, tolerance: Any = None) -> dict[str, Any]:
    """The Spark comparison of this run, written next to its inputs (blocking); the summary
    carries run.json's facts under "run"."""
    from kconform.engine.volumes.compare import compare_volumes
    from kconform.engine.volumes.model import SUMMARY_FILE

    summary = compare_volumes(spark, run.ledger_path, run.samples_path, run.out_dir, tolerance)
    summary["run"] = run.describe()
    (run.out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary
