"""§C.4 (PushTelemetry, step by step and in order) with rulings 2, 3, 11, 12 and 13."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest

from kconform.codecs.compression import compress
from kconform.codecs.errors import ErrorCode
from kconform.codecs.otlp import build_metrics_data, gauge
from kconform.codecs.subscription import kafka_uuid_str
from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.engine.payloads import receiver_throw_payload
from kconform.fixtures.reference import ReferenceBroker, RequestContext
from kconform.fixtures.reference.scenario import (
    BACKEND_APIS,
    Session,
    metrics_payload,
    raw_request_frame,
)
from kconform.fixtures.types import RECEIVER_THROW_METRIC

INTERVAL = 1000
E = ErrorCode
PAYLOAD = metrics_payload(3)


def payload_of_size(size: int) -> bytes:
    """A valid OTLP payload of exactly `size` bytes."""
    for padding in range(max(size - 200, 1), size):
        payload: bytes = metrics_payload(1, padding=padding)
        if len(payload) == size:
            return payload
    raise AssertionError(f"no payload of {size} bytes")


def session(**options: Any) -> Session:
    broker = ReferenceBroker(BACKEND_APIS, rng=random.Random(5), node_id=2, **options)
    ctx = RequestContext("conn-1", source_address="192.0.2.7", source_port=6001, listener_node_id=2)
    s = Session(broker, ctx)
    s.set_subscription("sub", {"metrics": "*", "interval.ms": str(INTERVAL)})
    return s


def ready(**options: Any) -> tuple[Session, uuid.UUID, int]:
    """A session whose client has just done its Get."""
    s = session(**options)
    got = s.get()
    return s, got.client_instance_id, got.subscription_id


# --- step 0: reserved ids ------------------------------------------------------------------------


@pytest.mark.parametrize("client_instance_id", [ZERO_UUID, ONE_UUID], ids=["ZERO", "ONE"])
def test_reserved_instance_id_is_invalid_request_without_state(
    client_instance_id: uuid.UUID,
) -> None:
    s = session()
    assert s.push(client_instance_id, 0, PAYLOAD) == (E.INVALID_REQUEST, None)
    assert s.broker.telemetry.instance_count() == 0


# --- step 1: unknown instances are created, not refused ------------------------------------------


def test_unknown_instance_is_created_and_judged_by_subscription_id() -> None:
    s = session()
    stranger = uuid.uuid4()
    assert s.push(stranger, 12345)[0] == E.UNKNOWN_SUBSCRIPTION_ID
    assert s.broker.telemetry.instance(stranger) is not None
    again = session()
    expected = s.broker.telemetry.instance(stranger).subscription_id
    assert again.push(stranger, expected)[0] == E.NONE


# --- steps 2-6, one failing check at a time, and which check wins ------------------------------ -


@pytest.mark.parametrize(
    ("first", "second", "error"),
    [
        pytest.param({}, {}, E.THROTTLING_QUOTA_EXCEEDED, id="3: throttled"),
        pytest.param({}, {"terminating": True}, E.NONE, id="3: terminating skips the throttle"),
        pytest.param(None, {"subscription_id": -1}, E.UNKNOWN_SUBSCRIPTION_ID, id="4: stale id"),
        pytest.param(None, {"compression_type": 5}, E.UNSUPPORTED_COMPRESSION_TYPE, id="5: 5"),
        pytest.param(None, {"compression_type": 127}, E.UNSUPPORTED_COMPRESSION_TYPE, id="5: 127"),
        pytest.param(None, {"compression_type": -1}, E.UNSUPPORTED_COMPRESSION_TYPE, id="5: -1"),
        pytest.param(None, {"compression_type": 0}, E.NONE, id="5: NONE is accepted"),
        pytest.param(None, {"metrics": b"\0" * 1025}, E.TELEMETRY_TOO_LARGE, id="6: too large"),
        pytest.param(None, {"metrics": payload_of_size(1024)}, E.NONE, id="6: exactly the limit"),
        pytest.param({}, {"subscription_id": -1}, E.THROTTLING_QUOTA_EXCEEDED, id="3 before 4"),
        pytest.param(None, {"subscription_id": -1, "compression_type": 9},
                     E.UNKNOWN_SUBSCRIPTION_ID, id="4 before 5"),
        pytest.param(None, {"compression_type": 9, "metrics": b"\0" * 2000},
                     E.UNSUPPORTED_COMPRESSION_TYPE, id="5 before 6"),
        pytest.param({"terminating": True}, {"subscription_id": -1}, E.INVALID_REQUEST,
                     id="2 before 4"),
    ],
)  # fmt: skip
def test_push_checks_in_order(
    first: dict[str, object] | None, second: dict[str, object], error: ErrorCode
) -> None:
    s, instance_id, subscription_id = ready(telemetry_max_bytes=1024)
    if first is not None:
        assert s.push(instance_id, subscription_id, PAYLOAD, **first)[0] == E.NONE
    s.advance(1)
    args: dict[str, object] = {"subscription_id": subscription_id, "metrics": PAYLOAD}
    args.update(second)
    assert s.push(instance_id, **args)[0] == error


def test_push_after_interval_is_accepted_and_timestamp_moves_even_on_failure() -> None:
    s, instance_id, subscription_id = ready()
    assert s.push(instance_id, subscription_id, PAYLOAD)[0] == E.NONE
    s.advance(INTERVAL)
    assert s.push(instance_id, -1, PAYLOAD)[0] == E.UNKNOWN_SUBSCRIPTION_ID  # passed the throttle
    s.advance(INTERVAL - 1)
    assert s.push(instance_id, subscription_id, PAYLOAD)[0] == E.THROTTLING_QUOTA_EXCEEDED
    s.advance(1)
    assert s.push(instance_id, subscription_id, PAYLOAD)[0] == E.NONE


# --- step 6: the limit is on the bytes as sent ---------------------------------------------------


@pytest.mark.parametrize("compression_type", [1, 2, 3, 4])
def test_size_limit_is_on_wire_bytes(compression_type: int) -> None:
    big = metrics_payload(4, padding=2000)  # ~8 KB that compresses well
    wire = compress(big, compression_type)
    s, instance_id, subscription_id = ready(telemetry_max_bytes=len(wire))
    assert len(big) > 4 * len(wire)
    error, sink = s.push(instance_id, subscription_id, wire, compression_type=compression_type)
    assert error == E.NONE and sink is not None and sink.payload == big


# --- step 7: decompression and the strict receiver -----------------------------------------------


@pytest.mark.parametrize(
    ("compression_type", "metrics", "error"),
    [
        pytest.param(1, b"not gzip at all", E.INVALID_RECORD, id="gzip garbage"),
        pytest.param(3, b"\x04\x22\x4d\x18garbage", E.INVALID_RECORD, id="lz4 garbage"),
        pytest.param(4, b"\x28\xb5\x2f\xfd\x00", E.INVALID_RECORD, id="truncated zstd"),
        pytest.param(2, b"\x05garbage", E.INVALID_RECORD, id="snappy garbage"),
        pytest.param(0, b"test-data", E.INVALID_RECORD, id="not OTLP"),
        pytest.param(1, compress(b"test-data", 1), E.INVALID_RECORD, id="gzip of not OTLP"),
    ],
)
def test_undecodable_payload_is_invalid_record(
    compression_type: int, metrics: bytes, error: ErrorCode
) -> None:
    s, instance_id, subscription_id = ready()
    result = s.push(instance_id, subscription_id, metrics, compression_type=compression_type)
    assert result == (error, None)
    instance = s.broker.telemetry.instance(instance_id)
    assert instance is not None and instance.last_known_error == error


def test_receiver_failure_is_invalid_record_and_the_next_interval_is_accepted() -> None:
    """Ruling 18: the receiver throws (the payload names RECEIVER_THROW_METRIC); the push was
    already counted, so the instance pushes again once the interval has passed."""
    s, instance_id, subscription_id = ready()
    refused = s.push(instance_id, subscription_id, receiver_throw_payload())
    assert refused == (E.INVALID_RECORD, None)
    assert s.broker.telemetry.last_rule == "kip714.push.receiver_failure"
    instance = s.broker.telemetry.instance(instance_id)
    assert instance is not None and instance.last_known_error == E.INVALID_RECORD
    s.advance(INTERVAL - 1)
    assert s.push(instance_id, subscription_id, PAYLOAD)[0] == E.THROTTLING_QUOTA_EXCEEDED
    s.advance(1)
    error, sink = s.push(instance_id, subscription_id, PAYLOAD)
    assert error == E.NONE and sink is not None and sink.payload == PAYLOAD


def test_the_reserved_name_only_fails_the_receiver_as_a_metric_name() -> None:
    near = build_metrics_data([gauge("org.apache.kafka.x", 1, time_unix_nano=1,
                                     attributes={"note": RECEIVER_THROW_METRIC})])  # fmt: skip
    s, instance_id, subscription_id = ready()
    assert s.push(instance_id, subscription_id, near)[0] == E.NONE


@pytest.mark.parametrize("compression_type", [0, 1, 2, 3, 4])
def test_accepted_payload_reaches_the_sink_decompressed(compression_type: int) -> None:
    s, instance_id, subscription_id = ready()
    s.api_versions(3, "librdkafka", "2.5.0")
    s.client_id = "producer-7"
    wire = compress(PAYLOAD, compression_type)
    error, sink = s.push(instance_id, subscription_id, wire, compression_type=compression_type)
    assert error == E.NONE and sink is not None
    assert sink.payload == PAYLOAD and sink.compression_type == compression_type
    assert sink.client_instance_id == kafka_uuid_str(instance_id)
    assert sink.subscription_id == subscription_id and not sink.terminating
    assert (sink.software_name, sink.software_version) == ("librdkafka", "2.5.0")
    assert (sink.client_id, sink.source_address, sink.source_port) == (
        "producer-7",
        "192.0.2.7",
        6001,
    )
    assert sink.broker_id == 2
    assert s.broker.sink_records() == [sink]


def test_raw_snappy_is_accepted_like_xerials_fallback() -> None:
    s, instance_id, subscription_id = ready()
    wire = compress(PAYLOAD, 2, snappy_framing="raw")
    assert s.push(instance_id, subscription_id, wire, compression_type=2)[0] == E.NONE


@pytest.mark.parametrize(
    ("options", "expanded", "error"),
    [
        pytest.param({"max_decompressed_bytes": 5000}, 5000, E.NONE, id="at the bound"),
        pytest.param({"max_decompressed_bytes": 5000}, 5001, E.TELEMETRY_TOO_LARGE, id="above"),
    ],
)
def test_decompression_bomb_is_telemetry_too_large(
    options: dict[str, int], expanded: int, error: ErrorCode
) -> None:
    """Ruling 12: bounded decompression; a bomb is refused and the broker keeps answering."""
    s, instance_id, subscription_id = ready(**options)
    bomb = payload_of_size(expanded)
    wire = compress(bomb, 4)
    assert s.push(instance_id, subscription_id, wire, compression_type=4)[0] == error
    s.advance(INTERVAL)
    assert s.push(instance_id, subscription_id, PAYLOAD)[0] == E.NONE


@pytest.mark.parametrize(
    ("telemetry_max_bytes", "bound"),
    [(1000, 16 * 1024 * 1024), (1_048_576, 16 * 1024 * 1024), (2_000_000, 32_000_000)],
)
def test_default_decompression_bound(telemetry_max_bytes: int, bound: int) -> None:
    s, instance_id, subscription_id = ready(telemetry_max_bytes=telemetry_max_bytes)
    assert s.broker.telemetry.max_decompressed_bytes == bound
    bomb = compress(bytes(bound + 1), 4)  # zeros: a few hundred bytes on the wire
    assert len(bomb) < 1000
    assert s.push(instance_id, subscription_id, bomb, compression_type=4)[0] == (
        E.TELEMETRY_TOO_LARGE
    )


def test_telemetry_disabled_decompresses_but_exports_nothing() -> None:
    s, instance_id, subscription_id = ready(telemetry_enabled=False)
    assert s.push(instance_id, subscription_id, b"test-data") == (E.NONE, None)
    s.advance(INTERVAL)
    bad = s.push(instance_id, subscription_id, b"garbage", compression_type=1)
    assert bad == (E.INVALID_RECORD, None)
    assert s.broker.sink_records() == []


# --- step 8: null and empty Metrics (ruling 11) --------------------------------------------------


@pytest.mark.parametrize("metrics", [None, b""], ids=["null", "empty"])
def test_null_or_empty_metrics_succeed_without_export(metrics: bytes | None) -> None:
    s, instance_id, subscription_id = ready()
    assert s.push(instance_id, subscription_id, metrics) == (E.NONE, None)
    assert s.broker.sink_records() == []


# --- terminating semantics (rulings 2 and 3) -----------------------------------------------------


def test_single_terminating_push_then_invalid_request() -> None:
    s, instance_id, subscription_id = ready()
    assert s.push(instance_id, subscription_id, PAYLOAD)[0] == E.NONE
    error, sink = s.push(instance_id, subscription_id, PAYLOAD, terminating=True)
    assert error == E.NONE and sink is not None and sink.terminating
    assert s.push(instance_id, subscription_id, PAYLOAD, terminating=True)[0] == E.INVALID_REQUEST
    s.advance(INTERVAL)
    assert s.push(instance_id, subscription_id, PAYLOAD)[0] == E.INVALID_REQUEST
    s.advance(INTERVAL)  # (c): the non-terminating push did not clear the flag
    assert s.push(instance_id, subscription_id, PAYLOAD, terminating=True)[0] == E.INVALID_REQUEST
    assert s.get(instance_id).error_code == E.NONE  # Gets are not blocked by the flag


def test_terminating_retry_after_unknown_subscription_id() -> None:
    """Ruling 3: the failed terminating push does not use up the terminating push."""
    s, instance_id, subscription_id = ready()
    s.set_subscription("sub", {"metrics": "org.apache.kafka.", "interval.ms": str(INTERVAL)})
    stale = s.push(instance_id, subscription_id, PAYLOAD, terminating=True)
    assert stale[0] == E.UNKNOWN_SUBSCRIPTION_ID
    fresh = s.get(instance_id)
    assert fresh.error_code == E.NONE
    error, sink = s.push(instance_id, fresh.subscription_id, PAYLOAD, terminating=True)
    assert error == E.NONE and sink is not None and sink.terminating
    assert s.push(instance_id, fresh.subscription_id, PAYLOAD)[0] == E.INVALID_REQUEST


def test_subscription_change_starts_a_new_terminating_allowance() -> None:
    s, instance_id, subscription_id = ready()
    assert s.push(instance_id, subscription_id, PAYLOAD, terminating=True)[0] == E.NONE
    s.set_subscription("sub", {"metrics": "org.apache.kafka.", "interval.ms": str(INTERVAL)})
    fresh = s.get(instance_id)
    assert s.push(instance_id, fresh.subscription_id, PAYLOAD, terminating=True)[0] == E.NONE


# --- undecodable request bodies ------------------------------------------------------------------


def test_undecodable_push_body_is_answered_invalid_request() -> None:
    s = session()
    outcome = s.send_frame(raw_request_frame(72, 0, b"\x01\x02"))
    assert outcome.error_code == E.INVALID_REQUEST and not outcome.close_after
    get = s.send_frame(raw_request_frame(71, 0, b"\x01"))
    assert get.error_code == E.INVALID_REQUEST and not get.close_after


@pytest.mark.parametrize("api_key", [71, 72])
def test_unknown_telemetry_version_closes(api_key: int) -> None:
    outcome = session().send_frame(raw_request_frame(api_key, 1, b"\x00"))
    assert outcome.response_body is None and outcome.close_after
