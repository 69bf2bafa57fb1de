"""KIP-714 payload conditions: what `kconform.codecs.otlp_validation.validate` finds in one
pushed OTLP ``MetricsData``, each the detailed condition of a `kip714.client.payload.*` rule.

The codec names these ids as plain strings (it sits below the rule book); the book declares
each once, with its level and the KIP-714 section it rests on, and tests/rules checks that the
two agree. A payload case claims the rule each condition is `part_of`.
"""

from __future__ import annotations

from kconform.rules.model import Level, Rule

PRIVACY_LEVEL = Level.MUST
"""Issue 5 asks for privacy at MUST. The approved KIP-714 keeps only the Motivation's "User
privacy is an important concern and extra care is taken ... not to expose any information that
may compromise the privacy of the client user". The MUST ("must take extra care not to expose
... hostname, operating system, credentials, runtime environment") is in the earlier revision's
"Private metrics" section only, which the approved text dropped. Flip this one constant if the
project rules otherwise."""

_ENC = "Metrics naming and format / Encoding"
_NAMING = "Metrics naming and format / Naming"
_TEMP = "Metrics naming and format / Metric aggregation temporality"
_TYPES = "Client metrics and metric labels / Metric types"
_STD = "Client metrics and metric labels / Standard producer metrics, Standard consumer metrics"
_REQUIRED = "Client metrics and metric labels (required metrics)"
_P = "kip714.client.payload."
_MUST, _SHOULD = Level.MUST, Level.SHOULD


def _condition(
    rule_id: str, level: Level, section: str, means: str, part_of: str, ruling: int | None = None
) -> Rule:
    return Rule(rule_id, level, "KIP-714", section, "", means, ruling=ruling,
                part_of=_P + part_of)  # fmt: skip


RULES = (
    _condition("otlp.payload.unknown_field", _MUST, _ENC, "only OTLP MetricsData fields", "otlp"),
    _condition("otlp.metric.data", _MUST, _TYPES, "a Metric carries Gauge or Sum data", "otlp"),
    _condition("otlp.point.value", _MUST, _ENC, "a NumberDataPoint sets as_int or as_double",
               "otlp"),
    _condition("otlp.name.syntax", _MUST, _NAMING, "OpenTelemetry instrument-name syntax",
               "naming"),
    _condition("otlp.name.prefix", _MUST, _NAMING,
               "Kafka metrics carry the org.apache.kafka. prefix", "naming"),
    _condition("otlp.name.derivation", _MUST, _NAMING, "group.name with '-' replaced by '.'",
               "naming"),
    _condition("otlp.metric.sparse", _SHOULD, "Metrics naming and format / Sparse metrics",
               "only metrics with a value", "naming_conventions"),
    _condition("otlp.name.case", _SHOULD, _NAMING, "telemetry metric names are lower case",
               "naming_conventions"),
    _condition("otlp.name.namespace", _SHOULD, _NAMING,
               "other metrics use a reverse-domain namespace", "naming_conventions"),
    _condition("otlp.attribute.key", _SHOULD, _NAMING, "attribute keys are tags with '-' -> '_'",
               "naming_conventions"),
    _condition("otlp.metric.unrequested", _MUST,
               "Client behavior (subscription is an absolute update)",
               "only metrics matching RequestedMetrics", "requested_only", ruling=1),
    _condition("otlp.required.missing", _MUST, _REQUIRED,
               "requested required metrics are present", "required_metrics", ruling=1),
    _condition("otlp.required.missing_empty_prefix", _SHOULD, _REQUIRED,
               "required metrics are present when RequestedMetrics has the prefix \"\" (= all)",
               "empty_prefix_all", ruling=1),
    _condition("otlp.standard.type", _MUST, _STD,
               "standard metrics have the table's data point type", "metric_types"),
    _condition("otlp.sum.monotonic", _MUST, _TYPES, "a Sum is a monotonic counter",
               "metric_types"),
    _condition("otlp.sum.negative_delta", _MUST, _TYPES, "a monotonic DELTA never goes negative",
               "metric_types"),
    _condition("otlp.standard.labels", _SHOULD, _STD, "standard metrics carry the table's labels",
               "labels"),
    _condition("otlp.resource.label", _SHOULD,
               "Client metrics and metric labels / Standard client resource labels",
               "resource attributes come from the KIP's client label list", "labels"),
    _condition("otlp.temporality", _MUST, _TEMP, "DELTA iff DeltaTemporality, else CUMULATIVE",
               "temporality", ruling=6),
    _condition("otlp.cumulative.decrease", _MUST, _TEMP, "a CUMULATIVE counter never decreases",
               "temporality"),
    _condition("otlp.time.unit", _MUST, _ENC, "timestamps are Unix epoch nanoseconds",
               "timestamps"),
    _condition("otlp.time.order", _MUST, _ENC, "start_time_unix_nano <= time_unix_nano",
               "timestamps"),
    _condition("otlp.time.regress", _MUST, _TEMP, "a series' time increases from push to push",
               "timestamps"),
    _condition("otlp.delta.gap", _SHOULD, _TEMP, "a DELTA starts where the previous one ended",
               "temporality_continuity"),
    _condition("otlp.cumulative.reset", _SHOULD, _TEMP,
               "a CUMULATIVE series keeps its start time", "temporality_continuity"),
    _condition("otlp.time.start", _SHOULD, _TEMP, "Sum points set start_time_unix_nano",
               "temporality_continuity"),
    _condition("otlp.series.duplicate", _MUST, _ENC,
               "no series (resource, scope, name, attributes) twice in one push", "no_duplicates",
               ruling=14),
    *(
        _condition(f"otlp.privacy.{what}", PRIVACY_LEVEL, "Motivation (user privacy)", means,
                   "privacy")
        for what, means in (
            ("hostname", "no host names"),
            ("address", "no IP addresses"),
            ("pid", "no process ids"),
            ("credential", "no credentials"),
            ("known_value", "none of the caller's known private values"),
        )
    ),
)  # fmt: skip
