"""KIP-977: `metrics.verbosity` validation and semantics, and the per-partition meters."""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import FetchResponse, ProduceRequest
from kconform.codecs.schema import Message
from kconform.codecs.wire import kafka_uuid_str
from kconform.fixtures.reference import ReferenceBroker, RequestContext
from kconform.fixtures.reference.kip977 import VerbosityError, parse_verbosity, partition_counts
from kconform.fixtures.reference.scenario import BACKEND_APIS, Session, request_frame

MSG, BIN, BOUT = "MessagesInPerSec", "BytesInPerSec", "BytesOutPerSec"
AVRO = ["avro-topic-car", "avro-topic-bus", "avro-topic-plane"]


def rule(level: str = "high", **fields: object) -> dict[str, object]:
    return {"level": level, **fields}


# --- validation (KIP-977 "JSON Config Format") ---------------------------------------------------


VALID = [
    pytest.param([], id="default: empty array"),
    pytest.param([rule(names="Bytes*", filters=[{"topics": AVRO}])], id="KIP example, topics"),
    pytest.param([rule(names=".*", filters=[{"topicPattern": "avro-topics-*"}])], id="pattern"),
    pytest.param([{"level": "high", "name": "Bytes*", "filters": [{"topics": AVRO}]}],
                 id="the KIP example's 'name' spelling"),
    pytest.param([{"level": "low", "names": ".*"}], id="low, no filters"),
    pytest.param([{"names": ".*"}], id="level defaults to low"),
    pytest.param([rule(filters=[{"topics": ["a"]}])] * 2, id="duplicates are allowed"),
    pytest.param([rule("medium", filters=[{"topics": ["a"]}])], id="medium"),
]  # fmt: skip

INVALID = [
    pytest.param("not json", id="not JSON"),
    pytest.param('[{"level": "high", names: ".*", filters=[{"topics": ["avro-*"]}]}]',
                 id="the KIP CLI example (not JSON)"),
    pytest.param('{"level": "high"}', id="object, not array"),
    pytest.param("[1]", id="entry not an object"),
    pytest.param('[{"level": "verbose"}]', id="unknown level"),
    pytest.param('[{"level": "HIGH"}]', id="level is lower case"),
    pytest.param('[{"colour": "x"}]', id="unknown key"),
    pytest.param('[{"names": "["}]', id="bad names regex"),
    pytest.param('[{"names": 5}]', id="names not a string"),
    pytest.param('[{"name": "a", "names": "b"}]', id="name and names"),
    pytest.param('[{"filters": {"topics": ["a"]}}]', id="filters not an array"),
    pytest.param('[{"filters": [{"topics": ["a"], "topicPattern": "b"}]}]',
                 id="topics and topicPattern together"),
    pytest.param('[{"filters": [{}]}]', id="empty filter"),
    pytest.param('[{"filters": [{"topics": "a"}]}]', id="topics not an array"),
    pytest.param('[{"filters": [{"topics": [1]}]}]', id="topic not a string"),
    pytest.param('[{"filters": [{"topicPattern": "a{"}]}]', id="bad topicPattern"),
    pytest.param('[{"filters": [{"partitions": [0]}]}]', id="unknown filter key"),
]  # fmt: skip


def broker(verbosity: str | None = None, **options: Any) -> Session:
    b = ReferenceBroker(BACKEND_APIS, rng=random.Random(1), **options)
    s = Session(b, RequestContext("admin"))
    if verbosity is not None:
        assert set_verbosity(s, verbosity) == (0, None)
    return s


def set_verbosity(s: Session, value: str) -> tuple[int, str | None]:
    error, message = s.alter(4, "0", {"metrics.verbosity": (0, value)})
    return int(error), message


@pytest.mark.parametrize("value", VALID)
def test_valid_verbosity_is_accepted(value: list[object]) -> None:
    text = json.dumps(value)
    parse_verbosity(text)
    assert set_verbosity(broker(), text) == (ErrorCode.NONE, None)


@pytest.mark.parametrize("value", INVALID)
def test_invalid_verbosity_is_invalid_config(value: str) -> None:
    with pytest.raises(VerbosityError):
        parse_verbosity(value)
    code, message = set_verbosity(broker(), value)
    assert code == ErrorCode.INVALID_CONFIG and message and "metrics.verbosity" in message


# --- semantics -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "metric", "topic", "partition_level"),
    [
        ([], BIN, "t", False),
        ([rule(names="Bytes*", filters=[{"topics": AVRO}])], BIN, "avro-topic-car", True),
        ([rule(names="Bytes*", filters=[{"topics": AVRO}])], BOUT, "avro-topic-bus", True),
        ([rule(names="Bytes*", filters=[{"topics": AVRO}])], MSG, "avro-topic-car", False),
        ([rule(names="Bytes*", filters=[{"topics": AVRO}])], BIN, "avro-topic-boat", False),
        ([rule(filters=[{"topicPattern": "avro-topics-*"}])], MSG, "avro-topics-x", True),
        ([rule(filters=[{"topicPattern": "avro-topics-*"}])], MSG, "json-topics-x", False),
        ([rule()], BIN, "t", False),  # no filters: applies to nothing
        ([rule(filters=[{"topics": ["a", "b"]}, {"topics": ["a", "c", "d"]}])], MSG, "a", True),
        ([rule(filters=[{"topics": ["a", "b"]}, {"topics": ["a", "c", "d"]}])], MSG, "b", False),
        ([rule("low", filters=[{"topics": ["t"]}]), rule(filters=[{"topics": ["t"]}])], MSG, "t",
         True),
        ([rule(filters=[{"topics": ["t"]}]), rule("low", filters=[{"topics": ["t"]}])], MSG, "t",
         True),
        ([rule("medium", filters=[{"topics": ["t"]}])], MSG, "t", False),
    ],
)  # fmt: skip
def test_which_topics_get_partition_metrics(
    rules: list[object], metric: str, topic: str, partition_level: bool
) -> None:
    verbosity = parse_verbosity(json.dumps(rules))
    assert verbosity.partition_level(metric, topic) is partition_level


# --- meters --------------------------------------------------------------------------------------


def batch(records: int, value_size: int = 20) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    for i in range(records):
        builder.append(
            i, timestamp=1_700_000_000_000, key=None, value=b"v" * value_size, headers=[]
        )
    return bytes(builder.build())


def produce(topics: dict[str, dict[int, list[bytes]]], version: int = 9) -> Message:
    """A ProduceRequest through the codec (so `records` are what a broker decodes)."""
    req = ProduceRequest
    data = [
        req.TopicProduceData(
            name=topic,
            partition_data=[req.PartitionProduceData(index=p, records=b"".join(bs))
                            for p, bs in parts.items()],
        )
        for topic, parts in topics.items()
    ]  # fmt: skip
    frame = request_frame(req(acks=1, timeout_ms=1000, topic_data=data), version)
    assert frame.body is not None
    return frame.body


def fetch_response(topic: str, parts: dict[int, bytes]) -> Message:
    resp = FetchResponse
    partitions = [resp.PartitionData(partition_index=p, records=r) for p, r in parts.items()]
    return resp(responses=[resp.FetchableTopicResponse(topic=topic, partitions=partitions)])


HIGH_T = json.dumps([rule(filters=[{"topics": ["t"]}])])
TRAFFIC = {"t": {0: [batch(5), batch(2)], 1: [batch(3)], 2: [batch(1, 300)]}, "u": {0: [batch(4)]}}


def expected(metric: str, topic: str) -> dict[int, int]:
    parts = TRAFFIC[topic]
    if metric == MSG:
        return {p: sum(len_records(b) for b in bs) for p, bs in parts.items()}
    return {p: sum(len(b) for b in bs) for p, bs in parts.items()}


def len_records(data: bytes) -> int:
    return int.from_bytes(data[57:61], "big")


def test_produce_meters_count_records_and_bytes_per_partition() -> None:
    s = broker(HIGH_T)
    s.broker.observe_produce(produce(TRAFFIC), 9)
    readings = s.broker.partition_meters()
    for metric in (MSG, BIN):
        assert partition_counts(readings, metric, "t") == expected(metric, "t")
        assert partition_counts(readings, metric, "u") == {}  # topic u stays low
        assert s.broker.meters.count(metric, "u") == sum(expected(metric, "u").values())
        assert s.broker.meters.count(metric, "t") == sum(expected(metric, "t").values())
    assert partition_counts(readings, MSG, "t") == {0: 7, 1: 3, 2: 1}


def test_fetch_response_meters_count_complete_batches() -> None:
    s = broker(HIGH_T)
    one, two = batch(3), batch(6)
    s.broker.observe_fetch_response(fetch_response("t", {0: one + two, 1: one + two[:10]}), 12)
    readings = s.broker.partition_meters()
    assert partition_counts(readings, BOUT, "t") == {0: len(one) + len(two), 1: len(one)}
    assert s.broker.meters.count(BOUT, "t") == 2 * len(one) + len(two)


def test_verbosity_changes_apply_from_then_on() -> None:
    s = broker()
    s.broker.observe_produce(produce({"t": {0: [batch(5)]}}), 9)
    assert partition_counts(s.broker.partition_meters(), MSG, "t") == {}
    assert set_verbosity(s, HIGH_T) == (0, None)
    s.broker.observe_produce(produce({"t": {0: [batch(2)]}}), 9)
    assert partition_counts(s.broker.partition_meters(), MSG, "t") == {0: 2}
    assert set_verbosity(s, "[]") == (0, None)
    assert partition_counts(s.broker.partition_meters(), MSG, "t") == {}
    assert s.broker.meters.count(MSG, "t") == 7


def test_topic_ids_are_counted_under_their_kafka_string() -> None:
    topic_id = uuid.UUID(int=77)
    name = kafka_uuid_str(topic_id)
    s = broker(json.dumps([rule(filters=[{"topics": [name]}])]))
    req = ProduceRequest
    data = [req.TopicProduceData(topic_id=topic_id, partition_data=[
        req.PartitionProduceData(index=3, records=batch(4))])]  # fmt: skip
    s.broker.observe_produce(req(acks=1, timeout_ms=1, topic_data=data), 13)
    assert partition_counts(s.broker.partition_meters(), MSG, name) == {3: 4}


def test_partition_miscount_mutant_is_off_by_one_in_exactly_one_partition() -> None:
    s = broker(HIGH_T, mutants={"kip977_partition_miscount"})
    for _ in range(3):
        s.broker.observe_produce(produce(TRAFFIC), 9)
    counts = partition_counts(s.broker.partition_meters(), MSG, "t")
    right = {p: 3 * n for p, n in expected(MSG, "t").items()}
    off = {p: counts[p] - right[p] for p in right if counts[p] != right[p]}
    assert len(off) == 1 and list(off.values()) == [1]
    assert partition_counts(s.broker.partition_meters(), BIN, "t") == {
        p: 3 * n for p, n in expected(BIN, "t").items()
    }


def test_verbosity_unchecked_mutant_stores_invalid_value() -> None:
    s = broker(mutants={"kip977_verbosity_unchecked"})
    assert set_verbosity(s, "not json") == (ErrorCode.NONE, None)
    s.broker.observe_produce(produce(TRAFFIC), 9)
    assert partition_counts(s.broker.partition_meters(), MSG, "t") == {}
