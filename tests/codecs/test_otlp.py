"""kconform.codecs.otlp: KIP-714 OTLP payloads built, parsed, flattened and validated."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.metrics.v1 import metrics_pb2

from kconform.codecs import otlp, otlp_validation
from kconform.codecs import otlp_catalogue as cat
from kconform.codecs.otlp import MetricPoint, counter, gauge
from kconform.rules import RULES
from kconform.rules.otlp_payload import PRIVACY_LEVEL

T0 = 1_700_000_000_000_000_000  # an epoch time in ns (Nov 2023)
STEP = 60_000_000_000  # one push interval
ADDED = T0 - 10 * STEP  # when the cumulative counters started


# --- payload shapes -------------------------------------------------------------------------


def rdkafka_producer(t: int = T0, *, delta: bool = True) -> list[MetricPoint]:
    """A correct librdkafka-style producer push: one resource, scope "rdkafka#producer-1"."""
    ctx: dict[str, Any] = {
        "resource_attributes": {"client_rack": "us-east-1a", "transactional_id": "txn-orders"},
        "scope_name": "rdkafka#producer-1",
    }
    points: list[MetricPoint] = []
    for std in (m for m in cat.STANDARD_METRICS if m.client_type == "producer"):
        if std.kind == "sum":
            start = t - STEP if delta else ADDED
            points.append(
                counter(
                    std.name, 3, delta=delta, time_unix_nano=t, start_time_unix_nano=start, **ctx
                )
            )
        elif std.labels:
            for node in (1, 2):
                attrs = {"node_id": str(node)}
                points.append(
                    gauge(
                        std.name,
                        1.5,
                        time_unix_nano=t,
                        start_time_unix_nano=t - STEP,
                        attributes=attrs,
                        **ctx,
                    )
                )
        else:
            points.append(
                gauge(std.name, 0.25, time_unix_nano=t, start_time_unix_nano=t - STEP, **ctx)
            )
    return points


def java_consumer(t: int = T0) -> list[MetricPoint]:
    """A correct Java-style consumer push: CUMULATIVE, gauges without a start time."""
    resource = {
        "group_id": "orders",
        "group_member_id": "consumer-orders-1-4f6c",
        "client_rack": "r1",
    }
    points: list[MetricPoint] = []
    for std in (m for m in cat.STANDARD_METRICS if m.client_type == "consumer"):
        attrs = {"node_id": "1"} if std.labels else {}
        if std.kind == "sum":
            p = counter(std.name, 12.0, delta=False, time_unix_nano=t, start_time_unix_nano=ADDED)
        else:
            p = gauge(std.name, 4.0, time_unix_nano=t)
        points.append(replace(p, attributes=attrs, resource_attributes=resource))
    return points


def check(
    points: list[MetricPoint] | None = None,
    *,
    payload: bytes | None = None,
    layout: Literal["shared", "per_metric"] = "shared",
    scope_version: str = "2.5.0",
    delta: bool = True,
    requested: list[str] | None = None,
    client_type: cat.ClientType | None = "producer",
    previous: list[MetricPoint] | None = None,
    private: tuple[str, ...] = (),
) -> list[otlp_validation.Violation]:
    if payload is None:
        assert points is not None
        payload = otlp.build_metrics_data(points, layout=layout, scope_version=scope_version)
    return otlp_validation.validate(
        otlp.parse_metrics_data(payload),
        delta_temporality=delta,
        requested_metrics=["*"] if requested is None else requested,
        client_type=client_type,
        previous=previous,
        private_values=private,
    )


def rules(violations: list[otlp_validation.Violation]) -> set[str]:
    return {v.rule for v in violations}


def edit(points: list[MetricPoint], name: str, **changes: Any) -> list[MetricPoint]:
    """The points with every point of metric ``name`` changed."""
    assert any(p.name == name for p in points)
    return [replace(p, **changes) if p.name == name else p for p in points]


P = cat.PREFIX + "producer."
TOTAL, NODE_AVG, THROTTLE = (
    P + "connection.creation.total",
    P + "node.request.latency.avg",
    P + "produce.throttle.time.avg",
)


def _ld(field_number: int, body: bytes) -> bytes:
    """A length-delimited protobuf field."""
    size, length = len(body), b""
    while size > 0x7F:
        length, size = length + bytes([size & 0x7F | 0x80]), size >> 7
    return bytes([field_number << 3 | 2]) + length + bytes([size]) + body


# --- the two reference shapes validate clean --------------------------------------------------


def test_librdkafka_shaped_producer_payload_is_clean() -> None:
    points = rdkafka_producer()
    data = otlp.parse_metrics_data(otlp.build_metrics_data(points, scope_version="2.5.0"))
    assert len(data.resource_metrics) == 1 and len(data.resource_metrics[0].scope_metrics) == 1
    assert data.resource_metrics[0].scope_metrics[0].scope.name == "rdkafka#producer-1"
    assert check(points) == []
    assert check(rdkafka_producer(T0 + STEP), previous=points) == []


def test_java_shaped_consumer_payload_is_clean() -> None:
    points = java_consumer()
    payload = otlp.build_metrics_data(points, layout="per_metric")
    data = otlp.parse_metrics_data(payload)
    assert len(data.resource_metrics) == len(points)  # one ResourceMetrics per metric
    assert not data.resource_metrics[0].scope_metrics[0].HasField("scope")
    kw: dict[str, Any] = {"delta": False, "client_type": "consumer"}
    assert check(payload=payload, **kw) == []
    later = otlp.build_metrics_data(java_consumer(T0 + STEP), layout="per_metric")
    assert check(payload=later, previous=points, **kw) == []


def test_librdkafkas_own_label_names_are_only_should_findings() -> None:
    # librdkafka: resource attribute `member_id`, per-node attribute `node.id` (an int).
    points = [
        replace(p, attributes={"node.id": int(p.attributes["node_id"])}) if p.attributes else p
        for p in rdkafka_producer()
    ]
    points = [replace(p, resource_attributes={"member_id": "rdkafka-4f6c"}) for p in points]
    found = check(points)
    assert rules(found) == {"otlp.resource.label", "otlp.standard.labels"}
    assert {RULES[v.rule].level for v in found} == {"SHOULD"}
    assert any("group_member_id" in v.detail for v in found)


# --- every rule fires on a bad payload and stays quiet on its good twin -----------------------

Case = Callable[[], dict[str, Any]]


def _unknown_nested_field() -> dict[str, Any]:
    rm = metrics_pb2.ResourceMetrics()
    rm.scope_metrics.add().metrics.add(name=TOTAL)
    return {"payload": _ld(1, rm.SerializeToString() + b"\x48\x05"), "client_type": None}


def _nan() -> dict[str, Any]:
    return {"points": edit(rdkafka_producer(), THROTTLE, value=math.nan)}


def _drop(name: str, requested: list[str]) -> dict[str, Any]:
    return {"points": [p for p in rdkafka_producer() if p.name != name], "requested": requested}


def _with_previous(**changes: Any) -> dict[str, Any]:
    previous = rdkafka_producer(T0 - STEP, delta=False)
    return {
        "points": edit(rdkafka_producer(delta=False), TOTAL, **changes),
        "delta": False,
        "previous": previous,
    }


def _delta_previous(start: int) -> dict[str, Any]:
    previous = rdkafka_producer(T0 - STEP)
    return {
        "points": edit(rdkafka_producer(), TOTAL, start_time_unix_nano=start),
        "previous": previous,
    }


def _resource(**attrs: Any) -> dict[str, Any]:
    return {"points": [replace(p, resource_attributes=attrs) for p in rdkafka_producer()]}


def _attribute(key: str, value: Any) -> dict[str, Any]:
    return {"points": edit(rdkafka_producer(), NODE_AVG, attributes={"node_id": "1", key: value})}


def _extra(name: str) -> dict[str, Any]:
    return {"points": [*rdkafka_producer(), gauge(name, 1.0, time_unix_nano=T0)]}


CASES: dict[str, tuple[Case, Case]] = {
    # rule: (makes it fire, a near miss that must not)
    "otlp.payload.unknown_field": (
        _unknown_nested_field,
        lambda: {"payload": _ld(1, _ld(2, _ld(2, _ld(1, TOTAL.encode())))), "client_type": None},
    ),
    "otlp.metric.data": (
        lambda: _extra_point(MetricPoint(P + "x.total", "none")),
        lambda: _extra(P + "x.total"),
    ),
    "otlp.point.value": (
        lambda: {"points": edit(rdkafka_producer(), THROTTLE, value=None, value_type="none")},
        lambda: {"points": edit(rdkafka_producer(), THROTTLE, value=0, value_type="int")},
    ),
    "otlp.metric.sparse": (_nan, lambda: {"points": edit(rdkafka_producer(), THROTTLE, value=0.0)}),
    "otlp.name.syntax": (lambda: _extra("9 lives"), lambda: _extra("com.example.lives9")),
    "otlp.name.prefix": (
        lambda: _extra("producer.record.send.rate"),
        lambda: _extra(P + "record.send.rate"),
    ),
    "otlp.name.derivation": (
        lambda: _extra(P + "record-send-rate"),
        lambda: _extra(P + "record.send.rate"),
    ),
    "otlp.name.case": (
        lambda: _extra(P + "Record.send.rate"),
        lambda: _extra(P + "record.send.rate"),
    ),
    "otlp.name.namespace": (
        lambda: _extra("xmitq_latency"),
        lambda: _extra("io.confluent.librdkafka.client.produce.xmitq.latency"),
    ),
    "otlp.attribute.key": (lambda: _attribute("node-id", "1"), lambda: _attribute("topic", "t")),
    "otlp.metric.unrequested": (
        lambda: {"points": rdkafka_producer(), "requested": [P + "node."]},
        lambda: {"points": rdkafka_producer(), "requested": [P]},
    ),
    "otlp.required.missing": (
        lambda: _drop(TOTAL, ["*"]),
        lambda: _drop(P + "record.queue.time.avg", ["*"]),  # standard, not required
    ),
    "otlp.required.missing_empty_prefix": (lambda: _drop(TOTAL, [""]), lambda: _drop(TOTAL, ["x"])),
    "otlp.standard.type": (
        lambda: {
            "points": edit(
                rdkafka_producer(), TOTAL, kind="gauge", monotonic=None, temporality=None
            )
        },
        lambda: {"points": rdkafka_producer()},
    ),
    "otlp.standard.labels": (
        lambda: {"points": edit(rdkafka_producer(), NODE_AVG, attributes={"node.id": 1})},
        lambda: {"points": edit(rdkafka_producer(), NODE_AVG, attributes={"node_id": "7"})},
    ),
    "otlp.sum.monotonic": (
        lambda: {"points": edit(rdkafka_producer(), TOTAL, monotonic=False)},
        lambda: {"points": edit(rdkafka_producer(), TOTAL, monotonic=True)},
    ),
    "otlp.series.duplicate": (  # one node's gauge twice; near miss: another node's
        lambda: {
            "points": rdkafka_producer() + [p for p in rdkafka_producer() if p.name == NODE_AVG]
        },
        lambda: {
            "points": rdkafka_producer()
            + edit(
                [p for p in rdkafka_producer() if p.name == NODE_AVG][:1],
                NODE_AVG,
                attributes={"node_id": "3"},
            )
        },
    ),
    "otlp.sum.negative_delta": (
        lambda: {"points": edit(rdkafka_producer(), TOTAL, value=-1)},
        lambda: {"points": edit(rdkafka_producer(), TOTAL, value=0)},
    ),
    "otlp.temporality": (
        lambda: {"points": rdkafka_producer(delta=False), "delta": True},
        lambda: {"points": rdkafka_producer(delta=False), "delta": False},
    ),
    "otlp.resource.label": (
        lambda: _resource(member_id="m-1"),
        lambda: _resource(group_member_id="m-1"),
    ),
    "otlp.time.unit": (
        lambda: {
            "points": edit(
                rdkafka_producer(), THROTTLE, time_unix_nano=T0 // 1_000_000, start_time_unix_nano=0
            )
        },
        lambda: {"points": edit(rdkafka_producer(), THROTTLE, start_time_unix_nano=0)},
    ),
    "otlp.time.order": (
        lambda: {"points": edit(rdkafka_producer(), THROTTLE, start_time_unix_nano=T0 + 1)},
        lambda: {"points": edit(rdkafka_producer(), THROTTLE, start_time_unix_nano=T0)},
    ),
    "otlp.time.start": (
        lambda: {"points": edit(rdkafka_producer(), TOTAL, start_time_unix_nano=0)},
        lambda: {"points": edit(rdkafka_producer(), THROTTLE, start_time_unix_nano=0)},
    ),
    "otlp.time.regress": (
        lambda: {"points": rdkafka_producer(), "previous": rdkafka_producer()},
        lambda: {"points": rdkafka_producer(), "previous": rdkafka_producer(T0 - 1)},
    ),
    "otlp.cumulative.decrease": (
        lambda: _with_previous(value=2),
        lambda: _with_previous(value=3),
    ),
    "otlp.cumulative.reset": (
        lambda: _with_previous(start_time_unix_nano=ADDED + 1, value=0),
        lambda: _with_previous(start_time_unix_nano=ADDED, value=9),
    ),
    "otlp.delta.gap": (lambda: _delta_previous(T0 - STEP + 1), lambda: _delta_previous(T0 - STEP)),
    "otlp.privacy.hostname": (
        lambda: _resource(client_rack="kafka-client-7.prod.example.com"),
        lambda: _resource(client_rack="us-east-1a"),
    ),
    "otlp.privacy.address": (
        lambda: _attribute("broker", "10.0.0.12:9092"),
        lambda: _attribute("client_software_version", "2.5.0.1"),
    ),
    "otlp.privacy.pid": (
        lambda: _attribute("pid", "4242"),
        lambda: _attribute("partition", "4242"),
    ),
    "otlp.privacy.credential": (
        lambda: _resource(transactional_id="password=hunter2"),
        lambda: _resource(transactional_id="txn-password-reset-service"),
    ),
    "otlp.privacy.known_value": (
        lambda: {
            "points": rdkafka_producer(),
            "private": ("build-host-7",),
            "scope_version": "2.5.0 (build-host-7)",
        },
        lambda: {"points": rdkafka_producer(), "private": ("build-host-7",)},
    ),
}


def _extra_point(point: MetricPoint) -> dict[str, Any]:
    return {"points": [*rdkafka_producer(), point]}


def test_every_rule_has_a_case() -> None:
    assert set(CASES) == set(cat.RULE_IDS)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fires_on_the_bad_payload(rule: str) -> None:
    found = check(**CASES[rule][0]())
    assert rule in rules(found), [str(v) for v in found]
    assert all(v.rule in cat.RULE_IDS for v in found)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_is_quiet_on_the_near_miss(rule: str) -> None:
    found = check(**CASES[rule][1]())
    assert rule not in rules(found), [str(v) for v in found]


def test_a_metric_without_points_is_sparse() -> None:
    data = metrics_pb2.MetricsData()
    total = data.resource_metrics.add().scope_metrics.add().metrics.add(name=TOTAL).sum
    total.is_monotonic, total.aggregation_temporality = (
        True,
        metrics_pb2.AGGREGATION_TEMPORALITY_DELTA,
    )
    found = check(payload=data.SerializeToString(), client_type=None)
    assert rules(found) == {"otlp.metric.sparse"}


def test_requested_metrics_semantics() -> None:
    name = P + "record.send.rate"
    assert otlp_validation.is_requested(name, ["*"]) and otlp_validation.is_requested(name, [""])
    assert otlp_validation.is_requested(name, ["nope", P]) and not otlp_validation.is_requested(
        name, []
    )
    assert not otlp_validation.is_requested(name, ["*", "x"])  # "*" is "all" only as the whole list


def test_requested_metrics_may_be_any_sequence() -> None:
    points = [p for p in rdkafka_producer() if p.name != TOTAL]
    data = otlp.parse_metrics_data(otlp.build_metrics_data(points))
    found = otlp_validation.validate(
        data, delta_temporality=True, requested_metrics=("*",), client_type="producer"
    )
    assert rules(found) == {"otlp.required.missing"}


def test_violation_reads_like_a_verdict() -> None:
    (v,) = [v for v in check(**CASES["otlp.sum.monotonic"][0]()) if v.rule == "otlp.sum.monotonic"]
    assert str(v).startswith(f"otlp.sum.monotonic [{TOTAL}]: ")


SHOULD_RULES = {
    # Decided from the KIP's wording ("recommended", "should", naming conventions); see RULES.
    "otlp.metric.sparse",
    "otlp.name.case",
    "otlp.name.namespace",
    "otlp.attribute.key",
    "otlp.required.missing_empty_prefix",
    "otlp.standard.labels",
    "otlp.resource.label",
    "otlp.time.start",
    "otlp.cumulative.reset",
    "otlp.delta.gap",
}


def test_rule_levels_are_the_decided_ones() -> None:
    levels = {k: RULES[k].level for k in cat.RULE_IDS if ".privacy." not in k}
    assert {k for k, level in levels.items() if level == "SHOULD"} == SHOULD_RULES
    assert PRIVACY_LEVEL == "MUST"  # issue 5: privacy is MUST; see PRIVACY_LEVEL


def test_empty_arrays_and_maps_survive_a_round_trip() -> None:
    point = gauge("g", 1, time_unix_nano=T0, attributes={"a": (), "m": {}, "n": None})
    assert otlp.flatten(otlp.parse_metrics_data(otlp.build_metrics_data([point]))) == [point]


def test_privacy_rules_use_the_privacy_level() -> None:
    assert {RULES[k].level for k in cat.RULE_IDS if ".privacy." in k} == {PRIVACY_LEVEL}


# --- round trips ---------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8"), max_size=12)
_scalars = (
    _text
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.binary(max_size=6)
    | st.none()
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3).map(tuple) | st.dictionaries(_text, inner, max_size=3)
    ),
    max_leaves=6,
)
_u64 = st.integers(0, 2**64 - 1)


@st.composite
def metric_points(draw: st.DrawFn) -> MetricPoint:
    name = draw(st.sampled_from([TOTAL, NODE_AVG, "com.example.x"]) | _text)
    resource = draw(st.sampled_from([{}, {"client_rack": "r1"}, {"group_id": "g", "n": 3}]))
    scope = draw(st.sampled_from(["", "rdkafka#producer-1"]))
    kind = draw(st.sampled_from(["gauge", "sum", "none"]))
    if kind == "none":
        return MetricPoint(name, "none", resource_attributes=resource, scope_name=scope)
    value_type = draw(st.sampled_from(["int", "double", "none"]))
    value = draw(
        {
            "int": st.integers(-(2**63), 2**63 - 1),
            "double": st.floats(allow_nan=False),
            "none": st.none(),
        }[value_type]
    )
    is_sum = kind == "sum"
    return MetricPoint(
        name,
        kind,
        draw(st.booleans()) if is_sum else None,
        draw(st.sampled_from(["delta", "cumulative", "unspecified"])) if is_sum else None,
        value,
        value_type,
        draw(st.dictionaries(_text, _values, max_size=3)),
        draw(_u64),
        draw(_u64),
        resource,
        scope,
    )


@given(st.lists(metric_points(), max_size=8), st.booleans())
def test_build_parse_flatten_round_trips(points: list[MetricPoint], java_layout: bool) -> None:
    payload = otlp.build_metrics_data(points, layout="per_metric" if java_layout else "shared")
    assert otlp.flatten(otlp.parse_metrics_data(payload)) == points


def test_shared_layout_merges_runs_of_the_same_metric() -> None:
    data = otlp.parse_metrics_data(otlp.build_metrics_data(rdkafka_producer()))
    metrics = data.resource_metrics[0].scope_metrics[0].metrics
    assert [len(m.gauge.data_points or m.sum.data_points) for m in metrics][:4] == [1, 1, 2, 2]


def test_resource_attributes_argument_overrides_the_points() -> None:
    payload = otlp.build_metrics_data(rdkafka_producer(), resource_attributes={"group_id": "g"})
    assert {
        tuple(p.resource_attributes) for p in otlp.flatten(otlp.parse_metrics_data(payload))
    } == {("group_id",)}


@pytest.mark.parametrize(
    "point",
    [
        MetricPoint("m", "histogram"),
        MetricPoint("m", "gauge", value=True, value_type="int"),
        MetricPoint("m", "gauge", value=1.5, value_type="int"),
        MetricPoint("m", "gauge", value=None, value_type="double"),
        MetricPoint("m", "sum", monotonic=None, temporality="delta", value=1, value_type="int"),
        MetricPoint("m", "gauge", monotonic=True, value=1, value_type="int"),
        MetricPoint("m", "none", time_unix_nano=T0),
    ],
)
def test_build_refuses_what_it_cannot_encode(point: MetricPoint) -> None:
    with pytest.raises(ValueError, match="cannot encode"):
        otlp.build_metrics_data([point])


def test_flatten_reports_other_kinds_and_valueless_points() -> None:
    data = metrics_pb2.MetricsData()
    metrics = data.resource_metrics.add().scope_metrics.add().metrics
    h = metrics.add(name="h").histogram
    h.aggregation_temporality = metrics_pb2.AGGREGATION_TEMPORALITY_DELTA
    h.data_points.add(time_unix_nano=T0, count=3)
    metrics.add(name="s").summary.data_points.add(time_unix_nano=T0)
    metrics.add(name="g").gauge.data_points.add(time_unix_nano=T0)
    got = [(p.name, p.kind, p.temporality, p.value_type) for p in otlp.flatten(data)]
    assert got == [
        ("h", "histogram", "delta", "none"),
        ("s", "summary", None, "none"),
        ("g", "gauge", None, "none"),
    ]


# --- parsing garbage -----------------------------------------------------------------------


def test_empty_payload_is_an_empty_metrics_data() -> None:
    assert otlp.parse_metrics_data(b"") == metrics_pb2.MetricsData()
    assert (
        otlp_validation.validate(
            otlp.parse_metrics_data(memoryview(b"")), delta_temporality=True, requested_metrics=[]
        )
        == []
    )


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\x08\x01", "MetricsData.resource_metrics[0]: wire type 0 at byte 0, the field needs 2"),
        (b"\x10\x01", "MetricsData.<field 2> (wire type 0) at byte 0 is not part of MetricsData"),
        (
            b"\x0a\x50\x00",
            "MetricsData.resource_metrics[0]: length 80 at byte 0 exceeds the remaining 1",
        ),
        (
            b"\x0a\x00\x0a\x02\x12",
            "resource_metrics[1]: length 2 at byte 2 exceeds the remaining 1",
        ),
        (b"\x0f", "invalid tag (wire type 7) at byte 0"),
        (b"\x0a\xff", "truncated or over-long varint at byte 1"),
        (
            _ld(1, _ld(2, _ld(2, _ld(1, b"\xff")))),
            "resource_metrics[0].scope_metrics[0].metrics[0].name: invalid UTF-8 at byte 8",
        ),
        (b"\x1f\x8b\x08\x00", "starts like gzip data: decompress it first"),
        (b"\x28\xb5\x2f\xfd\x00", "starts like zstd data"),
    ],
)
def test_decode_errors_name_the_field_and_byte(payload: bytes, message: str) -> None:
    with pytest.raises(otlp.OtlpDecodeError) as info:
        otlp.parse_metrics_data(payload)
    assert message in str(info.value)


def test_decode_error_carries_the_offset() -> None:
    with pytest.raises(otlp.OtlpDecodeError) as info:
        otlp.parse_metrics_data(b"\x0a\x00\x10\x01")
    assert info.value.offset == 2


def test_too_deep_nesting_is_refused() -> None:
    value = b""
    for _ in range(40):  # AnyValue.array_value.values[0] ... two messages per turn
        value = _ld(5, _ld(1, value))
    kv = _ld(1, b"k") + _ld(2, value)
    payload = _ld(1, _ld(1, _ld(1, kv)))  # resource_metrics[0].resource.attributes[0]
    with pytest.raises(otlp.OtlpDecodeError, match="nesting deeper than 64"):
        otlp.parse_metrics_data(payload)


@given(st.binary(max_size=120))
def test_garbage_raises_only_otlp_decode_error(payload: bytes) -> None:
    try:
        data = otlp.parse_metrics_data(payload)
    except otlp.OtlpDecodeError:
        return
    otlp.flatten(data)  # whatever parses, flattens and validates without raising
    otlp_validation.validate(
        data, delta_temporality=True, requested_metrics=["*"], client_type="consumer"
    )


_GOOD = otlp.build_metrics_data(rdkafka_producer(), scope_version="2.5.0")


@settings(max_examples=200)
@given(st.data())
def test_corrupted_payloads_raise_only_otlp_decode_error(data: st.DataObject) -> None:
    buf = bytearray(_GOOD)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(buf) - 1))
        match data.draw(st.sampled_from(["flip", "cut", "insert"])):
            case "flip":
                buf[at] ^= data.draw(st.integers(1, 255))
            case "cut":
                del buf[at:]
                if not buf:
                    return
            case "insert":
                buf[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    try:
        parsed = otlp.parse_metrics_data(bytes(buf))
    except otlp.OtlpDecodeError:
        return
    otlp_validation.validate(
        parsed, delta_temporality=True, requested_metrics=["*"], client_type="producer"
    )


def test_parse_rejects_non_bytes() -> None:
    with pytest.raises(TypeError):
        otlp.parse_metrics_data("not bytes")  # type: ignore[arg-type]


# --- the catalogue ---------------------------------------------------------------------------


@pytest.mark.parametrize("std", cat.STANDARD_METRICS, ids=lambda m: m.name)
def test_catalogue_names_follow_the_kip_derivation(std: cat.StandardMetric) -> None:
    assert cat.telemetry_metric_name(std.kafka_group, std.kafka_name) == std.name


def test_kip_naming_examples() -> None:
    # KIP-714 "Naming" examples.
    assert cat.telemetry_metric_name("producer-metrics", "connection-creation-rate") == (
        "org.apache.kafka.producer.connection.creation.rate"
    )
    assert cat.telemetry_metric_name("consumer-coordinator-metrics", "rebalance-latency-max") == (
        "org.apache.kafka.consumer.coordinator.rebalance.latency.max"
    )


def test_required_metrics_are_standard_and_per_client() -> None:
    producer = {m.name for m in cat.required_metrics("producer")}
    consumer = {m.name for m in cat.required_metrics("consumer")}
    assert TOTAL in producer and THROTTLE in producer and not producer & consumer
    assert cat.PREFIX + "consumer.node.request.latency.max" in consumer


def test_standard_metric_names_raise_no_name_findings() -> None:
    for std in cat.STANDARD_METRICS:
        found = check([gauge(std.name, 1, time_unix_nano=T0)], client_type=None)
        assert {r for r in rules(found) if r.startswith(("otlp.name", "otlp.privacy"))} == set()


# --- privacy detectors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("broker 192.168.1.20:9092", "192.168.1.20"),
        ("org.apache.kafka.x.10.1.2.3.rate", "10.1.2.3"),
        ("::1", "::1"),
        ("[fe80::1%eth0]:9092", "fe80::1"),
        ("2001:db8::7", "2001:db8::7"),
        ("2.5.0", None),
        ("v1.2.3", None),
        ("1.2.3.4.5", None),
        ("256.1.1.1", None),
        ("12:30:45", None),
        ("00:1a:2b:3c:4d:5e", None),
        ("std::string", None),
        ("org.apache.kafka.producer.record.queue.time.avg", None),
        ("rdkafka#producer-1", None),
    ],
)
def test_find_ip_address(text: str, address: str | None) -> None:
    assert cat.find_ip_address(text) == address


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("localhost", True),
        ("kafka-client-7.prod.example.com", True),
        ("ip-10-0-1-17.ec2.internal", True),
        ("ip-10-0-1-17", True),
        ("builder.local", True),
        ("org.apache.kafka", False),
        ("com.example.orders", False),
        ("us-east-1a", False),
        ("2.5.0", False),
        ("rdkafka#producer-1", False),
        ("consumer-orders-1-4f6c", False),
    ],
)
def test_looks_like_hostname(text: str, expected: bool) -> None:
    assert cat.looks_like_hostname(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2", True),
        ('org.apache.kafka.common.security.plain.PlainLoginModule required username="u";', True),
        ("Bearer abcdefghijklmnop", True),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", True),
        ("-----BEGIN RSA PRIVATE KEY-----", True),
        ("sasl_ssl://user:s3cret@broker:9092", True),
        ("txn-orders", False),
        ("SCRAM-SHA-512", False),
        ("token-bucket", False),
        ("org.apache.kafka.producer.produce.throttle.time.avg", False),
    ],
)
def test_looks_like_credential(text: str, expected: bool) -> None:
    assert cat.looks_like_credential(text) is expected


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("hostname", "hostname"),
        ("host.name", "hostname"),
        ("client_host", "hostname"),
        ("pid", "pid"),
        ("process.pid", "pid"),
        ("processId", "pid"),
        ("process_id", "pid"),
        ("sasl.password", "credential"),
        ("api_key", "credential"),
        ("apiKey", "credential"),
        ("client_ip", "address"),
        ("client_source_address", "address"),
        ("group_id", None),
        ("group_member_id", None),
        ("transactional_id", None),
        ("node_id", None),
        ("node.id", None),
        ("client_rack", None),
        ("topic", None),
    ],
)
def test_key_privacy_kind(key: str, kind: str | None) -> None:
    assert cat.key_privacy_kind(key) == kind


def test_privacy_findings_contexts() -> None:
    assert (
        otlp_validation.privacy_findings("1.2.3.4", context="value", key="client_software_version")
        == []
    )
    assert otlp_validation.privacy_findings("1.2.3.4", context="value", key="peer")[0][0] == (
        "otlp.privacy.address"
    )
    assert [r for r, _ in otlp_validation.privacy_findings(P + "process.pid", context="name")] == [
        "otlp.privacy.pid"
    ]
    assert otlp_validation.privacy_findings("node-4242", context="value", known=("4242",))
    assert not otlp_validation.privacy_findings("node-42420", context="value", known=("4242",))
    assert not otlp_validation.privacy_findings(
        "a-1-b", context="value", known=("1",)
    )  # too short to judge


def test_metric_points_helpers() -> None:
    assert gauge("g", 2, time_unix_nano=T0).value_type == "int"
    c = counter("c", 2.5, delta=False, time_unix_nano=T0, attributes={"a": "b"})
    assert (c.kind, c.monotonic, c.temporality, c.value_type) == (
        "sum",
        True,
        "cumulative",
        "double",
    )
