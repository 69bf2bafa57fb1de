"""kafka-python ≥ 3.0 as an oracle: both codecs must write the same bytes and read each other's.

kafka-python builds its protocol classes from Apache Kafka's message JSON, an implementation
written independently of ours. Values come from OUR strategies and are converted to kafka-python
objects by one converter driven by our declarations (struct → kwargs, recursively). kafka-python's
classes come from the oracle shared with the benchmark (tests/support/kafka_python_oracle.py),
which gives the KIP-714 messages kafka-python does not ship to its own JSON loader as hand-written
schemas (tests/support/kafka_json/, from §A.2).

kafka-python quirks met on the way (ours follows Kafka's generated Java code in each case):
- Unknown tagged fields are decoded into `unknown_tags` but never written back, so values are
  compared without them (xfail below).
- A tagged field is written whenever it differs from kafka-python's own default, which is
  None for uuid and struct fields: an explicit all-zero uuid is written where Java omits it
  (xfail below). The converter therefore leaves default-valued tagged fields unset.
- `ApiVersionsResponse.decode` re-reads every error response as v0, misreading a v3/v4 error
  response, which Kafka 4.1 sends for INVALID_REQUEST (§B.1; xfail below).
- A message with no fields cannot be loaded (`StructField` iterates None; xfail below).
- `*AuthorizedOperations` fields are patched to a `bitfield` type named `authorized_operations`
  (a set of bit numbers, None for INT32_MIN); the converter maps them.
- Every message accepts versions from 0, whatever its JSON's validVersions say.
- A decoded object cannot be re-encoded with `encode(version=...)` (it has no `_header`), only
  with `encode()`.
- The all-zero uuid is read as None (and None written as zeros).
- `importlib.resources.read_text` in its loader is deprecated on Python 3.11.
"""

from __future__ import annotations

import io
import struct
import uuid
import warnings
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_python_oracle import kafka_python_class
from kconform.codecs.messages import (
    ALL_MESSAGES,
    ApiVersionsResponse,
    FetchRequest,
    RequestHeader,
    ResponseHeader,
)
from kconform.codecs.schema import Field, Message, Struct
from kconform.codecs.wire import ZERO_UUID

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.protocol import api_header as kafka_headers
    from kafka.protocol.schemas.fields.codecs.types import BitField

pytestmark = pytest.mark.differential

TELEMETRY = (  # from the oracle's JSON; ListClientMetricsResourcesRequest cannot load (xfail below)
    "GetTelemetrySubscriptionsRequest",
    "GetTelemetrySubscriptionsResponse",
    "PushTelemetryRequest",
    "PushTelemetryResponse",
    "ListClientMetricsResourcesResponse",
)
SHIPPED: dict[str, Any] = {  # kafka-python's own classes
    f"{stem}{kind}": kafka_python_class(f"{stem}{kind}")
    for stem in (
        "ApiVersions", "Metadata", "FindCoordinator",  # kafka.protocol.metadata
        "DescribeCluster", "DescribeConfigs", "AlterConfigs",  # kafka.protocol.admin
        "IncrementalAlterConfigs", "ListConfigResources",
        "CreateTopics", "DeleteTopics",  # kafka.protocol.admin.topics
        "Produce",  # kafka.protocol.producer
        "Fetch", "ListOffsets",  # kafka.protocol.consumer
    )
    for kind in ("Request", "Response")
}  # fmt: skip
OURS = {cls.struct_name: cls for cls in ALL_MESSAGES}

PAIRS = [
    pytest.param(OURS[name], version, id=f"{name}-v{version}")
    for name in (*SHIPPED, *TELEMETRY)
    for version in OURS[name].versions()
    if name in TELEMETRY or version <= SHIPPED[name].max_version
]
EXAMPLES = max(10, settings().max_examples // 10)  # ~130 pairs share the budget


# --- one converter each way, driven by our declarations ---------------------------------------


def _kafka_python_field(kp_struct: Any, f: Field) -> tuple[str, Any]:
    fields = kp_struct.fields
    if f.attr in fields:
        return f.attr, fields[f.attr]
    if f.name.endswith("AuthorizedOperations") and "authorized_operations" in fields:
        return "authorized_operations", fields["authorized_operations"]  # kafka-python's patch
    raise LookupError(f"kafka-python has no field for {f.name} in {kp_struct}")


def _default(cls: type[Struct], f: Field) -> Any:
    return getattr(cls(), f.attr)


def to_kafka_python(value: Struct, kp_struct: Any, version: int) -> dict[str, Any]:
    """Keyword arguments for kafka-python's class of `value`'s struct."""
    kwargs: dict[str, Any] = {}
    for f in value.schema_fields:
        if not f.present(version):
            continue
        v = getattr(value, f.attr)
        if f.tagged(version) and v == _default(type(value), f):
            continue  # left unset: kafka-python's tagged defaults differ from Kafka's (uuid)
        name, kp_field = _kafka_python_field(kp_struct, f)
        if kp_field.type_str == "bitfield":
            bits = BitField.from_32_bit_field(v & 0xFFFFFFFF)
            v = None if bits == {31} else bits
        elif f.is_struct and f.is_array and v is not None:
            element = kp_field.array_of
            v = [element.data_class(**to_kafka_python(x, element, version)) for x in v]
        elif f.is_struct and v is not None:
            v = kp_field.data_class(**to_kafka_python(v, kp_field, version))
        elif isinstance(v, memoryview):
            v = bytes(v)
        kwargs[name] = v
    return kwargs


def from_kafka_python(obj: Any, cls: type[Struct], version: int) -> Struct:
    """Our value for a kafka-python object (tagged fields it did not read keep our default)."""
    kwargs: dict[str, Any] = {}
    for f in cls.schema_fields:
        if not f.present(version):
            continue
        name, kp_field = _kafka_python_field(obj._struct, f)
        if f.tagged(version) and name not in (obj.tags or ()):
            continue
        v = getattr(obj, name)
        if kp_field.type_str == "bitfield":
            raw = BitField.to_32_bit_field({31} if v is None else v)
            v = raw - (1 << 32) if raw & 0x80000000 else raw
        elif f.is_struct and f.is_array and v is not None:
            v = [from_kafka_python(x, cls.structs[f.element_type], version) for x in v]
        elif f.is_struct and v is not None:
            v = from_kafka_python(v, cls.structs[f.element_type], version)
        elif f.type == "uuid" and v is None:
            v = ZERO_UUID  # kafka-python reads the all-zero uuid as None
        kwargs[f.attr] = v
    return cls(**kwargs)


def without_unknown_tags(value: Any) -> Any:
    """The same value with every unknown tagged field dropped (kafka-python cannot write them)."""
    if isinstance(value, list):
        return [without_unknown_tags(v) for v in value]
    if not isinstance(value, Struct):
        return value
    fields = {f.attr: without_unknown_tags(getattr(value, f.attr)) for f in value.schema_fields}
    return type(value)(**fields)


@cache
def strategy(cls: type[Message], version: int) -> st.SearchStrategy[Message]:
    return cls.strategy(version).map(without_unknown_tags)


# --- the differential checks ----------------------------------------------------------------


@pytest.mark.parametrize(("cls", "version"), PAIRS)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_both_codecs_write_the_same_bytes_and_read_each_other(
    cls: type[Message], version: int, data: st.DataObject
) -> None:
    obj = data.draw(strategy(cls, version), label=cls.struct_name)
    kp_cls = kafka_python_class(cls.struct_name)
    ours = obj.encode(version)

    kp_obj = kp_cls(version=version, **to_kafka_python(obj, kp_cls._struct, version))
    theirs = bytes(kp_obj.encode(version=version))
    assert ours.hex() == theirs.hex()
    assert cls.decode(theirs, version) == obj

    if cls is ApiVersionsResponse and obj.error_code != 0 and version > 0:
        return  # kafka-python reads this as v0: test_kafka_python_reads_error_apiversions_...
    assert from_kafka_python(kp_cls.decode(ours, version=version), cls, version) == obj


@pytest.mark.parametrize(
    ("cls", "version"),
    [pytest.param(RequestHeader, v, id=f"RequestHeader-v{v}") for v in (1, 2)]
    + [pytest.param(ResponseHeader, v, id=f"ResponseHeader-v{v}") for v in (0, 1)],
)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_headers_match_kafka_python(cls: type[Message], version: int, data: st.DataObject) -> None:
    obj = data.draw(strategy(cls, version), label=cls.struct_name)
    kp_cls = getattr(kafka_headers, cls.struct_name)
    flexible = cls.is_flexible(version)  # kafka-python picks the header version by flexibility
    theirs = bytes(kp_cls(**to_kafka_python(obj, kp_cls._struct, version)).encode(flexible))
    assert obj.encode(version).hex() == theirs.hex()
    decoded = kp_cls.decode(io.BytesIO(obj.encode(version)), flexible=flexible)
    assert from_kafka_python(decoded, cls, version) == obj


# --- where kafka-python is wrong (strict xfails: they fail loudly once it is fixed) --------------


@pytest.mark.xfail(
    strict=True,
    raises=(struct.error, AssertionError),  # today: struct.error, reading compact bytes as v0
    reason="kafka-python's ApiVersionsResponse.decode reads any error response as v0; Kafka 4.1 "
    "serializes INVALID_REQUEST at the request's version (§B.1) and Java's "
    "ApiVersionsResponse.parse falls back to v0 only when the versioned parse fails (§B.2)",
)
@pytest.mark.parametrize("version", [3, 4])
def test_kafka_python_reads_error_apiversions_responses_at_their_version(version: int) -> None:
    invalid_request = ApiVersionsResponse(error_code=42, throttle_time_ms=0).encode(version)
    decoded = SHIPPED["ApiVersionsResponse"].decode(invalid_request, version=version)
    assert from_kafka_python(decoded, ApiVersionsResponse, version) == ApiVersionsResponse(
        error_code=42
    )


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="kafka-python keeps unknown tagged fields in `unknown_tags` but never writes them; "
    "Kafka's generated code writes `_unknownTaggedFields` back",
)
def test_kafka_python_writes_unknown_tagged_fields_back() -> None:
    wire = ApiVersionsResponse(unknown_tagged_fields={9: b"x"}).encode(3)
    assert bytes(SHIPPED["ApiVersionsResponse"].decode(wire, version=3).encode()) == wire


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="kafka-python writes a tagged uuid that is all zeros (its default is None); Kafka "
    "writes a tagged field only when it differs from the declared default, Uuid.ZERO_UUID",
)
def test_kafka_python_omits_a_tagged_uuid_left_at_zero() -> None:
    kp = SHIPPED["FetchRequest"]
    partition = kp.FetchTopic.FetchPartition(
        partition=0, fetch_offset=0, partition_max_bytes=1, replica_directory_id=uuid.UUID(int=0)
    )
    topic = kp.FetchTopic(topic_id=uuid.UUID(int=5), partitions=[partition])
    ours = FetchRequest(topics=[FetchRequest.FetchTopic(
        topic_id=uuid.UUID(int=5),
        partitions=[FetchRequest.FetchPartition(partition=0, fetch_offset=0,
                                                partition_max_bytes=1)],
    )])  # fmt: skip
    assert bytes(kp(version=17, topics=[topic]).encode(version=17)) == ours.encode(17)


@pytest.mark.xfail(
    strict=True,
    raises=TypeError,
    reason="kafka-python cannot load a message without fields (StructField iterates None), "
    "such as ListClientMetricsResourcesRequest (3.7-4.0)",
)
def test_kafka_python_loads_a_message_without_fields() -> None:
    name = "ListClientMetricsResourcesRequest"
    kp_cls = kafka_python_class(name)
    assert bytes(kp_cls(version=0).encode(version=0)) == OURS[name]().encode(0)
