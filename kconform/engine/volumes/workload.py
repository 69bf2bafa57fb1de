"""A known volume through a real client, and the ledger its delivery reports prove.

KIP-977's motivation is keyed traffic that overloads some partitions while the topic-level
meter looks fine, so the workload is keyed, with a Zipf key distribution: a few keys carry most
records and the partitions they hash to are hot. The producer is idempotent with acks=all, so a
record is appended exactly once whatever the retries, and each delivery report names the
partition and offset it got: the ledger is ground truth, not an estimate.

The client is confluent-kafka (librdkafka), run in a thread of this process rather than through
the driver contract (`fixtures/clients`): the contract's `produce` scenario sends unkeyed values
of one size at a rate and its `delivered` events carry no key or value sizes, and the ledger
needs both. Values are random bytes (incompressible), keys `key-<rank>`; the partitioner is
murmur2, so the hot partitions are where a Java producer would put the same keys.

The default Zipf exponent (1.8 over 64 keys) gives the top key about half the records, so with
3 partitions one is clearly hot (about 60% of its topic against the 50% threshold).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

from kconform.engine.volumes.model import LEDGER_SCHEMA, SAMPLES_SCHEMA
from kconform.errors import UsageError
from kconform.fixtures.targets.base import PartitionMetric


@dataclass(frozen=True)
class Workload:
    """What to produce: `records` per topic, keys drawn Zipf(`zipf`) from `keys` keys."""

    topics: int = 2
    partitions: int = 3
    records: int = 300
    value_bytes: tuple[int, int] = (64, 1024)
    keys: int = 64
    zipf: float = 1.8
    seed: int = 977
    compression: str = "none"
    linger_ms: int = 5

    def __post_init__(self) -> None:
        low, high = self.value_bytes
        if min(self.topics, self.partitions, self.records, self.keys) < 1 or not 0 <= low <= high:
            raise UsageError(f"not a workload: {self}")

    def plan(self) -> list[tuple[int, bytes, int]]:
        """(topic index, key, value size) per record, the same for the same seed."""
        rng = random.Random(self.seed)
        weights = [1.0 / (rank**self.zipf) for rank in range(1, self.keys + 1)]
        out = []
        for topic in range(self.topics):
            ranks = rng.choices(range(self.keys), weights, k=self.records)
            out += [(topic, f"key-{r}".encode(), rng.randint(*self.value_bytes)) for r in ranks]
        rng.shuffle(out)  # topics interleaved, as an application would send them
        return out


@dataclass(frozen=True)
class Delivery:
    topic: str
    partition: int
    offset: int
    key_bytes: int
    value_bytes: int
    timestamp: float  # when the delivery report arrived (harness clock)


@dataclass
class Production:
    """What the producer did: its delivery reports and anything that went wrong."""

    client_id: str
    client: str  # implementation and version, for the report
    deliveries: list[Delivery] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def records(self) -> int:
        return len(self.deliveries)

    def end_offsets(self) -> dict[tuple[str, int], int]:
        """The offset after the last delivered record, per partition."""
        ends: dict[tuple[str, int], int] = {}
        for d in self.deliveries:
            key = (d.topic, d.partition)
            ends[key] = max(ends.get(key, 0), d.offset + 1)
        return ends


def produce(
    bootstrap: str,
    topics: Sequence[str],
    workload: Workload,
    *,
    client_id: str,
    config: Mapping[str, Any] | None = None,
    timeout: float = 30.0,
    stop: threading.Event | None = None,
) -> Production:
    """Produce the workload and wait for every delivery report (blocking: run it in a thread).
    The producer is closed before returning, so a KIP-714 client has sent its final push.
    `stop` set (the run interrupted) ends it early: a thread still producing, or waiting for a
    stopped broker to drain its queue, would keep the interpreter from exiting."""
    stopped = stop.is_set if stop is not None else lambda: False
    import confluent_kafka

    lock = threading.Lock()
    done = Production(
        client_id,
        f"confluent-kafka {confluent_kafka.version()} "
        f"(librdkafka {confluent_kafka.libversion()[0]})",
    )

    def delivered(error: Any, message: Any) -> None:
        with lock:
            if error is not None:
                done.errors.append(f"{message.topic()}-{message.partition()}: {error}")
                return
            done.deliveries.append(
                Delivery(
                    message.topic(),
                    message.partition(),
                    message.offset(),
                    len(message.key() or b""),
                    len(message.value() or b""),
                    time.time(),
                )
            )

    def on_error(error: Any) -> None:
        with lock:
            done.errors.append(f"client error: {error}")

    plan = workload.plan()  # seconds for millions of records: stopping is checked after it
    if stopped():
        return done
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": client_id,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": workload.linger_ms,
            "compression.type": workload.compression,
            "partitioner": "murmur2_random",
            "log_level": 3,
            "error_cb": on_error,
            **(config or {}),
        }
    )
    rng = random.Random(workload.seed + 1)
    started = time.monotonic()
    try:
        for topic, key, size in plan:
            value = rng.randbytes(size)
            while not stopped():
                try:
                    producer.produce(topics[topic], value, key, on_delivery=delivered)
                    break
                except BufferError:  # the local queue is full: let deliveries drain it
                    producer.poll(0.05)
            if stopped():
                break
            producer.poll(0)
        deadline = time.monotonic() + timeout
        left = len(producer)
        while left and not stopped() and time.monotonic() < deadline:
            left = producer.flush(min(0.5, max(0.0, deadline - time.monotonic())))
        if left:
            done.errors.append(f"{left} records undelivered after {timeout:.0f}s")
    finally:
        done.seconds = time.monotonic() - started
        if stopped():  # close() flushes: drop what is queued instead (up to 100,000 records)
            producer.purge()
            producer.poll(0)
        producer.close()
    return done


def ledger_table(deliveries: Iterable[Delivery], compression: str) -> pa.Table:
    """One row per contiguous offset range of each partition (LEDGER_SCHEMA)."""
    rows: list[dict[str, Any]] = []
    ordered = sorted(deliveries, key=lambda d: (d.topic, d.partition, d.offset))
    for (topic, partition), group in groupby(ordered, key=lambda d: (d.topic, d.partition)):
        run: list[Delivery] = []
        for d in group:
            if run and d.offset != run[-1].offset + 1:
                rows.append(_range(topic, partition, run, compression))
                run = []
            run.append(d)
        rows.append(_range(topic, partition, run, compression))
    return pa.Table.from_pylist(rows, schema=LEDGER_SCHEMA)


def _range(topic: str, partition: int, run: list[Delivery], compression: str) -> dict[str, Any]:
    keys, values = sum(d.key_bytes for d in run), sum(d.value_bytes for d in run)
    return {
        "topic": topic,
        "partition": partition,
        "first_offset": run[0].offset,
        "last_offset": run[-1].offset,
        "records": len(run),
        "key_bytes": keys,
        "value_bytes": values,
        "bytes": keys + values,
        "first_delivery": min(d.timestamp for d in run),
        "last_delivery": max(d.timestamp for d in run),
        "compression": compression,
    }


def samples_table(samples: Iterable[PartitionMetric]) -> pa.Table:
    """PartitionMetrics as SAMPLES_SCHEMA rows."""
    rows = [
        {
            "source": s.source,
            "topic": s.topic,
            "partition": s.partition,
            "metric": s.metric,
            "value": float(s.value),
            "timestamp": float(s.timestamp),
        }
        for s in samples
    ]
    return pa.Table.from_pylist(rows, schema=SAMPLES_SCHEMA)
