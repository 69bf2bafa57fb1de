"""What KIP-714 asks of one pushed OTLP ``MetricsData`` payload: `validate` and its findings.

Each finding names a rule-book id of `otlp_catalogue.RULE_IDS` (the book, `kconform.rules`, gives
its level and KIP section; this codec sits below it and names ids only), the metric it concerns
and what was seen. Builds on the payload model of `kconform.codecs.otlp`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Literal, TypeAlias

from opentelemetry.proto.metrics.v1 import metrics_pb2

from . import otlp_catalogue as cat
from .otlp import (
    AttrValue,
    MetricPoint,
    OtlpDecodeError,
    _freeze,
    _walk,
    attributes_to_dict,
    flatten,
)

__all__ = ["Violation", "is_requested", "privacy_findings", "validate"]

Finding: TypeAlias = tuple[str, str | None, str]  # rule id, metric name, detail


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``rule`` is a rule-book id of `otlp_catalogue.RULE_IDS`."""

    rule: str
    metric: str | None
    detail: str

    def __str__(self) -> str:
        where = f" [{self.metric}]" if self.metric is not None else ""
        return f"{self.rule}{where}: {self.detail}"


def validate(
    data: metrics_pb2.MetricsData,
    *,
    delta_temporality: bool,
    requested_metrics: Sequence[str],
    client_type: cat.ClientType | None = None,
    previous: Sequence[MetricPoint] | None = None,
    private_values: Sequence[str] = (),
) -> list[Violation]:
    """Every KIP-714 rule (see `RULE_IDS`) that one pushed payload breaks, each finding once.

    ``previous``: the flattened previous push of the same client, for the cross-push rules.
    ``client_type`` enables the required-metrics check. ``private_values``: strings the caller
    knows to be private (the client's host name, pid, user name; 3 characters or more).
    """
    points = flatten(data)
    findings = chain(
        _payload_findings(data),
        _context_findings(data, private_values),
        _metric_findings(data),
        _point_findings(points, delta_temporality, requested_metrics, private_values),
        _required_findings(points, client_type, requested_metrics),
        _continuity_findings(points, previous or ()),
    )
    unique = dict.fromkeys(findings)
    return [Violation(r, m, d) for r, m, d in unique]


def is_requested(name: str, requested_metrics: Sequence[str]) -> bool:
    """KIP-714 subscription match: exactly ``["*"]`` is all, else prefix match ("" matches all)."""
    return list(requested_metrics) == ["*"] or any(name.startswith(p) for p in requested_metrics)


def privacy_findings(
    text: str, *, context: Literal["key", "value", "name"], key: str = "", known: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(rule, detail) pairs for one string: an attribute key or value, or a metric name.

    A value under a key naming a version skips the address test ("1.2.3.4" is a fine version).
    """
    found: list[tuple[str, str]] = []
    kind = cat.key_privacy_kind(text) if context != "value" else None
    if kind is not None and (context == "key" or kind in ("hostname", "pid")):
        found.append((f"otlp.privacy.{kind}", f"{context} {text!r} names a {kind}"))
    address = cat.find_ip_address(text) if "version" not in key.lower() else None
    if address is not None:
        found.append(("otlp.privacy.address", f"{context} {text!r} holds address {address}"))
    if context == "value" and cat.looks_like_hostname(text):
        found.append(("otlp.privacy.hostname", f"value {text!r} looks like a host name"))
    if context == "value" and cat.looks_like_credential(text):
        found.append(("otlp.privacy.credential", f"value {text!r} looks like a credential"))
    for secret in (s for s in known if len(s) >= 3):
        pattern = rf"(?<!\d){secret}(?!\d)" if secret.isdigit() else re.escape(secret)
        if re.search(pattern, text, re.IGNORECASE):
            found.append(("otlp.privacy.known_value", f"{context} {text!r} contains {secret!r}"))
    return found


def _payload_findings(data: metrics_pb2.MetricsData) -> Iterator[Finding]:
    unknown: list[str] = []
    try:
        _walk(data.SerializeToString(), 0, data.ByteSize(), data.DESCRIPTOR, "", 0, unknown)
    except OtlpDecodeError as exc:  # only for a hand-built message with odd unknown fields
        unknown.append(f": {exc}")
    for where in unknown:
        yield "otlp.payload.unknown_field", None, f"MetricsData{where} is not an OTLP field"


def _context_findings(data: metrics_pb2.MetricsData, known: Sequence[str]) -> Iterator[Finding]:
    for rm in data.resource_metrics:
        for key, value in attributes_to_dict(rm.resource.attributes).items():
            if key not in cat.CLIENT_RESOURCE_LABELS:
                hint = cat.LABEL_ALIASES.get(key, "not a KIP label")
                hint = "added by the broker" if key in cat.BROKER_ADDED_LABELS else hint
                yield "otlp.resource.label", None, f"{key!r} ({hint})"
            yield from _scan(None, "resource", key, value, known)
        for sm in rm.scope_metrics:
            scope = attributes_to_dict(sm.scope.attributes)
            for key, value in (
                ("name", sm.scope.name),
                ("version", sm.scope.version),
                *scope.items(),
            ):
                yield from _scan(None, "scope", key, value, known)


_NAME_SYNTAX = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/]{0,254}")  # OpenTelemetry instrument names


def _metric_findings(data: metrics_pb2.MetricsData) -> Iterator[Finding]:
    for rm in data.resource_metrics:
        for metric in (m for sm in rm.scope_metrics for m in sm.metrics):
            kind, name = metric.WhichOneof("data"), metric.name
            yield from ((rule, name, detail) for rule, detail in _name_findings(name))
            if kind is None:
                yield "otlp.metric.data", name, "a Metric without Gauge or Sum data"
                continue
            if not getattr(metric, kind).data_points:
                yield "otlp.metric.sparse", name, "a Metric without data points"
            if kind == "sum" and not metric.sum.is_monotonic:
                yield "otlp.sum.monotonic", name, "Sum with is_monotonic=false"
            std = cat.STANDARD_BY_NAME.get(name)
            if std is not None and std.kind != kind:
                yield "otlp.standard.type", name, f"{kind}; the KIP's table says {std.kind}"


def _name_findings(name: str) -> Iterator[tuple[str, str]]:
    if _NAME_SYNTAX.fullmatch(name) is None:
        yield "otlp.name.syntax", f"{name!r} is not a valid instrument name"
    first = name.split(".", 1)[0]
    if name.startswith(cat.PREFIX):
        labels = name[len(cat.PREFIX) :].split(".")
        if "-" in name or "" in labels or len(labels) < 2:
            yield "otlp.name.derivation", "not <prefix><group>.<name> with every '-' made '.'"
    elif name.lower().startswith("org.apache.kafka") or first in ("producer", "consumer", "admin"):
        yield "otlp.name.prefix", f"a Kafka metric name without the {cat.PREFIX!r} prefix"
    elif name.count(".") < 2 or not first.isalpha():
        yield "otlp.name.namespace", "no reverse-domain namespace (like com.example.)"
    if name != name.lower():
        yield "otlp.name.case", "upper-case letters"
    yield from privacy_findings(name, context="name")


def _point_findings(
    points: Sequence[MetricPoint], delta: bool, requested: Sequence[str], known: Sequence[str]
) -> Iterator[Finding]:
    expected = "delta" if delta else "cumulative"
    for p in points:
        if p.temporality not in (None, expected):
            yield "otlp.temporality", p.name, f"{p.temporality}; DeltaTemporality={delta}"
        if p.kind in ("sum", "gauge") and p.value_type == "none":
            yield "otlp.point.value", p.name, "a NumberDataPoint without as_int or as_double"
        if isinstance(p.value, float) and math.isnan(p.value):
            yield "otlp.metric.sparse", p.name, "NaN value (nothing recorded)"
        if p.monotonic and p.temporality == "delta" and (p.value or 0) < 0:
            yield "otlp.sum.negative_delta", p.name, f"delta {p.value} < 0"
        yield from ((rule, p.name, detail) for rule, detail in _time_findings(p))
        std = cat.STANDARD_BY_NAME.get(p.name)
        for label in (x for x in std.labels if x not in p.attributes) if std else ():
            yield "otlp.standard.labels", p.name, f"no {label!r} among {sorted(p.attributes)}"
        for key, value in p.attributes.items():
            if "-" in key:
                yield "otlp.attribute.key", p.name, f"{key!r} keeps a '-' (tags map it to '_')"
            yield from _scan(p.name, "attribute", key, value, known)
        if not is_requested(p.name, requested):
            yield "otlp.metric.unrequested", p.name, f"not matched by {list(requested)}"
    yield from _duplicate_findings(points)


def _duplicate_findings(points: Sequence[MetricPoint]) -> Iterator[Finding]:
    """A series (resource, scope, name, attributes) with two points in one push: the OTLP data
    model's single-writer identity, so a receiver cannot tell which value is the series'."""
    seen: dict[tuple[object, ...], list[MetricPoint]] = {}
    for p in points:
        if p.kind == "none":
            continue
        identity = (p.name, p.scope_name, _frozen(p.resource_attributes), _frozen(p.attributes))
        seen.setdefault(identity, []).append(p)
    for same in seen.values():
        if len(same) > 1:
            p = same[0]
            yield "otlp.series.duplicate", p.name, f"{len(same)} points for {dict(p.attributes)}"


def _frozen(attributes: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, repr(v)) for k, v in attributes.items()))


_NS_MIN = 1_000_000_000_000_000_000  # 2001-09-09 in ns; anything smaller is s, ms or µs
_NS_MAX = 4_102_444_800_000_000_000  # 2100-01-01 in ns
_UNITS = ((1e11, "seconds"), (1e14, "milliseconds"), (1e17, "microseconds"), (math.inf, "?"))


def _time_findings(p: MetricPoint) -> Iterator[tuple[str, str]]:
    for label, t in (("time", p.time_unix_nano), ("start time", p.start_time_unix_nano)):
        if (t or label == "time") and not _NS_MIN <= t < _NS_MAX:
            unit = next(unit for limit, unit in _UNITS if t < limit)
            yield "otlp.time.unit", f"{label} {t} is not Unix epoch ns (looks like {unit})"
    if p.start_time_unix_nano > p.time_unix_nano:
        yield "otlp.time.order", f"start {p.start_time_unix_nano} > time {p.time_unix_nano}"
    if p.kind == "sum" and not p.start_time_unix_nano:
        yield "otlp.time.start", "a Sum point without start_time_unix_nano"


def _required_findings(
    points: Sequence[MetricPoint], client_type: cat.ClientType | None, requested: Sequence[str]
) -> Iterator[Finding]:
    present = {p.name for p in points}
    for std in cat.required_metrics(client_type) if client_type else ():
        if std.name in present:
            continue
        # ruling 1: ["*"] meaning all is MUST; "" meaning all is only SHOULD.
        if list(requested) == ["*"] or any(p and std.name.startswith(p) for p in requested):
            yield "otlp.required.missing", std.name, f"required {client_type} metric"
        elif "" in requested:
            yield "otlp.required.missing_empty_prefix", std.name, f"required {client_type} metric"


def _scan(
    metric: str | None, where: str, key: str, value: AttrValue, known: Sequence[str]
) -> Iterator[Finding]:
    for rule, detail in privacy_findings(key, context="key", known=known):
        yield rule, metric, f"{where} {detail}"
    for text in _strings(value):
        for rule, detail in privacy_findings(text, context="value", key=key, known=known):
            yield rule, metric, f"{where} {key!r}: {detail}"


def _strings(value: AttrValue) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, tuple | Mapping):
        for item in value.values() if isinstance(value, Mapping) else value:
            yield from _strings(item)


def _continuity_findings(
    points: Sequence[MetricPoint], previous: Sequence[MetricPoint]
) -> Iterator[Finding]:
    last: dict[tuple[str, object], MetricPoint] = {}
    for old in sorted(previous, key=lambda q: q.time_unix_nano):
        last[old.name, _freeze(dict(old.attributes))] = old
    for p in points:
        q = last.get((p.name, _freeze(dict(p.attributes))))
        if q is None or (q.kind, q.temporality) != (p.kind, p.temporality):
            continue
        if p.time_unix_nano <= q.time_unix_nano:
            yield "otlp.time.regress", p.name, f"{p.time_unix_nano} <= {q.time_unix_nano} before"
        if p.kind != "sum" or not p.monotonic:
            continue
        p_start, q_start = p.start_time_unix_nano, q.start_time_unix_nano
        if p.temporality == "cumulative" and p_start != q_start:
            yield "otlp.cumulative.reset", p.name, f"start time {q_start} -> {p_start}"
        elif p.temporality == "cumulative" and (p.value or 0) < (q.value or 0):
            yield "otlp.cumulative.decrease", p.name, f"{q.value} -> {p.value}, same start"
        if p.temporality == "delta" and p_start != q.time_unix_nano:
            yield (
                "otlp.delta.gap",
                p.name,
                f"start {p_start} != the previous time {q.time_unix_nano}",
            )
