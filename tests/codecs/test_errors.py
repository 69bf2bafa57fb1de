"""Error codes and names against Apache Kafka's ``Errors.java`` (4.1) and its retriable classes."""

from __future__ import annotations

import pytest

from kconform.codecs.errors import RETRIABLE, ErrorCode, error_name, is_retriable


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (-1, "UNKNOWN_SERVER_ERROR"),
        (0, "NONE"),
        (6, "NOT_LEADER_OR_FOLLOWER"),
        (31, "CLUSTER_AUTHORIZATION_FAILED"),
        (35, "UNSUPPORTED_VERSION"),
        (40, "INVALID_CONFIG"),
        (42, "INVALID_REQUEST"),
        (76, "UNSUPPORTED_COMPRESSION_TYPE"),
        (87, "INVALID_RECORD"),
        (89, "THROTTLING_QUOTA_EXCEEDED"),
        (117, "UNKNOWN_SUBSCRIPTION_ID"),
        (118, "TELEMETRY_TOO_LARGE"),
        (119, "INVALID_REGISTRATION"),
        (128, "INVALID_REGULAR_EXPRESSION"),
        (129, "REBOOTSTRAP_REQUIRED"),
        (133, "SHARE_SESSION_LIMIT_REACHED"),
    ],
)
def test_names_match_errors_java(code: int, name: str) -> None:
    assert error_name(code) == name
    assert ErrorCode[name] == code


def test_codes_are_contiguous_and_unaliased() -> None:
    assert [code.value for code in ErrorCode] == list(range(-1, 134))
    assert len(ErrorCode.__members__) == len(ErrorCode)  # an IntEnum would alias a repeat


@pytest.mark.parametrize("code", [-2, 134, 1234, 32767, -32768])
def test_unknown_codes_are_named_not_refused(code: int) -> None:
    assert error_name(code) == f"UNKNOWN({code})"
    assert not is_retriable(code)


@pytest.mark.parametrize(
    ("code", "retriable"),
    [
        (ErrorCode.CORRUPT_MESSAGE, True),  # CorruptRecordException extends RetriableException
        (ErrorCode.NOT_LEADER_OR_FOLLOWER, True),  # via InvalidMetadataException
        (ErrorCode.NOT_COORDINATOR, True),  # via RefreshRetriableException
        (ErrorCode.CONCURRENT_TRANSACTIONS, True),
        (ErrorCode.THROTTLING_QUOTA_EXCEEDED, True),
        (ErrorCode.SHARE_SESSION_LIMIT_REACHED, True),
        (ErrorCode.UNKNOWN_SERVER_ERROR, False),
        (ErrorCode.INVALID_REQUEST, False),
        (ErrorCode.INVALID_RECORD, False),
        (ErrorCode.PRODUCER_FENCED, False),
        (ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, False),
        (ErrorCode.UNKNOWN_SUBSCRIPTION_ID, False),
        (ErrorCode.TELEMETRY_TOO_LARGE, False),
    ],
)
def test_retriable_follows_the_exception_hierarchy(code: ErrorCode, retriable: bool) -> None:
    assert is_retriable(code) is retriable
    assert is_retriable(int(code)) is retriable


# kafka-python spells a few codes as older Kafka releases did, and does not retry CORRUPT_MESSAGE
KAFKA_PYTHON_NAMES = {
    -1: "UNKNOWN",
    0: "NO_ERROR",
    6: "NOT_LEADER_FOR_PARTITION",
    10: "MESSAGE_SIZE_TOO_LARGE",
    17: "INVALID_TOPIC",
    39: "INVALID_REPLICATION_ASSIGNMENT",
}
KAFKA_PYTHON_RETRIABLE_DIFFERS = {ErrorCode.CORRUPT_MESSAGE}


@pytest.mark.differential
def test_agrees_with_kafka_python() -> None:
    errors = pytest.importorskip("kafka.errors")
    known = {
        cls.errno: cls
        for cls in vars(errors).values()
        if isinstance(cls, type)
        and issubclass(cls, errors.BrokerResponseError)
        and isinstance(getattr(cls, "errno", None), int)
    }
    assert set(known) <= {code.value for code in ErrorCode}
    for code, cls in known.items():
        assert cls.message == KAFKA_PYTHON_NAMES.get(code, error_name(code)), code
        if code not in KAFKA_PYTHON_RETRIABLE_DIFFERS:
            assert bool(cls.retriable) == (code in RETRIABLE), code
