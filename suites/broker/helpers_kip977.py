"""What the KIP-977 cases share: the metrics.verbosity config over the case's own connection,
Produce and Fetch traffic to each partition's leader, and the meters a target reports.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder

from kconform.codecs.errors import error_name
from kconform.codecs.messages import (
    ApiVersionsRequest,
    DescribeConfigsRequest,
    FetchRequest,
    IncrementalAlterConfigsRequest,
    MetadataRequest,
    ProduceRequest,
)
from kconform.engine.check import Check
from kconform.errors import Inconclusive, SubjectViolation
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.admin import BROKER, DELETE, SET, ApiRange
from kconform.fixtures.targets.base import BrokerTarget, Capability, PartitionMetric
from kconform.suites.broker.helpers import (
    answer,
    eventually,
)

DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 2, 3  # DescribeConfigs ConfigSource
VERBOSITY = "metrics.verbosity"
MSG, BIN, BOUT = "MessagesInPerSec", "BytesInPerSec", "BytesOutPerSec"
FORMAT = "KIP-977 'JSON Config Format'"
PART2 = "KIP-977 'Part 2: New Metrics with Attached Partition Tag'"
CONFIG = [Capability.KIP977]
METERS = [Capability.KIP977, Capability.TOPIC_ADMIN]
PARTITIONS = 3


# --- the config, over the case's own connection ----------------------------------------------


@dataclass
class Broker:
    """One logged connection and the versions the broker speaks."""

    connection: KafkaConnection
    apis: dict[int, ApiRange]

    def version(self, api_key: int, low: int, high: int) -> int:
        theirs = self.apis.get(api_key)
        if theirs is None or max(low, theirs.min_version) > min(high, theirs.max_version):
            raise Inconclusive(f"no version of api {api_key} in {low}-{high} in common")
        return min(high, theirs.max_version)

    async def set_verbosity(self, value: str | None, name: str = "") -> tuple[int, str | None]:
        """SET (or DELETE, for None) metrics.verbosity on BROKER `name` ("" = cluster default)."""
        req = IncrementalAlterConfigsRequest
        config = req.AlterableConfig(
            name=VERBOSITY, config_operation=DELETE if value is None else SET, value=value
        )
        body = req(resources=[req.AlterConfigsResource(
            resource_type=BROKER, resource_name=name, configs=[config])])  # fmt: skip
        response = await self.connection.request(body, self.version(44, 0, 1))
        (result,) = response.body.responses
        return int(result.error_code), result.error_message

    async def verbosity(self, name: str = "") -> str | None:
        """metrics.verbosity as set dynamically on BROKER `name` itself, None if not set there.

        Describing a node also reports the values it inherits (cluster default, static, the
        default); only the one set at this scope is what a case must put back afterwards.
        """
        req = DescribeConfigsRequest
        body = req(resources=[req.DescribeConfigsResource(
            resource_type=BROKER, resource_name=name, configuration_keys=[VERBOSITY])])  # fmt: skip
        response = await self.connection.request(body, self.version(32, 1, 4))
        (result,) = response.body.results
        if result.error_code:
            raise SubjectViolation(
                f"DescribeConfigs BROKER {name!r}: {error_name(result.error_code)}"
            )
        source = DYNAMIC_DEFAULT_BROKER_CONFIG if name == "" else DYNAMIC_BROKER_CONFIG
        return next(
            (c.value for c in result.configs if c.name == VERBOSITY and c.config_source == source),
            None,
        )


async def broker(check: Check, index: int = 0) -> Broker:
    connection = await check.connect(index)
    response = await connection.request(ApiVersionsRequest(), 0)
    apis = {k.api_key: ApiRange(k.min_version, k.max_version) for k in response.body.api_keys}
    return Broker(connection, apis)


async def restored_after(check: Check, admin: Broker, name: str = "") -> None:
    """Put BROKER `name`'s metrics.verbosity back as it was, once the case is over."""
    previous = await admin.verbosity(name)

    async def restore() -> None:
        if not admin.connection.closed:
            await admin.set_verbosity(previous, name)

    check.defer(restore)


async def verbosity_for_case(check: Check, value: list[Any] | str) -> Broker:
    """Set metrics.verbosity for this case (restored after it); require that it was accepted."""
    admin = await broker(check)
    await restored_after(check, admin)
    text = value if isinstance(value, str) else json.dumps(value)
    code, message = await admin.set_verbosity(text)
    check.require(f"metrics.verbosity={text} accepted", "NONE", answer(code, message), code == 0)
    return admin


def high(*topics: str, names: str = ".*", level: str = "high") -> dict[str, Any]:
    return {"level": level, "names": names, "filters": [{"topics": list(topics)}]}


# --- traffic: Produce and Fetch through the codec, to each partition's leader -----------------


def batch(records: int) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    for i in range(records):
        builder.append(i, timestamp=int(time.time() * 1000), key=None, value=b"kip977-" * 4,
                       headers=[])  # fmt: skip
    return bytes(builder.build())


async def new_topic(
    check: Check, target: BrokerTarget, label: str = "kip977"
) -> tuple[str, dict[int, int]]:
    """A topic of this case, and the node id leading each of its partitions."""
    topic = check.fresh(label)
    await asyncio.to_thread(target.create_topic, topic, PARTITIONS)
    admin = await broker(check)
    version = admin.version(3, 4, 8)
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                              allow_auto_topic_creation=False)  # fmt: skip

    async def metadata() -> dict[int, int]:
        body = (await admin.connection.request(request, version)).body
        return {
            p.partition_index: p.leader_id
            for t in body.topics if t.name == topic and not t.error_code
            for p in t.partitions if not p.error_code and p.leader_id >= 0
        }  # fmt: skip

    leaders = await eventually(metadata, lambda found: len(found) == PARTITIONS)
    check.require(f"leaders of {topic}'s {PARTITIONS} partitions", PARTITIONS, len(leaders))
    return topic, leaders


async def to_leader(check: Check, target: BrokerTarget, node_id: int) -> Broker:
    index = next(i for i, b in enumerate(target.brokers) if b.node_id == node_id)
    return await broker(check, index)


async def produce(
    check: Check, target: BrokerTarget, topic: str, leaders: Mapping[int, int]
) -> dict[int, int]:
    """Produce partition + 2 records to each partition (acks=1); records per partition."""
    counts = {p: p + 2 for p in sorted(leaders)}
    req = ProduceRequest
    for partition, records in counts.items():
        leader = await to_leader(check, target, leaders[partition])
        body = req(transactional_id=None, acks=1, timeout_ms=5000, topic_data=[
            req.TopicProduceData(name=topic, partition_data=[
                req.PartitionProduceData(index=partition, records=batch(records))])])  # fmt: skip
        response = await leader.connection.request(body, leader.version(0, 3, 8))
        codes = [p.error_code for t in response.body.responses for p in t.partition_responses]
        check.require(f"Produce {records} records to {topic}-{partition}", [0], codes)
    return counts


async def fetch(check: Check, target: BrokerTarget, topic: str, leaders: Mapping[int, int]) -> None:
    """Fetch every partition from offset 0 at its leader."""
    req = FetchRequest
    for partition, node_id in sorted(leaders.items()):
        leader = await to_leader(check, target, node_id)
        body = req(replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=1 << 20,
                   isolation_level=0, topics=[req.FetchTopic(topic=topic, partitions=[
                       req.FetchPartition(partition=partition, fetch_offset=0,
                                          partition_max_bytes=1 << 20)])])  # fmt: skip
        response = await leader.connection.request(body, leader.version(1, 4, 11))
        codes = [p.error_code for t in response.body.responses for p in t.partitions]
        check.require(f"Fetch {topic}-{partition}", [0], codes)


# --- the meters --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Meters:
    """Meter counts summed over the brokers: each broker meters the traffic it serves."""

    readings: tuple[PartitionMetric, ...]

    def _sum(self, metric: str, topic: str) -> dict[int, float]:
        totals: dict[int, float] = {}
        for r in self.readings:
            if r.metric == metric and r.topic == topic:
                totals[max(r.partition, -1)] = totals.get(max(r.partition, -1), 0.0) + r.value
        return totals

    def partitions(self, metric: str, topic: str) -> dict[int, float]:
        return {p: v for p, v in self._sum(metric, topic).items() if p >= 0}

    def topic(self, metric: str, topic: str) -> float | None:
        return self._sum(metric, topic).get(-1)


async def meters(target: BrokerTarget) -> Meters:
    return Meters(tuple(await asyncio.to_thread(target.partition_metrics)))


async def meters_once(target: BrokerTarget, topic: str, total: int) -> Meters:
    """The meters once the topic-level MessagesInPerSec has counted `total` records."""
    return await eventually(lambda: meters(target), lambda m: m.topic(MSG, topic) == total)


def expect_partition_level(check: Check, m: Meters, topic: str, counts: Mapping[int, int]) -> None:
    """MessagesInPerSec per partition as produced; BytesInPerSec per partition adding up."""
    check.expect(f"{topic}: partition MessagesInPerSec", dict(counts), m.partitions(MSG, topic))
    bytes_in = m.partitions(BIN, topic)
    check.expect(f"{topic}: partition BytesInPerSec for every partition", sorted(counts),
                 sorted(p for p, v in bytes_in.items() if v > 0))  # fmt: skip
    check.expect(f"{topic}: partition BytesInPerSec add up to the topic meter",
                 m.topic(BIN, topic), sum(bytes_in.values()))  # fmt: skip


def expect_topic_level_only(check: Check, m: Meters, topic: str, total: int) -> None:
    check.expect(f"{topic}: topic-level MessagesInPerSec", total, m.topic(MSG, topic))
    for metric in (MSG, BIN, BOUT):
        check.expect(f"{topic}: no partition-level {metric}", {}, m.partitions(metric, topic))
