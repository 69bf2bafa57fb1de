"""§C.2 (GetTelemetrySubscriptions) and C.3 (SubscriptionId) on the reference broker."""

from __future__ import annotations

import random
import uuid

import pytest

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import GetTelemetrySubscriptionsResponse
from kconform.codecs.subscription import compute_subscription_id, kafka_uuid_str
from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.fixtures.reference import ReferenceBroker, RequestContext
from kconform.fixtures.reference.scenario import BACKEND_APIS, Session

INTERVAL = 1000
E = ErrorCode


class Bits:
    """A random source that returns the values it was given, in order."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)

    def getrandbits(self, k: int, /) -> int:
        return self.values.pop(0)


def session(rng: object = None, conn: str = "conn-1", client_id: str = "app-1") -> Session:
    broker = ReferenceBroker(BACKEND_APIS, rng=rng or random.Random(11))
    s = Session(broker, RequestContext(conn, source_address="10.1.2.3", source_port=5555))
    s.client_id = client_id
    return s


def subscribed(interval: int = INTERVAL, metrics: str = "org.apache.kafka.producer.") -> Session:
    s = session()
    s.set_subscription("sub", {"metrics": metrics, "interval.ms": str(interval)})
    return s


# --- C.2 step 1: client instance ids -------------------------------------------------------------


def test_zero_id_gets_a_fresh_version_4_id() -> None:
    s = session()
    first, second = s.get(), s.get()
    ids = {first.client_instance_id, second.client_instance_id}
    assert len(ids) == 2 and not ids & {ZERO_UUID, ONE_UUID}
    assert all(i.version == 4 for i in ids)
    assert first.error_code == second.error_code == E.NONE


@pytest.mark.parametrize(
    ("draws", "expected"),
    [
        pytest.param((0, 5), 0, id="zero bits never give ZERO"),
        pytest.param((1, 5), 1, id="one bit never gives ONE"),
        pytest.param((0xF8 << 120, 5), 5, id="base64 starting with '-' is skipped"),
    ],
)
def test_issued_ids_follow_uuid_random_uuid(draws: tuple[int, ...], expected: int) -> None:
    issued = session(Bits(*draws)).get().client_instance_id
    assert issued not in (ZERO_UUID, ONE_UUID)
    assert not kafka_uuid_str(issued).startswith("-")
    assert issued == uuid.UUID(int=expected, version=4)


def test_an_id_already_cached_is_drawn_again() -> None:
    s = session(Bits(3, 3, 9))
    first = s.get().client_instance_id
    second = s.get().client_instance_id
    assert first == uuid.UUID(int=3, version=4) and second == uuid.UUID(int=9, version=4)


@pytest.mark.parametrize(
    "supplied", [uuid.UUID(int=12345), ONE_UUID, uuid.uuid4()], ids=["unknown", "ONE", "random"]
)
def test_any_non_zero_id_is_accepted_and_echoed(supplied: uuid.UUID) -> None:
    response = session().get(supplied)
    assert response.error_code == E.NONE and response.client_instance_id == supplied


# --- C.2 step 2: lookup, creation, rebuild -------------------------------------------------------


def test_subscription_change_rebuilds_instance_on_next_get() -> None:
    s = subscribed()
    first = s.get()
    s.set_subscription("sub", {"metrics": "org.apache.kafka.consumer.", "interval.ms": "2000"})
    again = s.get(first.client_instance_id)  # inside the old interval, but timestamps reset
    assert again.error_code == E.NONE
    assert again.subscription_id != first.subscription_id
    assert (again.requested_metrics, again.push_interval_ms) == (
        ["org.apache.kafka.consumer."],
        2000,
    )


def test_match_metadata_is_the_snapshot_taken_at_creation() -> None:
    s = session(client_id="app-1")
    s.set_subscription("sub", {"metrics": "*", "match": "client_id=app-1"})
    first = s.get()
    s.client_id = "renamed"
    s.set_subscription("other", {"metrics": "org.x."})  # forces a rebuild with the same metadata
    again = s.get(first.client_instance_id)
    assert again.requested_metrics == ["*"]


# --- C.2 step 3: the Get throttle and its exemptions ---------------------------------------------


def assert_throttled(response: GetTelemetrySubscriptionsResponse) -> None:
    """Error 89 and every other field at its default (GetTelemetrySubscriptionsRequest
    .getErrorResponse)."""
    assert response.error_code == E.THROTTLING_QUOTA_EXCEEDED
    expected = GetTelemetrySubscriptionsResponse(error_code=E.THROTTLING_QUOTA_EXCEEDED)
    assert response == expected


@pytest.mark.parametrize(
    ("wait_ms", "error"),
    [
        (0, E.THROTTLING_QUOTA_EXCEEDED),
        (INTERVAL - 1, E.THROTTLING_QUOTA_EXCEEDED),
        (INTERVAL, E.NONE),
    ],
)
def test_repeated_get_inside_interval_is_throttled(wait_ms: int, error: ErrorCode) -> None:
    s = subscribed()
    instance_id = s.get().client_instance_id
    s.advance(wait_ms)
    response = s.get(instance_id)
    assert response.error_code == error
    if error:
        assert_throttled(response)


def test_get_after_successful_push_inside_interval_is_throttled() -> None:
    s = subscribed()
    got = s.get()
    s.advance(10)
    assert s.push(got.client_instance_id, got.subscription_id)[0] == E.NONE
    s.advance(INTERVAL - 20)
    assert_throttled(s.get(got.client_instance_id))


@pytest.mark.parametrize(
    ("push", "get_error"),
    [
        pytest.param({"subscription_id": 1}, E.NONE, id="after UNKNOWN_SUBSCRIPTION_ID"),
        pytest.param({"compression_type": 9}, E.NONE, id="after UNSUPPORTED_COMPRESSION_TYPE"),
        pytest.param({"metrics": b"x" * 300}, E.THROTTLING_QUOTA_EXCEEDED, id="after TOO_LARGE"),
        pytest.param({}, E.THROTTLING_QUOTA_EXCEEDED, id="after success"),
    ],
)
def test_get_right_after_a_failed_push(push: dict[str, object], get_error: ErrorCode) -> None:
    s = subscribed()
    s.broker.configs.static_broker_configs["telemetry.max.bytes"] = "200"
    got = s.get()
    args: dict[str, object] = {"subscription_id": got.subscription_id, "metrics": b""}
    args.update(push)
    s.push(got.client_instance_id, **args)
    assert s.get(got.client_instance_id).error_code == get_error


def test_throttled_get_keeps_last_known_error() -> None:
    s = subscribed()
    s.broker.configs.static_broker_configs["telemetry.max.bytes"] = "10"
    got = s.get()
    assert (
        s.push(got.client_instance_id, got.subscription_id, b"x" * 11)[0] == E.TELEMETRY_TOO_LARGE
    )
    assert_throttled(s.get(got.client_instance_id))
    instance = s.broker.telemetry.instance(got.client_instance_id)
    assert instance is not None and instance.last_known_error == E.TELEMETRY_TOO_LARGE


def test_exempt_get_lets_the_next_push_through() -> None:
    """Departure from Apache 4.1 (ruling 4): the exempt Get counts as the latest Get."""
    s = subscribed()
    got = s.get()
    s.set_subscription("sub", {"metrics": "org.apache.kafka.", "interval.ms": str(INTERVAL)})
    assert s.push(got.client_instance_id, got.subscription_id)[0] == E.UNKNOWN_SUBSCRIPTION_ID
    again = s.get(got.client_instance_id)
    assert again.error_code == E.NONE
    assert s.push(got.client_instance_id, again.subscription_id)[0] == E.NONE


# --- C.2 step 4: the success response ------------------------------------------------------------


@pytest.mark.parametrize(
    ("subscriptions", "metrics", "interval"),
    [
        pytest.param({}, [], 300000, id="no subscription"),
        pytest.param({"a": {"metrics": "*", "interval.ms": "5000"}}, ["*"], 5000, id="star"),
        pytest.param(
            {"a": {"metrics": "*"}, "b": {"metrics": "org.apache.kafka.producer."}},
            ["*"], 300000, id="star collapses the union",
        ),
        pytest.param(
            {"a": {"metrics": "org.a.", "interval.ms": "7000"}, "b": {"metrics": "org.b.",
             "interval.ms": "3000"}}, ["org.a.", "org.b."], 3000, id="union and minimum",
        ),
        pytest.param(
            {"a": {"metrics": "org.a.", "match": "client_id=other"}}, [], 300000, id="no match"
        ),
        pytest.param({"a": {"metrics": ""}}, [], 300000, id="empty metrics list"),
        pytest.param(
            {"a": {"metrics": "org.a.", "interval.ms": "600000"}}, ["org.a."], 300000,
            id="minimum starts from the default",
        ),
    ],
)  # fmt: skip
def test_success_fields(
    subscriptions: dict[str, dict[str, str]], metrics: list[str], interval: int
) -> None:
    s = session()
    for name, configs in subscriptions.items():
        s.set_subscription(name, configs)
    response = s.get()
    assert response.error_code == E.NONE and response.throttle_time_ms == 0
    assert response.accepted_compression_types == [4, 3, 1, 2]
    assert response.delta_temporality is True
    assert response.telemetry_max_bytes == 1048576
    assert sorted(response.requested_metrics) == sorted(metrics)
    assert response.push_interval_ms == interval
    assert response.subscription_id != 0


def test_telemetry_max_bytes_follows_the_broker_config() -> None:
    s = session()
    assert s.alter(4, "0", {"telemetry.max.bytes": (0, "4096")}) == (0, None)
    assert s.get().telemetry_max_bytes == 4096


# --- C.3: SubscriptionId -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "metrics", ["*", "org.apache.kafka.producer.,org.apache.kafka.consumer.", ""]
)
def test_subscription_id_is_computed_as_apache_does(metrics: str) -> None:
    s = subscribed(metrics=metrics)
    response = s.get()
    expected = compute_subscription_id(
        response.requested_metrics, response.push_interval_ms, response.client_instance_id
    )
    assert response.subscription_id == expected


def test_subscription_id_is_equal_on_two_brokers_and_a_push_there_is_accepted() -> None:
    configs = {"metrics": "org.apache.kafka.producer.,org.b.,org.c.", "interval.ms": "2000"}
    one, two = session(random.Random(1)), session(random.Random(2))
    for s in (one, two):
        s.set_subscription("sub", configs)
    got = one.get()
    assert two.get(got.client_instance_id).subscription_id == got.subscription_id
    other = session(random.Random(3))
    other.set_subscription("sub", configs)
    assert other.push(got.client_instance_id, got.subscription_id)[0] == E.NONE
