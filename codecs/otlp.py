"""OTLP ``MetricsData`` payloads as KIP-714 defines them: parse, flatten, build, validate.

KIP-714 "Metrics naming and format / Encoding": a client pushes an OpenTelemetry (v0.19)
``MetricsData`` protobuf in ``PushTelemetryRequest.Metrics``. Pure: bytes in, values out.

Parsing decisions (protobuf itself accepts most garbage as "unknown fields"):

- an empty payload is an empty ``MetricsData`` (the KIP's "empty metrics blob");
- rejected with `OtlpDecodeError`, naming the field path and byte offset: malformed wire data,
  any top-level field other than ``resource_metrics`` (MetricsData has had only that field in
  every OTLP release, so anything else is not a MetricsData), a known field with the wrong wire
  type, invalid UTF-8 in a string, nesting deeper than 64 messages;
- unknown fields below the top level are accepted (proto3 forward compatibility) and reported
  by `validate` as ``otlp.payload.unknown_field``.

Validation, what KIP-714 asks of one pushed payload, lives in `kconform.codecs.otlp_validation`,
which builds on this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import Any, Literal, TypeAlias

from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2

from kconform.codecs.wire import CodecMisuse, EncodeError
from kconform.errors import ProtocolError

__all__ = [
    "AttrValue",
    "Kind",
    "MetricPoint",
    "OtlpDecodeError",
    "Temporality",
    "ValueType",
    "attributes_to_dict",
    "build_metrics_data",
    "counter",
    "flatten",
    "gauge",
    "parse_metrics_data",
]

Kind: TypeAlias = Literal["sum", "gauge", "histogram", "exponential_histogram", "summary", "none"]
Temporality: TypeAlias = Literal["delta", "cumulative", "unspecified"]
ValueType: TypeAlias = Literal["int", "double", "none"]
AttrValue: TypeAlias = (
    "str | bool | int | float | bytes | tuple[AttrValue, ...] | Mapping[str, AttrValue] | None"
)


class OtlpDecodeError(ProtocolError):
    """The payload is not an OTLP MetricsData protobuf; the message says where and why."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class MetricPoint:
    """One data point with its metric and resource context: what suites reason about.

    A metric without data (kind "none") flattens to one point carrying only its name/context.
    """

    name: str
    kind: Kind = "gauge"
    monotonic: bool | None = None  # Sum only
    temporality: Temporality | None = None  # Sum and histograms only
    value: int | float | None = None  # NumberDataPoint only
    value_type: ValueType = "none"
    attributes: Mapping[str, AttrValue] = field(default_factory=dict)
    start_time_unix_nano: int = 0
    time_unix_nano: int = 0
    resource_attributes: Mapping[str, AttrValue] = field(default_factory=dict)
    scope_name: str = ""


def gauge(name: str, value: int | float, *, time_unix_nano: int, **context: Any) -> MetricPoint:
    """A Gauge point; ``context`` takes the other MetricPoint fields (attributes, ...)."""
    vt = _value_type(value)
    return MetricPoint(
        name, "gauge", None, None, value, vt, time_unix_nano=time_unix_nano, **context
    )


def counter(
    name: str, value: int | float, *, delta: bool, time_unix_nano: int, **context: Any
) -> MetricPoint:
    """A monotonic Sum point, DELTA or CUMULATIVE as the subscription's DeltaTemporality says."""
    t: Temporality = "delta" if delta else "cumulative"
    vt = _value_type(value)
    return MetricPoint(name, "sum", True, t, value, vt, time_unix_nano=time_unix_nano, **context)


def _value_type(value: int | float) -> ValueType:
    return "int" if isinstance(value, int) and not isinstance(value, bool) else "double"


# --- parsing -------------------------------------------------------------------------------

_TYPE_WIRE = {1: 1, 2: 5, 3: 0, 4: 0, 5: 0, 6: 1, 7: 5, 8: 0, 9: 2, 11: 2, 12: 2, 13: 0, 14: 0,
              15: 5, 16: 1, 17: 0, 18: 0}  # fmt: skip  # descriptor.proto Type -> wire type
_TYPE_STRING, _TYPE_MESSAGE, _MAX_DEPTH = 9, 11, 64
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"\x04\x22\x4d\x18", "lz4"),
          (b"\x82SNAPPY\x00", "snappy"))  # fmt: skip


def parse_metrics_data(payload: bytes | bytearray | memoryview) -> metrics_pb2.MetricsData:
    """Decode a (decompressed) PushTelemetryRequest.Metrics payload; see the module docstring."""
    if not isinstance(payload, bytes | bytearray | memoryview):
        raise CodecMisuse(f"payload must be bytes-like, not {type(payload).__name__}")
    buf = bytes(payload)
    try:
        _walk(buf, 0, len(buf), metrics_pb2.MetricsData.DESCRIPTOR, "MetricsData", 0, None)
        data = metrics_pb2.MetricsData()
        try:
            data.ParseFromString(buf)
        except Exception as exc:  # DecodeError, or whatever else the runtime raises
            raise OtlpDecodeError(f"MetricsData: protobuf rejected the payload: {exc}") from exc
    except OtlpDecodeError as exc:
        hint = next((c for magic, c in _MAGIC if buf.startswith(magic)), None)
        if hint is None:
            raise
        msg = f"{exc} (the payload starts like {hint} data: decompress it first)"
        raise OtlpDecodeError(msg, exc.offset) from None
    return data


def _varint(buf: bytes, pos: int, end: int, path: str) -> tuple[int, int]:
    result, shift, start = 0, 0, pos
    while pos < end and shift < 70:
        byte = buf[pos]
        result |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not byte & 0x80:
            return result, pos
    raise OtlpDecodeError(f"{path}: truncated or over-long varint at byte {start}", start)


def _walk(
    buf: bytes, pos: int, end: int, desc: Any, path: str, depth: int, unknown: list[str] | None
) -> None:
    """Check the wire structure of one message against its descriptor (duck-typed protobuf)."""
    if depth > _MAX_DEPTH:
        raise OtlpDecodeError(f"{path}: nesting deeper than {_MAX_DEPTH} at byte {pos}", pos)
    counts: dict[int, int] = {}
    while pos < end:
        at = pos
        tag, pos = _varint(buf, pos, end, path)
        number, wire = tag >> 3, tag & 7
        fd = desc.fields_by_number.get(number)
        where = f"{path}.{fd.name if fd else f'<field {number}>'}"
        if fd is not None and fd.is_repeated:
            where, counts[number] = f"{where}[{counts.get(number, 0)}]", counts.get(number, 0) + 1
        if number == 0 or wire in (3, 4, 6, 7):
            raise OtlpDecodeError(f"{where}: invalid tag (wire type {wire}) at byte {at}", at)
        size = 0
        if wire == 0:
            _, pos = _varint(buf, pos, end, where)
        elif wire == 2:
            size, pos = _varint(buf, pos, end, where)
        else:
            size = 8 if wire == 1 else 4
        if size > end - pos:
            msg = f"{where}: length {size} at byte {at} exceeds the remaining {end - pos}"
            raise OtlpDecodeError(msg, at)
        start, pos = pos, pos + (size if wire != 0 else 0)
        if fd is None:
            if depth == 0 and unknown is None:
                msg = f"{where} (wire type {wire}) at byte {at} is not part of MetricsData"
                raise OtlpDecodeError(msg + " (only resource_metrics, field 1)", at)
            if unknown is not None:
                unknown.append(where)
            continue
        expected = _TYPE_WIRE.get(fd.type, 2)
        if wire != expected and not (wire == 2 and fd.is_repeated and expected != 2):
            msg = f"{where}: wire type {wire} at byte {at}, the field needs {expected}"
            raise OtlpDecodeError(msg, at)
        if wire == 2 and fd.type == _TYPE_MESSAGE:
            _walk(buf, start, pos, fd.message_type, where, depth + 1, unknown)
        elif wire == 2 and fd.type == _TYPE_STRING:
            try:
                buf[start:pos].decode("utf-8")
            except UnicodeDecodeError as exc:
                at = start + exc.start
                raise OtlpDecodeError(f"{where}: invalid UTF-8 at byte {at}", at) from None


# --- flattening and building ----------------------------------------------------------------

_TEMPORALITY: Mapping[int, Temporality] = {0: "unspecified", 1: "delta", 2: "cumulative"}
_TEMPORALITY_ENUM = {
    "unspecified": metrics_pb2.AGGREGATION_TEMPORALITY_UNSPECIFIED,
    "delta": metrics_pb2.AGGREGATION_TEMPORALITY_DELTA,
    "cumulative": metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE,
}


def flatten(data: metrics_pb2.MetricsData) -> list[MetricPoint]:
    """Every data point of ``data`` in payload order, with its metric and resource context."""
    out: list[MetricPoint] = []
    for rm in data.resource_metrics:
        resource = attributes_to_dict(rm.resource.attributes)
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                out.extend(_points(metric, resource, sm.scope.name))
    return out


def _points(
    metric: metrics_pb2.Metric, resource: Mapping[str, AttrValue], scope: str
) -> Iterator[MetricPoint]:
    kind = metric.WhichOneof("data")
    if kind is None:
        yield MetricPoint(metric.name, "none", resource_attributes=resource, scope_name=scope)
        return
    monotonic = metric.sum.is_monotonic if kind == "sum" else None
    temporality = None
    if kind in ("sum", "histogram", "exponential_histogram"):
        enum = getattr(metric, kind).aggregation_temporality
        temporality = _TEMPORALITY.get(enum, "unspecified")
    for dp in getattr(metric, kind).data_points:
        value: int | float | None = None
        value_type: ValueType = "none"
        if kind in ("sum", "gauge"):
            which = dp.WhichOneof("value")
            if which is not None:
                value = getattr(dp, which)
                value_type = "int" if which == "as_int" else "double"
        yield MetricPoint(
            metric.name,
            kind,
            monotonic,
            temporality,
            value,
            value_type,
            attributes_to_dict(dp.attributes),
            dp.start_time_unix_nano,
            dp.time_unix_nano,
            resource,
            scope,
        )


def attributes_to_dict(kvs: Iterable[common_pb2.KeyValue]) -> dict[str, AttrValue]:
    """OTLP attributes as a dict (a repeated key keeps its last value)."""
    return {kv.key: _from_any(kv.value) for kv in kvs}


def _from_any(v: common_pb2.AnyValue) -> AttrValue:
    which = v.WhichOneof("value")
    if which == "array_value":
        return tuple(_from_any(x) for x in v.array_value.values)
    if which == "kvlist_value":
        return attributes_to_dict(v.kvlist_value.values)
    scalar: AttrValue = None if which is None else getattr(v, which)
    return scalar


def _to_any(value: AttrValue) -> common_pb2.AnyValue:
    out = common_pb2.AnyValue()
    if isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        out.int_value = value
    elif isinstance(value, float):
        out.double_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, bytes):
        out.bytes_value = value
    elif isinstance(value, tuple):
        out.array_value.SetInParent()  # an empty array is still an array
        out.array_value.values.extend(_to_any(x) for x in value)
    elif isinstance(value, Mapping):
        out.kvlist_value.SetInParent()
        out.kvlist_value.values.extend(_key_values(value))
    return out


def _key_values(attrs: Mapping[str, AttrValue]) -> list[common_pb2.KeyValue]:
    return [common_pb2.KeyValue(key=k, value=_to_any(v)) for k, v in attrs.items()]


def _freeze(value: AttrValue) -> object:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return tuple(_freeze(v) for v in value) if isinstance(value, tuple) else (type(value), value)


def build_metrics_data(
    points: Iterable[MetricPoint],
    *,
    resource_attributes: Mapping[str, AttrValue] | None = None,
    scope_version: str = "",
    layout: Literal["shared", "per_metric"] = "shared",
) -> bytes:
    """Serialize Sum/Gauge points (and data-less metrics) into a MetricsData payload.

    ``layout="shared"``: consecutive points with the same resource share a ResourceMetrics, with
    one ScopeMetrics per run of scope names and one Metric per run of the same metric (the
    librdkafka shape). ``"per_metric"``: each point gets its own ResourceMetrics with a copy of
    the Resource, one ScopeMetrics and one Metric (the Java client's shape).
    ``resource_attributes`` overrides the points' own. ``flatten(parse(...))`` gives the points
    back in order.
    """
    pts = [_buildable(p) for p in points]

    def resource_of(p: MetricPoint) -> Mapping[str, AttrValue]:
        return p.resource_attributes if resource_attributes is None else resource_attributes

    if layout == "per_metric":
        groups = [[p] for p in pts]
    else:
        groups = [list(g) for _, g in groupby(pts, key=lambda p: _freeze(resource_of(p)))]
    data = metrics_pb2.MetricsData()
    for group in groups:
        rm = data.resource_metrics.add()
        rm.resource.attributes.extend(_key_values(resource_of(group[0])))
        for scope_name, in_scope in groupby(group, key=lambda p: p.scope_name):
            sm = rm.scope_metrics.add()
            if scope_name or scope_version:
                sm.scope.name, sm.scope.version = scope_name, scope_version
            for _, same in groupby(in_scope, key=_metric_identity):
                run = list(same)
                for chunk in [[p] for p in run] if run[0].kind == "none" else [run]:
                    _add_metric(sm.metrics.add(), chunk)
    payload: bytes = data.SerializeToString()
    return payload


def _metric_identity(p: MetricPoint) -> tuple[str, str, bool | None, str | None]:
    return p.name, p.kind, p.monotonic, p.temporality


def _buildable(p: MetricPoint) -> MetricPoint:
    if p.kind == "none":
        bare = MetricPoint(p.name, "none", resource_attributes=p.resource_attributes)
        ok = p == replace(bare, scope_name=p.scope_name)
    elif p.value is None or isinstance(p.value, bool):
        ok = p.value is None and p.value_type == "none"
    else:
        ok = p.value_type == "double" or (p.value_type == "int" and isinstance(p.value, int))
    if p.kind in ("gauge", "sum"):
        ok = ok and (p.monotonic is None) == (p.temporality is None) == (p.kind == "gauge")
    if not ok or p.kind not in ("none", "gauge", "sum"):
        raise EncodeError(f"build_metrics_data cannot encode {p!r}")
    return p


def _add_metric(metric: metrics_pb2.Metric, points: list[MetricPoint]) -> None:
    metric.name, first = points[0].name, points[0]
    if first.kind == "none":
        return
    if first.kind == "sum":
        metric.sum.is_monotonic = bool(first.monotonic)
        metric.sum.aggregation_temporality = _TEMPORALITY_ENUM[first.temporality or "unspecified"]
    container = metric.sum if first.kind == "sum" else metric.gauge
    for p in points:
        dp = container.data_points.add()
        dp.attributes.extend(_key_values(p.attributes))
        dp.start_time_unix_nano, dp.time_unix_nano = p.start_time_unix_nano, p.time_unix_nano
        if p.value_type == "int":
            dp.as_int = int(p.value or 0)
        elif p.value_type == "double":
            dp.as_double = float(p.value or 0.0)
