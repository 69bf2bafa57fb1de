"""KIP-977 on the broker: partition-level throughput meters (kip977.partition_meters.*).

Spec: KIP-977 "Part 2" (MessagesInPerSec, BytesInPerSec, BytesOutPerSec get a partition tag for the
topics a high-level entry selects; the topic-level meter is "kept the same way"); §F. Meters are
read through `target.partition_metrics()`: partition -1 is the topic-level meter.
"""

from __future__ import annotations

from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.broker.helpers import (
    eventually,
)
from kconform.suites.broker.helpers_kip977 import (
    BIN,
    BOUT,
    FORMAT,
    METERS,
    MSG,
    PART2,
    expect_partition_level,
    expect_topic_level_only,
    fetch,
    high,
    meters,
    meters_once,
    new_topic,
    produce,
    verbosity_for_case,
)

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
