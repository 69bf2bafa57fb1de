"""ReferenceBroker as the proxy sees it: dispatch, undecodable requests, §C.6 matching."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import DescribeConfigsRequest, MetadataRequest, ProduceRequest
from kconform.codecs.subscription import kafka_uuid_str, resolve
from kconform.fixtures.reference import ReferenceBroker, RequestContext
from kconform.fixtures.reference.scenario import (
    BACKEND_APIS,
    Session,
    metrics_payload,
    raw_request_frame,
    request_frame,
)

E = ErrorCode


def session(**ctx: Any) -> Session:
    broker = ReferenceBroker(BACKEND_APIS, rng=random.Random(4))
    context = RequestContext("conn-1", **ctx)
    return Session(broker, context)


@pytest.mark.parametrize(
    ("body", "version"), [(MetadataRequest(), 12), (ProduceRequest(acks=1), 9)]
)
def test_apis_the_reference_does_not_own_are_forwarded(body: object, version: int) -> None:
    s = session()
    assert s.broker.handle(s.ctx, request_frame(body, version), s.now_ms) is None


@pytest.mark.parametrize(
    ("api_key", "version", "body"),
    [
        pytest.param(32, 5, b"\x00", id="DescribeConfigs v5"),
        pytest.param(74, 2, b"\x00", id="ListConfigResources v2"),
        pytest.param(32, 4, b"\x07", id="DescribeConfigs truncated"),
        pytest.param(44, 1, b"", id="IncrementalAlterConfigs empty"),
    ],
)
def test_unreadable_admin_requests_close_the_connection(
    api_key: int, version: int, body: bytes
) -> None:
    outcome = session().send_frame(raw_request_frame(api_key, version, body))
    assert outcome.response_body is None and outcome.close_after


def test_header_client_id_is_what_the_broker_sees() -> None:
    s = session(client_id="from-ctx")
    s.client_id = "from-header"
    s.set_subscription("sub", {"metrics": "*", "match": "client_id=from-header"})
    assert s.get().requested_metrics == ["*"]


@pytest.mark.parametrize(
    ("match", "matches"),
    [
        ("client_software_name=librdkafka", True),
        ("client_software_name=libr", False),  # anchored: a prefix is not a match
        ("client_software_version=2\\.5\\..*", True),
        ("client_source_address=10\\.9\\.8\\.7", True),
        ("client_source_port=4321", True),
        ("client_source_port=43", False),
        ("client_id=app-.*,client_software_name=librdkafka", True),
        ("client_id=app-.*,client_software_name=apache-kafka-java", False),
    ],
)
def test_match_attributes(match: str, matches: bool) -> None:
    s = session(source_address="10.9.8.7", source_port=4321)
    s.client_id = "app-1"
    s.api_versions(3, "librdkafka", "2.5.1")
    s.set_subscription("sub", {"metrics": "org.a.", "match": match})
    assert (s.get().requested_metrics == ["org.a."]) is matches


def test_match_on_client_instance_id() -> None:
    s = session()
    first = s.get()
    s.set_subscription(
        "sub",
        {"metrics": "*", "match": f"client_instance_id={kafka_uuid_str(first.client_instance_id)}"},
    )
    assert s.get(first.client_instance_id).requested_metrics == ["*"]
    assert s.get().requested_metrics == []  # another client


def test_requested_metrics_keep_the_java_hash_set_order() -> None:
    s = session()
    metrics = "org.apache.kafka.producer.,org.apache.kafka.consumer.,org.apache.kafka.admin.,x."
    s.set_subscription("a", {"metrics": metrics})
    s.set_subscription("b", {"metrics": "org.apache.kafka.producer.,y."})
    response = s.get()
    (instance,) = s.broker.telemetry.instances()
    expected = resolve(s.broker.subscriptions(), instance.metadata).requested_metrics
    assert response.requested_metrics == list(expected)
    insertion = ["org.apache.kafka.producer.", "org.apache.kafka.consumer.",
                 "org.apache.kafka.admin.", "x.", "y."]  # fmt: skip
    assert sorted(expected) == sorted(insertion) and list(expected) != insertion


def test_sink_records_accumulate_in_order() -> None:
    s = session()
    s.set_subscription("sub", {"metrics": "*", "interval.ms": "100"})
    got = s.get()
    payloads = [metrics_payload(n) for n in (1, 2, 3)]
    for payload in payloads:
        error, sink = s.push(got.client_instance_id, got.subscription_id, payload)
        assert error == E.NONE and sink is not None
        s.advance(100)
    assert [r.payload for r in s.broker.sink_records()] == payloads
    assert s.outcomes[-1].sink == s.broker.sink_records()[-1]


def test_describe_configs_is_answered_at_request_version() -> None:
    s = session()
    req = DescribeConfigsRequest
    resource = req.DescribeConfigsResource(resource_type=16, resource_name="x")
    outcome = s.send(req(resources=[resource]), 2)
    assert outcome.response_version == 2 and not outcome.close_after
