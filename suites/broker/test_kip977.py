"""KIP-977 on the broker: the `metrics.verbosity` config and partition-level throughput meters.

Spec: KIP-977 "Part 1: Verbosity Level Control" (a dynamic broker config holding "a string
representing a JSON array"), "JSON Config Format" (`level` low/(medium)/high, `names`, `filters`
with `topics` or `topicPattern`), "Part 2" (MessagesInPerSec, BytesInPerSec, BytesOutPerSec get a
partition tag for the topics a high-level entry selects; the topic-level meter is "kept the same
way"), and its test plan; §F.

KIP-977 was approved but never merged into Apache Kafka (§F: apache/kafka#20397 closed
unmerged), so every case requires `Capability.KIP977` and an Apache broker reports `unsupported`.
The config is set on the BROKER resource with the empty name, the cluster-wide default: the KIP
"elected to make it central" and its CLI examples name no broker; the per-broker scope is INFO.
Meters are read through `target.partition_metrics()`: partition -1 is the topic-level meter.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder

from kconform.codecs.errors import ErrorCode, error_name
from kconform.codecs.messages import (
    ApiVersionsRequest,
    DescribeConfigsRequest,
    FetchRequest,
    IncrementalAlterConfigsRequest,
    MetadataRequest,
    ProduceRequest,
)
from kconform.engine.check import Check, Inconclusive
from kconform.engine.model import Level, case
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.admin import ApiRange
from kconform.fixtures.targets.base import BrokerTarget, Capability, PartitionMetric
from kconform.suites.broker.helpers import answer, eventually

BROKER, SET, DELETE = 4, 0, 1
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
            raise AssertionError(
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


# --- metrics.verbosity accepted and validated ------------------------------------------------


VALID = {
    "the KIP's example (as JSON)": [high("avro-topic-car", "avro-topic-bus", "avro-topic-plane",
                                         names="Bytes.*")],
    "a topicPattern filter": [{"level": "high", "names": ".*",
                               "filters": [{"topicPattern": "avro-topics-.*"}]}],
    "low, no filters": [{"level": "low", "names": ".*"}],
    "medium": [high("a", level="medium")],
    "duplicated entries": [high("a"), high("a")],
    "the default": [],
}  # fmt: skip


@case(
    "kip977.verbosity.accepted",
    rules=["kip977.verbosity.accepted"],
    title="Valid metrics.verbosity values are accepted as the cluster default and described back",
    spec=f"{FORMAT}; 'Part 1' (dynamic config, 'Querying existing config' via --describe)",
    level=Level.MUST,
    requires=CONFIG,
)
async def test_verbosity_accepted(target: BrokerTarget, check: Check) -> None:
    admin = await verbosity_for_case(check, [])
    for what, value in VALID.items():
        code, message = await admin.set_verbosity(json.dumps(value))
        check.expect(f"{what}: accepted", "NONE", answer(code, message), code == 0)
        described = await eventually(admin.verbosity, functools.partial(_json_is, value))
        check.expect(f"{what}: described", value, _json(described))


def _json_is(want: Any, text: str | None) -> bool:
    return bool(_json(text) == want)


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return text


@case(
    "kip977.verbosity.per_broker_scope",
    rules=["kip977.verbosity.scope"],
    title="metrics.verbosity set on one broker (resource name = its node id)",
    spec="KIP-977 'Part 1' ('We elected to make it central'; the scope is not specified): INFO",
    level=Level.INFO,
    requires=CONFIG,
)
async def test_verbosity_per_broker_scope(target: BrokerTarget, check: Check) -> None:
    admin = await broker(check)
    node = str(target.brokers[0].node_id)
    await restored_after(check, admin, node)
    code, message = await admin.set_verbosity(json.dumps([high("a")]), node)
    check.observe(f"IncrementalAlterConfigs BROKER {node!r}", answer(code, message))


@case(
    "kip977.verbosity.name_spelling",
    rules=["kip977.verbosity.name_spelling"],
    title="The KIP example's 'name' key (the format table says 'names')",
    spec=f"{FORMAT} ('names' in the table, 'name' in the examples): INFO",
    level=Level.INFO,
    requires=CONFIG,
)
async def test_verbosity_name_spelling(target: BrokerTarget, check: Check) -> None:
    admin = await verbosity_for_case(check, [])
    value = [{"level": "high", "name": "Bytes.*", "filters": [{"topics": ["a"]}]}]
    code, message = await admin.set_verbosity(json.dumps(value))
    check.observe("metrics.verbosity with 'name'", answer(code, message))


@dataclass(frozen=True)
class Invalid:
    value: str
    level: Level  # of the rejection: MUST where the KIP defines the values, SHOULD where it says
    why: str  # "should"


INVALID = {
    "not_json": Invalid('[{"level": "high"', Level.MUST, "'a config with JSON format'"),
    "not_array": Invalid('{"level": "high"}', Level.MUST, "'a string representing a JSON array'"),
    "unknown_level": Invalid('[{"level": "extreme", "filters": [{"topics": ["a"]}]}]', Level.MUST,
                             "level 'Valid Values: low, (medium), high'"),
    "invalid_regex": Invalid('[{"level": "high", "names": "(", "filters": [{"topics": ["a"]}]}]',
                             Level.SHOULD, "'All regex patterns ... should be java.util.regex-"
                             "compatible'"),
    "topics_and_pattern": Invalid(
        '[{"level": "high", "filters": [{"topics": ["a"], "topicPattern": "a"}]}]', Level.SHOULD,
        "'topicPattern and topics should not be used at the same time'"),
}  # fmt: skip


FORMAT_RULE, FILTERS_RULE = "kip977.verbosity.format", "kip977.verbosity.filters_valid"


def _invalid_cases(variant: str, spec: Invalid) -> tuple[Any, Any]:
    @case(
        f"kip977.verbosity.invalid.{variant}.rejected",
        rules=[FORMAT_RULE if spec.level is Level.MUST else FILTERS_RULE],
        title=f"metrics.verbosity {spec.value} is rejected and not applied",
        spec=f"{FORMAT}: {spec.why}",
        level=spec.level,
        requires=CONFIG,
    )
    async def rejected(target: BrokerTarget, check: Check) -> None:
        before = [high("a")]
        admin = await verbosity_for_case(check, before)
        code, message = await admin.set_verbosity(spec.value)
        check.expect("rejected", "an error code", answer(code, message), code != 0)
        check.expect("the value in force is unchanged", before, _json(await admin.verbosity()))

    @case(
        f"kip977.verbosity.invalid.{variant}.error_code",
        rules=["kip977.verbosity.error_code"],
        title=f"metrics.verbosity {spec.value} is answered INVALID_CONFIG",
        spec=f"{FORMAT} names no code; INVALID_CONFIG is Kafka's answer to a config value that "
        "fails validation (§D, ConfigurationControlManager): SHOULD",
        level=Level.SHOULD,
        requires=CONFIG,
    )
    async def error_code(target: BrokerTarget, check: Check) -> None:
        admin = await verbosity_for_case(check, [])
        code, message = await admin.set_verbosity(spec.value)
        check.expect("ErrorCode", "INVALID_CONFIG", answer(code, message),
                     code == ErrorCode.INVALID_CONFIG)  # fmt: skip

    rejected.__name__ = f"test_verbosity_invalid_{variant}_rejected"
    error_code.__name__ = f"test_verbosity_invalid_{variant}_error_code"
    return rejected, error_code


for _variant, _spec in INVALID.items():
    _rejected, _code = _invalid_cases(_variant, _spec)
    globals()[_rejected.__name__], globals()[_code.__name__] = _rejected, _code


# --- partition-level meters ----------------------------------------------------------------


@case(
    "kip977.partition_meters.matching_topic",
    rules=["kip977.meters.messages_in"],
    title="For a topic a high entry selects, produced traffic is metered per partition",
    spec=f"{PART2}: MessagesInPerSec 'Messages entered the partition', BytesInPerSec; 'Part 1' "
    "(high adds the partition tag to the topics the filters select)",
    level=Level.MUST,
    requires=METERS,
)
async def test_partition_meters_matching_topic(target: BrokerTarget, check: Check) -> None:
    topic, leaders = await new_topic(check, target)
    await verbosity_for_case(check, [high(topic)])
    counts = await produce(check, target, topic, leaders)
    m = await meters_once(target, topic, sum(counts.values()))
    check.expect(
        f"{topic}: topic-level MessagesInPerSec", sum(counts.values()), m.topic(MSG, topic)
    )
    expect_partition_level(check, m, topic, counts)


@case(
    "kip977.partition_meters.non_matching_topic",
    rules=["kip977.verbosity.filters_select"],
    title="A topic no entry selects keeps topic-level meters only",
    spec=f"{FORMAT} (filters '[] ... applies to nothing'; topics outside the filters); {PART2} "
    "(the topic-level meter 'will be kept the same way')",
    level=Level.MUST,
    requires=METERS,
)
async def test_partition_meters_non_matching_topic(target: BrokerTarget, check: Check) -> None:
    selected, _ = await new_topic(check, target, "selected")
    topic, leaders = await new_topic(check, target, "unselected")
    await verbosity_for_case(check, [high(selected), {"level": "high", "names": ".*"}])
    counts = await produce(check, target, topic, leaders)
    m = await meters_once(target, topic, sum(counts.values()))
    expect_topic_level_only(check, m, topic, sum(counts.values()))
    check.expect(f"{topic}: topic-level BytesInPerSec", True, (m.topic(BIN, topic) or 0) > 0)


@case(
    "kip977.verbosity.low_has_no_partition_tag",
    rules=["kip977.verbosity.low_untagged"],
    title="A topic selected only at level low gets no partition-level meters",
    spec="KIP-977 'Part 1' ('In the low settings, these tags will be assigned with an empty "
    "value'); Test Plan, unit test 3 ('The partition tag should be empty if default verbosity')",
    level=Level.MUST,
    requires=METERS,
)
async def test_low_has_no_partition_tag(target: BrokerTarget, check: Check) -> None:
    topic, leaders = await new_topic(check, target)
    await verbosity_for_case(check, [high(topic, level="low")])
    counts = await produce(check, target, topic, leaders)
    m = await meters_once(target, topic, sum(counts.values()))
    expect_topic_level_only(check, m, topic, sum(counts.values()))


@case(
    "kip977.verbosity.high_takes_precedence",
    rules=["kip977.verbosity.precedence"],
    title="A topic in both a low and a high entry is metered per partition, in either order",
    spec=f"{FORMAT}: 'the one that appears first in the sequence [high, medium, low] will take "
    "precedence'; 'JSON entries are ... order-irrelevant'",
    level=Level.MUST,
    requires=METERS,
)
async def test_high_takes_precedence(target: BrokerTarget, check: Check) -> None:
    first, first_leaders = await new_topic(check, target, "low-first")
    second, second_leaders = await new_topic(check, target, "high-first")
    await verbosity_for_case(check, [
        high(first, level="low"), high(first, second), high(second, level="low")])  # fmt: skip
    for topic, leaders in ((first, first_leaders), (second, second_leaders)):
        counts = await produce(check, target, topic, leaders)
        m = await meters_once(target, topic, sum(counts.values()))
        expect_partition_level(check, m, topic, counts)


@case(
    "kip977.verbosity.names_select_metrics",
    rules=["kip977.verbosity.filters_select"],
    title="'names' selects which meters get the partition tag (Bytes.*: not MessagesInPerSec)",
    spec=f"{FORMAT}: names, 'Pattern corresponding to the names of the metric series in scope'",
    level=Level.MUST,
    requires=METERS,
)
async def test_names_select_metrics(target: BrokerTarget, check: Check) -> None:
    topic, leaders = await new_topic(check, target)
    await verbosity_for_case(check, [high(topic, names="Bytes.*")])
    counts = await produce(check, target, topic, leaders)
    m = await meters_once(target, topic, sum(counts.values()))
    check.expect(f"{topic}: partition BytesInPerSec for every partition", sorted(counts),
                 sorted(p for p, v in m.partitions(BIN, topic).items() if v > 0))  # fmt: skip
    check.expect(f"{topic}: no partition-level MessagesInPerSec", {}, m.partitions(MSG, topic))


@case(
    "kip977.partition_meters.bytes_out",
    rules=["kip977.meters.bytes_out"],
    title="Fetched bytes are metered per partition (BytesOutPerSec) for a selected topic",
    spec=f"{PART2}: BytesOutPerSec 'Bytes retrieved from the partition'",
    level=Level.MUST,
    requires=METERS,
)
async def test_bytes_out(target: BrokerTarget, check: Check) -> None:
    topic, leaders = await new_topic(check, target)
    await verbosity_for_case(check, [high(topic)])
    counts = await produce(check, target, topic, leaders)
    await fetch(check, target, topic, leaders)
    m = await eventually(lambda: meters(target), lambda m: len(m.partitions(BOUT, topic)) == 3)
    bytes_out = m.partitions(BOUT, topic)
    check.expect(f"{topic}: partition BytesOutPerSec for every partition", sorted(counts),
                 sorted(p for p, v in bytes_out.items() if v > 0))  # fmt: skip
    check.expect(f"{topic}: partition BytesOutPerSec add up to the topic meter",
                 m.topic(BOUT, topic), sum(bytes_out.values()))  # fmt: skip


@case(
    "kip977.verbosity.dynamic_switch_off",
    rules=["kip977.verbosity.dynamic"],
    title="Setting the verbosity back to low removes the partition-level meters",
    spec="KIP-977 'Setting new config', alter example ('partition-level values will be removed'); "
    "Test Plan, integration test 3 (dynamic setting)",
    level=Level.MUST,
    requires=METERS,
)
async def test_dynamic_switch_off(target: BrokerTarget, check: Check) -> None:
    topic, leaders = await new_topic(check, target)
    admin = await verbosity_for_case(check, [high(topic)])
    counts = await produce(check, target, topic, leaders)
    m = await meters_once(target, topic, sum(counts.values()))
    check.require(
        f"{topic}: partition MessagesInPerSec while high", counts, m.partitions(MSG, topic)
    )
    code, message = await admin.set_verbosity(json.dumps([{"level": "low", "names": ".*"}]))
    check.require("switched to low", "NONE", answer(code, message), code == 0)
    m = await eventually(lambda: meters(target), lambda m: not m.partitions(MSG, topic))
    expect_topic_level_only(check, m, topic, sum(counts.values()))
