"""The volume run's pieces without a broker: the workload plan, the ledger, client telemetry.

The ledger is the ground truth every verdict rests on, so its arithmetic (contiguous ranges,
key + value bytes) is pinned here; client telemetry is exercised with the partition-tagged
producer metric of KIP-714's revisions, which no shipped client sends (librdkafka's producer
metrics carry no topic or partition attribute, §E.2), so a fake sink stands in for one.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest

from kconform.codecs.otlp import build_metrics_data, counter, gauge
from kconform.engine.volumes.collect import client_telemetry
from kconform.engine.volumes.model import LEDGER_SCHEMA, SAMPLES_SCHEMA
from kconform.engine.volumes.workload import (
    Delivery,
    Production,
    Workload,
    ledger_table,
    samples_table,
)
from kconform.fixtures.targets.base import PartitionMetric, SinkRecord

SUCCESS = "org.apache.kafka.client.producer.partition.record.success"


def test_the_plan_is_deterministic_keyed_and_skewed() -> None:
    workload = Workload(topics=2, records=500, keys=64, zipf=1.8)
    plan = workload.plan()
    assert plan == workload.plan() and len(plan) == 1000
    assert Counter(topic for topic, _, _ in plan) == {0: 500, 1: 500}
    keys = Counter(key for _, key, _ in plan)
    assert keys.most_common(1)[0][0] == b"key-0"
    assert 0.4 < keys[b"key-0"] / 1000 < 0.65  # Zipf(1.8): the top key is about half
    assert all(64 <= size <= 1024 for _, _, size in plan)
    assert Workload(seed=1).plan() != plan


@pytest.mark.parametrize("bad", [{"topics": 0}, {"records": 0}, {"value_bytes": (10, 5)}])
def test_impossible_workloads_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not a workload"):
        Workload(**bad)


def delivery(topic: str, partition: int, offset: int, key: int = 5, value: int = 100) -> Delivery:
    return Delivery(topic, partition, offset, key, value, 1_800_000_000.0 + offset)


def test_the_ledger_has_one_row_per_contiguous_offset_range() -> None:
    deliveries = [delivery("a", 0, o) for o in (3, 0, 1, 2, 7, 8)] + [delivery("b", 1, 0, 0, 9)]
    table = ledger_table(deliveries, "none")
    assert table.schema == LEDGER_SCHEMA
    rows = table.to_pylist()
    assert [
        (r["topic"], r["partition"], r["first_offset"], r["last_offset"], r["records"])
        for r in rows
    ] == [("a", 0, 0, 3, 4), ("a", 0, 7, 8, 2), ("b", 1, 0, 0, 1)]
    assert rows[0]["bytes"] == 4 * 105 and rows[0]["key_bytes"] == 20
    assert rows[1]["first_delivery"] == 1_800_000_007.0
    production = Production("c", "client", deliveries)
    assert production.end_offsets() == {("a", 0): 9, ("b", 1): 1}


def test_samples_keep_the_partition_metric_fields() -> None:
    table = samples_table([PartitionMetric("kip977", "t", -1, "BytesInPerSec", 12, 3.5)])
    assert table.schema == SAMPLES_SCHEMA
    assert table.to_pylist() == [
        {
            "source": "kip977",
            "topic": "t",
            "partition": -1,
            "metric": "BytesInPerSec",
            "value": 12.0,
            "timestamp": 3.5,
        }
    ]


class Sink:
    """A target whose telemetry sink holds the given pushes."""

    def __init__(self, *pushes: tuple[str, bytes]) -> None:
        self.records = [
            SinkRecord(1, "id", 1, False, 0, payload, client_id=client, received_at=i)
            for i, (client, payload) in enumerate(pushes)
        ]

    def telemetry_received(self) -> list[SinkRecord]:
        return self.records


def push(*points: Any) -> bytes:
    return build_metrics_data(list(points))


def test_partition_tagged_delta_counters_become_cumulative_samples() -> None:
    now = time.time_ns()
    tags = {"topic": "t", "partition": 2, "acks": "all"}
    first = push(
        counter(SUCCESS, 5, delta=True, time_unix_nano=now, attributes=tags),
        gauge("org.apache.kafka.producer.record.queue.time.avg", 1.5, time_unix_nano=now),
    )
    second = push(
        counter(SUCCESS, 7, delta=True, time_unix_nano=now + 10**9, attributes=tags),
        counter(SUCCESS, 4, delta=True, time_unix_nano=now + 10**9, attributes={"topic": "t"}),
    )
    found = client_telemetry(Sink(("me", first), ("other", first), ("me", second)), "me")  # type: ignore[arg-type]
    assert found.pushes == 2 and found.undecodable == 0
    assert [(s.topic, s.partition, s.value) for s in found.samples] == [
        ("t", 2, 5.0),
        ("t", 2, 12.0),
        ("t", -1, 4.0),
    ]
    assert found.samples[1].timestamp == pytest.approx((now + 10**9) / 1e9)
    assert "1 topic/partition-tagged metrics" in found.finding("client x")


def test_a_client_without_partition_metrics_is_reported_as_such() -> None:
    payload = push(gauge("org.apache.kafka.producer.record.queue.time.avg", 1.0, time_unix_nano=1))
    found = client_telemetry(Sink(("me", payload), ("me", b"\xff\xff")), "me")  # type: ignore[arg-type]
    assert (found.pushes, found.undecodable, found.samples) == (2, 1, [])
    assert "none of the 1 metrics in its 2 pushes carries a topic or partition" in found.finding(
        "c"
    )
    assert "no push reached" in client_telemetry(Sink(), "me").finding("c")  # type: ignore[arg-type]
