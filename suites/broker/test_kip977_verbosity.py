"""KIP-977 on the broker: the `metrics.verbosity` config (kip977.verbosity.*).

Spec: KIP-977 "Part 1: Verbosity Level Control" (a dynamic broker config holding "a string
representing a JSON array"), "JSON Config Format" (`level` low/(medium)/high, `names`, `filters`
with `topics` or `topicPattern`), "Part 2" (MessagesInPerSec, BytesInPerSec, BytesOutPerSec get a
partition tag for the topics a high-level entry selects; the topic-level meter is "kept the same
way"), and its test plan; §F.

KIP-977 was approved but never merged into Apache Kafka (§F: apache/kafka#20397 closed unmerged),
so every case requires `Capability.KIP977` and an Apache broker reports `unsupported`. The config
is set on the BROKER resource with the empty name, the cluster-wide default: the KIP "elected to
make it central" and its CLI examples name no broker; the per-broker scope is INFO. Meters are read
through `target.partition_metrics()`: partition -1 is the topic-level meter.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.engine.check import Check
from kconform.engine.model import Family, Level, case
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.broker.helpers import (
    answer,
    eventually,
)
from kconform.suites.broker.helpers_kip977 import (
    BIN,
    CONFIG,
    FORMAT,
    METERS,
    MSG,
    broker,
    expect_partition_level,
    expect_topic_level_only,
    high,
    meters,
    meters_once,
    new_topic,
    produce,
    restored_after,
    verbosity_for_case,
)

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


def _rejected_case(case_id: str, variant: str) -> Any:
    spec = INVALID[variant]

    @case(
        case_id,
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

    return rejected


def _code_case(case_id: str, variant: str) -> Any:
    spec = INVALID[variant]

    @case(
        case_id,
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

    return error_code


REJECTED, ERROR_CODE = Family(_rejected_case), Family(_code_case)
test_verbosity_invalid_not_json_rejected = REJECTED(
    "kip977.verbosity.invalid.not_json.rejected", "not_json"
)
test_verbosity_invalid_not_json_error_code = ERROR_CODE(
    "kip977.verbosity.invalid.not_json.error_code", "not_json"
)
test_verbosity_invalid_not_array_rejected = REJECTED(
    "kip977.verbosity.invalid.not_array.rejected", "not_array"
)
test_verbosity_invalid_not_array_error_code = ERROR_CODE(
    "kip977.verbosity.invalid.not_array.error_code", "not_array"
)
test_verbosity_invalid_unknown_level_rejected = REJECTED(
    "kip977.verbosity.invalid.unknown_level.rejected", "unknown_level"
)
test_verbosity_invalid_unknown_level_error_code = ERROR_CODE(
    "kip977.verbosity.invalid.unknown_level.error_code", "unknown_level"
)
test_verbosity_invalid_invalid_regex_rejected = REJECTED(
    "kip977.verbosity.invalid.invalid_regex.rejected", "invalid_regex"
)
test_verbosity_invalid_invalid_regex_error_code = ERROR_CODE(
    "kip977.verbosity.invalid.invalid_regex.error_code", "invalid_regex"
)
test_verbosity_invalid_topics_and_pattern_rejected = REJECTED(
    "kip977.verbosity.invalid.topics_and_pattern.rejected", "topics_and_pattern"
)
test_verbosity_invalid_topics_and_pattern_error_code = ERROR_CODE(
    "kip977.verbosity.invalid.topics_and_pattern.error_code", "topics_and_pattern"
)


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
