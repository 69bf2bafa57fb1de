"""§B.1-B.2, B.4: the reference broker's KIP-511 ApiVersions handling."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import ApiVersionsRequest
from kconform.fixtures.reference import Outcome, ReferenceBroker, RequestContext
from kconform.fixtures.reference.scenario import (
    BACKEND_APIS,
    Session,
    raw_request_frame,
    request_frame,
)


def session(**broker_options: Any) -> Session:
    broker = ReferenceBroker(BACKEND_APIS, rng=random.Random(7), **broker_options)
    return Session(broker, RequestContext("conn-1", source_address="10.0.0.5", source_port=4242))


def keys(outcome: Outcome) -> dict[int, tuple[int, int]]:
    body = outcome.response_body
    assert body is not None
    return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}


VALID = [
    ("apache-kafka-java", "4.1.0"),
    ("librdkafka", "2.5.0"),
    ("a", "1"),
    ("confluent-kafka-python", "2.5.0-RC1"),
    ("a" * 1024, "1.0"),  # no length limit in Apache's pattern
]
INVALID = [
    ("", "1.0"),  # empty name (also what an absent field decodes to)
    ("apache-kafka-java", ""),  # empty version
    ("has space", "1.0"),
    (".leading-dot", "1.0"),
    ("trailing-dot.", "1.0"),
    ("-leading-dash", "1.0"),
    ("trailing-dash-", "1.0"),
    ("naïve", "1.0"),  # non-ASCII
    ("kafka_python", "2.0.2"),  # inside the KIP's pattern, outside Apache's (ruling 9)
    ("librdkafka", "2.5.0_rc1"),
    ("a" * 1023 + "-", "1.0"),  # 1 KiB, bad last character
]


@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize(("name", "software_version"), VALID)
def test_valid_software_is_answered_and_registered(
    name: str, software_version: str, version: int
) -> None:
    s = session()
    outcome = s.api_versions(version, name, software_version)
    assert outcome.error_code == ErrorCode.NONE and outcome.response_version == version
    assert not outcome.close_after
    assert s.broker.client_software("conn-1") == (name, software_version)
    s.get()
    (instance,) = s.broker.telemetry.instances()
    assert instance.metadata.client_software_name == name


@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize(("name", "software_version"), INVALID)
def test_invalid_software_gets_invalid_request_at_request_version(
    name: str, software_version: str, version: int
) -> None:
    s = session()
    outcome = s.api_versions(version, name, software_version)
    body = outcome.response_body
    assert outcome.error_code == ErrorCode.INVALID_REQUEST
    assert outcome.response_version == version
    assert body is not None and body.api_keys == [] and body.throttle_time_ms == 0
    assert not outcome.close_after  # §B.1: the broker does not close
    assert s.broker.client_software("conn-1") is None
    s.get()
    (instance,) = s.broker.telemetry.instances()
    assert (instance.metadata.client_software_name, instance.metadata.client_software_version) == (
        "unknown",
        "unknown",
    )


@pytest.mark.parametrize("version", [0, 1, 2])
def test_versions_before_3_are_always_valid_and_register_nothing(version: int) -> None:
    s = session()
    outcome = s.send(ApiVersionsRequest(), version)
    assert outcome.error_code == ErrorCode.NONE and outcome.response_version == version
    assert s.broker.client_software("conn-1") is None


@pytest.mark.parametrize("version", [6, 100, 32767, -1])
def test_unsupported_version_gets_v0_with_only_api_versions(version: int) -> None:
    s = session()
    outcome = s.send_frame(raw_request_frame(18, version, b"\x00"))
    assert outcome.response_version == 0
    assert outcome.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert keys(outcome) == {18: (0, 5)}
    assert not outcome.close_after


def test_fallback_follows_the_advertised_range_not_the_codec() -> None:
    """The reference advertises v0-5 as Apache 4.4 does: a v5 request is answered at v5, and a
    v6 one (which the codec cannot read either) gets the v0 fallback naming v0-5."""
    assert 5 in ApiVersionsRequest.valid_versions and 6 not in ApiVersionsRequest.valid_versions
    s = session()
    outcome = s.send(ApiVersionsRequest(client_software_name="a", client_software_version="1"), 5)
    assert (outcome.response_version, outcome.error_code) == (5, ErrorCode.NONE)
    fallback = s.send_frame(raw_request_frame(18, 6, b""))
    assert (fallback.response_version, fallback.error_code) == (0, ErrorCode.UNSUPPORTED_VERSION)
    assert keys(fallback) == {18: (0, 5)}


def test_known_version_with_unreadable_body_closes_without_answer() -> None:
    s = session()
    frame = raw_request_frame(18, 3, b"\x05ab")  # a compact string longer than the bytes left
    assert frame.body is None
    outcome = s.send_frame(frame)
    assert outcome.response_body is None and outcome.close_after


@pytest.mark.parametrize(("enabled", "advertised"), [(True, True), (False, False)])
def test_telemetry_keys_advertised_iff_enabled(enabled: bool, advertised: bool) -> None:
    table = keys(session(telemetry_enabled=enabled).api_versions())
    assert (71 in table, 72 in table) == (advertised, advertised)
    assert {18, 32, 33, 44, 74} <= table.keys()


def test_advertised_table_is_backend_plus_reference_ranges() -> None:
    table = keys(session().api_versions())
    assert table[0] == BACKEND_APIS[0] and table[3] == BACKEND_APIS[3]
    assert table[18] == (0, 5)  # the reference answers ApiVersions itself, above the backend's 3
    assert table[32] == (0, 4) and table[33] == (0, 2) and table[44] == (0, 1)
    assert table[71] == (0, 0) and table[72] == (0, 0) and table[74] == (0, 1)


def test_registration_is_per_connection_and_dropped_on_close() -> None:
    s = session()
    s.api_versions(3, "librdkafka", "2.5.0")
    other = Session(s.broker, RequestContext("conn-2"))
    other.api_versions(3, "apache-kafka-java", "4.1.0")
    assert s.broker.client_software("conn-1") == ("librdkafka", "2.5.0")
    s.broker.connection_closed("conn-1")
    assert s.broker.client_software("conn-1") is None
    assert s.broker.client_software("conn-2") == ("apache-kafka-java", "4.1.0")


def test_other_api_keys_are_left_to_the_backend() -> None:
    s = session()
    frame = request_frame(ApiVersionsRequest(), 0)
    frame.header.request_api_key = 3  # Metadata: the proxy forwards it
    assert s.broker.handle(s.ctx, frame, s.now_ms) is None
