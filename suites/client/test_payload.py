"""KIP-714 payload rules, judged on every push a client sent: OTLP, names, types, time, privacy.

Each case owns a set of the conditions `kconform.codecs.otlp_validation.validate` reports (rules
of the book, `rules/otlp_payload.py`, each part of one `kip714.client.payload.*` rule, which
the case claims); a MUST case owns only MUST conditions and a SHOULD case only SHOULD ones, so a
violation's level decides the verdict as the KIP words do.
Every push of the run is decompressed, parsed and validated with the subscription the client
had (RequestedMetrics, DeltaTemporality), the previous push (cross-push rules: time, delta
continuity, cumulative counters) and the private values the harness knows (host name, the
client's pid, the user name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kconform.engine.check import Check
from kconform.engine.model import Family, Level, case
from kconform.errors import HarnessDefect
from kconform.fixtures.clients import ClientDriver
from kconform.fixtures.targets.base import BrokerTarget
from kconform.rules import RULES
from kconform.suites.client.helpers import (
    TELEMETRY,
    require_telemetry,
)
from kconform.suites.client.helpers_payload import OVERLAPPING, RUNS, expect_rules, judge

# --- the payload cases ------------------------------------------------------------------------

ENCODING = "KIP-714 Metrics naming and format / Encoding"
TEMPORALITY = "KIP-714 Metric aggregation temporality ('Clients must support both'); ruling 6"


@dataclass(frozen=True)
class Conditions:
    """One payload case: what it reads like, the run it judges and the conditions it owns."""

    title: str
    spec: str
    level: Level
    run: str
    conditions: tuple[str, ...]  # rule-book ids `validate` reports, all part of one rule


def _spec_ref(rule_id: str) -> str:
    r = RULES[rule_id]
    return r.section + (f"; ruling {r.ruling}" if r.ruling else "")


def _payload_case(case_id: str, row: Conditions) -> Any:
    """The case judging `row.conditions` on every push; it claims the rule the first is part of
    (a cross-push condition such as `otlp.time.regress` may be judged again in another run)."""
    wrong = [r for r in row.conditions if RULES[r].level != row.level]
    if wrong:
        raise HarnessDefect(f"{case_id}: conditions {wrong} are not {row.level}")
    spec_rules = "; ".join(f"{r}: {_spec_ref(r)}" for r in row.conditions)

    @case(
        case_id,
        rules=[RULES[row.conditions[0]].part_of],
        title=row.title,
        spec=f"{row.spec} ({spec_rules})",
        level=row.level,
        requires=TELEMETRY,
        kind="client",
        shares=row.run,
    )
    async def test(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
        recording = await RUNS[row.run](check, client, client_target)
        if case_id == "kip714.client.payload.valid_otlp":
            require_telemetry(check, recording)
            check.expect(
                "pushes whose Metrics decompress and parse as MetricsData",
                [],
                judge(recording).unreadable[:10],
            )
        expect_rules(check, recording, row.conditions)

    return test


PAYLOAD = Family(_payload_case)

test_valid_otlp = PAYLOAD(
    "kip714.client.payload.valid_otlp",
    Conditions(
        "Every push is a valid OTLP MetricsData",
        ENCODING,
        Level.MUST,
        "baseline",
        ("otlp.payload.unknown_field", "otlp.metric.data", "otlp.point.value"),
    ),
)
test_naming = PAYLOAD(
    "kip714.client.payload.naming",
    Conditions(
        "Kafka metrics are named org.apache.kafka.<group>.<name>, '-' made '.'",
        "KIP-714 Metrics naming and format / Naming",
        Level.MUST,
        "baseline",
        ("otlp.name.syntax", "otlp.name.prefix", "otlp.name.derivation"),
    ),
)
test_naming_conventions = PAYLOAD(
    "kip714.client.payload.naming_conventions",
    Conditions(
        "Names are lower case, other metrics namespaced, keys use '_', only metrics with a value "
        "are sent",
        "KIP-714 Naming; Sparse metrics",
        Level.SHOULD,
        "baseline",
        ("otlp.name.case", "otlp.name.namespace", "otlp.attribute.key", "otlp.metric.sparse"),
    ),
)
test_metric_types = PAYLOAD(
    "kip714.client.payload.metric_types",
    Conditions(
        "Gauge and Sum as the KIP's tables say; Sums are monotonic",
        "KIP-714 Metric types; Standard producer/consumer metrics",
        Level.MUST,
        "baseline",
        ("otlp.standard.type", "otlp.sum.monotonic", "otlp.sum.negative_delta"),
    ),
)
test_standard_labels = PAYLOAD(
    "kip714.client.payload.standard_labels",
    Conditions(
        "Standard metrics carry the tables' labels (node_id)",
        "KIP-714 Standard producer/consumer metrics (Labels)",
        Level.SHOULD,
        "baseline",
        ("otlp.standard.labels",),
    ),
)
test_resource_labels = PAYLOAD(
    "kip714.client.payload.resource_labels",
    Conditions(
        "Resource attributes come from the KIP's client label list only",
        "KIP-714 Standard client resource labels",
        Level.SHOULD,
        "baseline",
        ("otlp.resource.label",),
    ),
)
test_resource_labels_configured = PAYLOAD(
    "kip714.client.payload.resource_labels_configured",
    Conditions(
        "With client.rack and transactional.id set, resource attributes still come from the KIP's "
        "client label list only",
        "KIP-714 Standard client resource labels (client_rack, transactional_id); an idle "
        "producer configured with both",
        Level.SHOULD,
        "labelled",
        ("otlp.resource.label",),
    ),
)
test_privacy = PAYLOAD(
    "kip714.client.payload.privacy",
    Conditions(
        "No host name, address, pid, credential or other private value",
        "KIP-714 Motivation (user privacy); PRIVACY_LEVEL in rules/otlp_payload.py",
        Level.MUST,
        "baseline",
        (
            "otlp.privacy.hostname",
            "otlp.privacy.address",
            "otlp.privacy.pid",
            "otlp.privacy.credential",
            "otlp.privacy.known_value",
        ),
    ),
)
test_timestamps = PAYLOAD(
    "kip714.client.payload.timestamps",
    Conditions(
        "Timestamps are epoch nanoseconds, start <= time, increasing push to push",
        ENCODING + "; Metric aggregation temporality",
        Level.MUST,
        "baseline",
        ("otlp.time.unit", "otlp.time.order", "otlp.time.regress"),
    ),
)
test_delta = PAYLOAD(
    "kip714.client.payload.delta",
    Conditions(
        "With DeltaTemporality=true, Sums are DELTA",
        TEMPORALITY,
        Level.MUST,
        "baseline",
        ("otlp.temporality",),
    ),
)
test_delta_continuity = PAYLOAD(
    "kip714.client.payload.delta_continuity",
    Conditions(
        "Each DELTA starts where the previous one ended; Sums set a start time",
        TEMPORALITY,
        Level.SHOULD,
        "baseline",
        ("otlp.delta.gap", "otlp.time.start"),
    ),
)
test_overlapping_prefixes = PAYLOAD(
    "kip714.client.payload.overlapping_prefixes",
    Conditions(
        "Each series once per push when two requested prefixes both match it",
        ENCODING + "; subscription " + ", ".join(repr(p) for p in OVERLAPPING),
        Level.MUST,
        "overlapping",
        ("otlp.series.duplicate",),
    ),
)
test_metric_types_prefixed = PAYLOAD(
    "kip714.client.payload.metric_types_prefixed",
    Conditions(
        "Gauge and Sum as the KIP's tables say, Sums monotonic, under a prefix subscription",
        "KIP-714 Metric types; Standard producer/consumer metrics; subscription "
        + ", ".join(repr(p) for p in OVERLAPPING),
        Level.MUST,
        "overlapping",
        ("otlp.standard.type", "otlp.sum.monotonic", "otlp.sum.negative_delta"),
    ),
)
test_cumulative = PAYLOAD(
    "kip714.client.payload.cumulative",
    Conditions(
        "With DeltaTemporality=false, Sums are CUMULATIVE and never decrease",
        TEMPORALITY + "; DeltaTemporality false injected",
        Level.MUST,
        "cumulative",
        ("otlp.temporality", "otlp.cumulative.decrease", "otlp.time.regress"),
    ),
)
test_cumulative_continuity = PAYLOAD("kip714.client.payload.cumulative_continuity", Conditions(
    "A CUMULATIVE series keeps its start time; Sums set a start time",
    TEMPORALITY + "; DeltaTemporality false injected", Level.SHOULD, "cumulative",
    ("otlp.cumulative.reset", "otlp.time.start"),
))  # fmt: skip
