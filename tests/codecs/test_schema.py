"""The declaration model: what a declaration means, and the slips it refuses."""

from __future__ import annotations

import pytest

from kconform.codecs.schema import NULL, Field, Versions, message, snake_case
from kconform.codecs.wire import DecodeError, EncodeError
from kconform.errors import HarnessDefect


def test_versions_parse_like_kafka_json() -> None:
    assert 7 in Versions.parse("3+") and 2 not in Versions.parse("3+")
    assert 4 in Versions.parse("1-4") and 5 not in Versions.parse("1-4")
    assert 0 in Versions.parse("0") and 1 not in Versions.parse("0")
    assert 0 not in Versions.parse("none")
    assert [str(Versions.parse(t)) for t in ("3+", "1-4", "0", "none")] == [
        "3+",
        "1-4",
        "0",
        "none",
    ]


@pytest.mark.parametrize(
    ("kafka", "python"),
    [("ClientInstanceId", "client_instance_id"), ("PushIntervalMs", "push_interval_ms"),
     ("AcceptedCompressionTypes", "accepted_compression_types"), ("ZkMigrationReady",
     "zk_migration_ready"), ("TopicID", "topic_id"), ("IsSensitive", "is_sensitive")],
)  # fmt: skip
def test_snake_case_names(kafka: str, python: str) -> None:
    assert snake_case(kafka) == python


def _example(extra: list[Field] | None = None, valid: str = "0-1") -> type:
    return message(
        "ExampleRequest", api_key=1000, kind="request", valid=valid, flexible="1+",
        fields=[
            Field("Id", "int32", "0+"),
            Field("Note", "string", "1+", nullable_versions="1+", default=NULL),
            Field("Hint", "int64", "1+", tag=0, tagged_versions="1+", default=-1),
            *(extra or []),
        ],
    )  # fmt: skip


def test_adding_a_version_is_a_data_change() -> None:
    v1 = _example()
    v2 = _example([Field("Extra", "int8", "2+")], valid="0-2")
    body = {"id": 7, "note": "x"}
    assert v1(**body).encode(1) == v2(**body).encode(1)
    assert v2(**body, extra=3).encode(2) == v1(**body).encode(1)[:-1] + b"\x03\x00"


def test_tagged_field_written_only_when_not_default() -> None:
    cls = _example()
    plain = cls(id=1).encode(1)
    tagged = cls(id=1, hint=5).encode(1)
    assert plain.endswith(b"\x00")  # empty tag section
    # one tag: count 1, tag 0, size 8, int64 5
    assert tagged.endswith(bytes.fromhex("0100080000000000000005"))
    assert cls.decode(tagged, 1).hint == 5 and cls.decode(plain, 1).hint == -1


def test_absent_non_ignorable_field_refuses_non_default_value() -> None:
    cls = _example()
    with pytest.raises(EncodeError, match="Note"):
        cls(id=1, note="only in v1").encode(0)
    assert cls(id=1, note="dropped").encode(0, strict=False) == cls(id=1).encode(0)


def test_reserved_attribute_names_are_refused() -> None:
    with pytest.raises(HarnessDefect, match="reserved"):
        message(
            "Bad", kind="data", valid="0", flexible="none", fields=[Field("Encode", "int8", "0+")]
        )


def test_undeclared_struct_and_duplicate_tags_are_refused() -> None:
    with pytest.raises(HarnessDefect, match="undeclared"):
        message("Bad", kind="data", valid="0", flexible="none", fields=[Field("X", "[]Nope", "0+")])
    with pytest.raises(HarnessDefect, match="duplicate tags"):
        message(
            "Bad", kind="data", valid="0", flexible="0+",
            fields=[Field("A", "int8", "0+", tag=1, tagged_versions="0+"),
                    Field("B", "int8", "0+", tag=1, tagged_versions="0+")],
        )  # fmt: skip


def test_nullable_struct_uses_an_int8_marker() -> None:
    cls = message(
        "Cursor", kind="data", valid="0", flexible="0+",
        fields=[Field("Next", "Position", "0+", nullable_versions="0+", default=NULL,
                      fields=[Field("Offset", "int32", "0+")])],
    )  # fmt: skip
    assert cls().encode(0) == b"\xff\x00"
    present = cls(next=cls.Position(offset=5))
    assert present.encode(0) == b"\x01" + bytes.fromhex("00000005") + b"\x00" + b"\x00"
    assert cls.decode(present.encode(0), 0) == present


def test_unknown_fields_in_constructor_are_refused() -> None:
    with pytest.raises(TypeError, match="no field"):
        _example()(bogus=1)


def test_version_outside_valid_versions() -> None:
    cls = _example()
    with pytest.raises(DecodeError, match="validVersions"):
        cls.decode(b"", 5)
    with pytest.raises(EncodeError, match="outside"):
        cls(id=1).encode(5)
