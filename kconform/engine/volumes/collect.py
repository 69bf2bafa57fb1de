"""Partition metrics from a target, as cumulative samples: the counters a volume is judged by.

Sources (the `source` column of the samples):

- `list_offsets`: each partition's end offset (ListOffsets, timestamp -1, at its leader). Every
  target with PARTITION_METRICS; §F: "the same information is available over the protocol".
- whatever `target.partition_metrics()` reports for the run's topics: `kip977` meters on the
  reference (MessagesInPerSec, BytesInPerSec, BytesOutPerSec; partition -1 is the topic-level
  meter), `log_end_offset`/`log_size`/`broker_topic` on real brokers. Merged across brokers as
  the kraft sink does: meters add up, log gauges take the leader's value.
- `client_telemetry`: partition- (or topic-) tagged points in what the producer pushed
  (KIP-714), read from the target's telemetry sink; delta sums are accumulated into cumulative
  values so every source reads the same way.

KIP-977 meters exist only for topics whose `metrics.verbosity` is high; `enable_partition_meters`
sets it for the run's topics as the KIP describes (IncrementalAlterConfigs on the BROKER resource
"", the cluster-wide dynamic default, adding one high entry with a `topics` filter to the entries
already there) and puts the previous value back afterwards.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import (
    ApiVersionsRequest,
    DescribeConfigsRequest,
    FetchRequest,
    MetadataRequest,
)
from kconform.codecs.otlp import OtlpDecodeError, flatten, parse_metrics_data
from kconform.codecs.records import RecordBatchHeader, read_batches
from kconform.errors import Unmet
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.admin import BROKER, AdminError, ApiRange, ClusterAdmin
from kconform.fixtures.targets.base import BrokerTarget, PartitionMetric, TargetError
from kconform.fixtures.targets.kraft_config import merge_partition_metrics

Connect = Callable[[int], Awaitable[KafkaConnection]]
"""Opens a (logged) connection to the target's i-th broker: `Check.connect` in a case."""

VERBOSITY = "metrics.verbosity"
DYNAMIC_DEFAULT_BROKER_CONFIG = 3  # DescribeConfigs ConfigSource of a cluster-wide default


async def admin_at(connect: Connect, index: int = 0) -> ClusterAdmin:
    """A ClusterAdmin on a new connection to broker `index` (ApiVersions v0: every broker and
    the librdkafka mock answer it correctly)."""
    connection = await connect(index)
    response = await connection.request(ApiVersionsRequest(), 0)
    apis = {k.api_key: ApiRange(k.min_version, k.max_version) for k in response.body.api_keys}
    return ClusterAdmin(connection, apis)


async def leaders(
    admin: ClusterAdmin, topic: str, partitions: int, timeout: float = 5.0
) -> dict[int, int]:
    """Partition -> leader node id, once Metadata lists a leader for every partition."""
    api = admin.apis.get(3)
    if api is None:
        raise TargetError("the broker does not advertise Metadata")
    version = min(8, api.max_version)  # the mock's v13 response carries a trailing byte
    request = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False
    )
    deadline = time.monotonic() + timeout
    while True:
        body = (await admin.connection.request(request, version)).body
        found = {
            p.partition_index: p.leader_id
            for t in body.topics
            if t.name == topic and not t.error_code
            for p in t.partitions
            if not p.error_code and p.leader_id >= 0
        }
        if len(found) >= partitions or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.1)


async def end_offsets(
    target: BrokerTarget, connect: Connect, placement: Mapping[str, Mapping[int, int]]
) -> list[PartitionMetric]:
    """`list_offsets` samples: every partition's end offset, asked of its leader."""
    index = {b.node_id: i for i, b in enumerate(target.brokers)}
    by_leader: dict[int, dict[str, list[int]]] = {}
    for topic, partitions in placement.items():
        for partition, node in partitions.items():
            by_leader.setdefault(node, {}).setdefault(topic, []).append(partition)
    out: list[PartitionMetric] = []
    for node, topics in sorted(by_leader.items()):
        admin = await admin_at(connect, index.get(node, 0))
        for topic, numbers in topics.items():
            offsets = await _end_offsets_retrying(admin, topic, sorted(numbers))
            now = time.time()
            out += [
                PartitionMetric("list_offsets", topic, p, "end_offset", float(o), now)
                for p, o in sorted(offsets.items())
            ]
        await admin.connection.close()
    return out


RETRIABLE = frozenset({
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.LEADER_NOT_AVAILABLE,
})  # fmt: skip
"""Errors a leader answers while it has not yet applied a new topic from the metadata log
(Kafka's clients retry them too): another broker's Metadata can run ahead of the leader's."""
RETRY_FOR = 15.0


async def _end_offsets_retrying(
    admin: ClusterAdmin, topic: str, partitions: list[int]
) -> dict[int, int]:
    deadline = time.monotonic() + RETRY_FOR
    while True:
        try:
            return await admin.end_offsets(topic, partitions)
        except AdminError as exc:
            if exc.error_code not in RETRIABLE or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.2)


@dataclass
class ReadBack:
    """What `read_back` read, and the partitions whose log no longer starts at offset 0."""

    records: int = 0
    trimmed: dict[tuple[str, int], int] = field(default_factory=dict)  # -> log start offset


class LogTrimmed(Unmet):
    """The broker answered OFFSET_OUT_OF_RANGE: its log of the partition starts later."""

    def __init__(self, log_start: int) -> None:
        super().__init__(f"log starts at {log_start}")
        self.log_start = log_start


async def read_back(
    target: BrokerTarget,
    connect: Connect,
    placement: Mapping[str, Mapping[int, int]],
    ends: Mapping[tuple[str, int], int],
) -> ReadBack:
    """Fetch every partition from offset 0 to its end at its leader.

    Why: BytesOutPerSec moves only when records leave the broker, and the byte bound holds only
    if each batch leaves once: one sequential reader, fetch limits far above the data. Fetch
    v4-v12 names topics; from v13 a fetch names topic ids, which the reference's `topics`
    filter does not resolve (so a librdkafka 2.16 consumer, fetching at v13+, gets no
    partition-level BytesOutPerSec there). A partition whose log the target has already cut at
    the front (retention: librdkafka's mock keeps about 5 MiB or 100,000 batches per partition,
    rdkafka_mock.c) cannot give every batch back; it is listed in `trimmed`, not read.
    """
    index = {b.node_id: i for i, b in enumerate(target.brokers)}
    done = ReadBack()
    for topic, partitions in placement.items():
        for partition, node in sorted(partitions.items()):
            end = ends.get((topic, partition), 0)
            if end <= 0:
                continue
            admin = await admin_at(connect, index.get(node, 0))
            offset = 0
            try:
                while offset < end:
                    got, offset = await _fetch(admin, topic, partition, offset)
                    if not got:
                        raise TargetError(f"Fetch {topic}-{partition} at {offset} returned nothing")
                    done.records += got
            except LogTrimmed as trimmed:
                done.trimmed[(topic, partition)] = trimmed.log_start
            await admin.connection.close()
    return done


async def _fetch(admin: ClusterAdmin, topic: str, partition: int, offset: int) -> tuple[int, int]:
    """One Fetch from `offset`: (records read, next offset). LogTrimmed when the log starts
    after `offset` (at offset 0 only: the run's topics are fresh and nobody else writes)."""
    api = admin.apis.get(1)
    if api is None or api.max_version < 4:
        raise TargetError("the broker does not speak Fetch v4-v12")
    req = FetchRequest
    body = req(
        replica_id=-1,
        max_wait_ms=100,
        min_bytes=1,
        max_bytes=64 << 20,
        isolation_level=0,
        topics=[
            req.FetchTopic(
                topic=topic,
                partitions=[
                    req.FetchPartition(
                        partition=partition, fetch_offset=offset, partition_max_bytes=16 << 20
                    )
                ],
            )
        ],
    )
    response = (await admin.connection.request(body, min(12, api.max_version))).body
    got = 0
    for t in response.responses:
        for p in t.partitions:
            if p.error_code == ErrorCode.OFFSET_OUT_OF_RANGE and offset == 0:
                raise LogTrimmed(p.log_start_offset)
            if p.error_code:
                raise TargetError(f"Fetch {topic}-{partition}: error {p.error_code}")
            for batch in read_batches(p.records):
                if isinstance(batch, RecordBatchHeader):
                    got += batch.records_count
                    offset = max(offset, batch.base_offset + batch.last_offset_delta + 1)
    return got, offset


def broker_metrics(target: BrokerTarget, topics: Collection[str]) -> list[PartitionMetric]:
    """The target's own partition metrics for `topics`, one reading per counter, stamped now."""
    readings = [m for m in target.partition_metrics() if m.topic in topics]
    merged = merge_partition_metrics([readings])  # the reference reports each node's meters
    now = time.time()
    return [PartitionMetric(m.source, m.topic, m.partition, m.metric, m.value, now) for m in merged]


async def settled_metrics(
    target: BrokerTarget,
    topics: Collection[str],
    done: Callable[[list[PartitionMetric]], bool],
    timeout: float = 5.0,
) -> list[PartitionMetric]:
    """`broker_metrics` once `done` holds (meters may lag the traffic), or at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        readings = await asyncio.to_thread(broker_metrics, target, topics)
        if done(readings) or time.monotonic() > deadline:
            return readings
        await asyncio.sleep(0.2)


async def enable_partition_meters(
    admin: ClusterAdmin, topics: Collection[str]
) -> Callable[[], Awaitable[None]]:
    """Set metrics.verbosity high for `topics` (keeping the entries in force); returns the
    coroutine function that restores the value set before (or deletes ours)."""
    previous = await _dynamic_default(admin)
    entries: list[Any] = []
    if previous:
        try:
            parsed = json.loads(previous)
            entries = parsed if isinstance(parsed, list) else []
        except ValueError:
            entries = []
    ours = {"level": "high", "names": ".*", "filters": [{"topics": sorted(topics)}]}
    await admin.set_broker_config(VERBOSITY, json.dumps([*entries, ours]))

    async def restore() -> None:
        if not admin.connection.closed:
            await admin.set_broker_config(VERBOSITY, previous)

    return restore


async def _dynamic_default(admin: ClusterAdmin) -> str | None:
    """metrics.verbosity as set on the cluster-wide default itself (not inherited)."""
    req = DescribeConfigsRequest
    body = req(
        resources=[
            req.DescribeConfigsResource(
                resource_type=BROKER, resource_name="", configuration_keys=[VERBOSITY]
            )
        ]
    )
    response = await admin._call(body, 32)
    (result,) = response.results
    return next(
        (
            c.value
            for c in result.configs
            if c.name == VERBOSITY and c.config_source == DYNAMIC_DEFAULT_BROKER_CONFIG
        ),
        None,
    )


@dataclass
class ClientTelemetry:
    """What one client pushed: partition/topic-tagged samples, and what else it sent."""

    pushes: int = 0
    undecodable: int = 0
    metric_names: set[str] = field(default_factory=set)
    samples: list[PartitionMetric] = field(default_factory=list)

    def finding(self, client: str) -> str:
        tagged = sorted({s.metric for s in self.samples})
        if not self.pushes:
            return f"{client}: no push reached the telemetry sink"
        if tagged:
            return f"{client}: {len(tagged)} topic/partition-tagged metrics: {', '.join(tagged)}"
        return (
            f"{client}: none of the {len(self.metric_names)} metrics in its {self.pushes} "
            f"push{'es' if self.pushes != 1 else ''} "
            f"carries a topic or partition attribute ({', '.join(sorted(self.metric_names))})"
        )


def client_telemetry(target: BrokerTarget, client_id: str) -> ClientTelemetry:
    """Parse every push `client_id` made; keep points tagged with `topic` (and `partition`)."""
    found = ClientTelemetry()
    running: dict[tuple[str, str, int], float] = {}
    for record in sorted(target.telemetry_received(), key=lambda r: r.received_at):
        if record.client_id != client_id:
            continue
        found.pushes += 1
        try:
            points = flatten(parse_metrics_data(record.payload))
        except OtlpDecodeError:
            found.undecodable += 1
            continue
        for point in points:
            found.metric_names.add(point.name)
            topic = point.attributes.get("topic")
            if not isinstance(topic, str) or not isinstance(point.value, int | float):
                continue
            try:
                partition = int(point.attributes.get("partition", -1))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                continue
            key = (point.name, topic, partition)
            value = float(point.value)
            if point.kind == "sum" and point.temporality == "delta":
                value = running.get(key, 0.0) + value  # cumulative, like every other source
            running[key] = value
            # the point's own time (epoch); the sink's received_at is a monotonic clock
            when = point.time_unix_nano / 1e9 if point.time_unix_nano else time.time()
            found.samples.append(
                PartitionMetric("client_telemetry", topic, partition, point.name, value, when)
            )
    return found
