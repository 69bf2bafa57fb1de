"""KIP-714 payload rules, judged on every push a client sent: OTLP, names, types, time, privacy.

Each case owns a set of the rules `kconform.codecs.otlp.validate` checks (their levels and KIP
sections are in `kconform.codecs.otlp_catalogue.RULES`); a MUST case owns only MUST rules and a
SHOULD case only SHOULD rules, so a violation's level decides the verdict as the KIP words do.
Every push of the run is decompressed, parsed and validated with the subscription the client
had (RequestedMetrics, DeltaTemporality), the previous push (cross-push rules: time, delta
continuity, cumulative counters) and the private values the harness knows (host name, the
client's pid, the user name).
"""

from __future__ import annotations

from typing import Any

from kconform.codecs.otlp_catalogue import RULES
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import (
    TELEMETRY,
    require_telemetry,
)
from kconform.suites.client.helpers_payload import RUNS, expect_rules, judge

# --- rule cases ---------------------------------------------------------------------------------

ENCODING = "KIP-714 Metrics naming and format / Encoding"
TEMPORALITY = "KIP-714 Metric aggregation temporality ('Clients must support both'); ruling 6"

RULE_CASES: dict[str, tuple[str, str, Level, str, tuple[str, ...]]] = {
    # case id suffix: (title, spec, level, run, rules)
    "valid_otlp": (
        "Every push is a valid OTLP MetricsData",
        ENCODING,
        Level.MUST,
        "baseline",
        ("otlp.payload.unknown_field", "otlp.metric.data", "otlp.point.value"),
    ),
    "naming": (
        "Kafka metrics are named org.apache.kafka.<group>.<name>, '-' made '.'",
        "KIP-714 Metrics naming and format / Naming",
        Level.MUST,
        "baseline",
        ("otlp.name.syntax", "otlp.name.prefix", "otlp.name.derivation"),
    ),
    "naming_conventions": (
        "Names are lower case, other metrics namespaced, keys use '_', "
        "only metrics with a value are sent",
        "KIP-714 Naming; Sparse metrics",
        Level.SHOULD,
        "baseline",
        ("otlp.name.case", "otlp.name.namespace", "otlp.attribute.key", "otlp.metric.sparse"),
    ),
    "metric_types": (
        "Gauge and Sum as the KIP's tables say; Sums are monotonic",
        "KIP-714 Metric types; Standard producer/consumer metrics",
        Level.MUST,
        "baseline",
        ("otlp.standard.type", "otlp.sum.monotonic", "otlp.sum.negative_delta"),
    ),
    "standard_labels": (
        "Standard metrics carry the tables' labels (node_id)",
        "KIP-714 Standard producer/consumer metrics (Labels)",
        Level.SHOULD,
        "baseline",
        ("otlp.standard.labels",),
    ),
    "resource_labels": (
        "Resource attributes come from the KIP's client label list only",
        "KIP-714 Standard client resource labels",
        Level.SHOULD,
        "baseline",
        ("otlp.resource.label",),
    ),
    "privacy": (
        "No host name, address, pid, credential or other private value",
        "KIP-714 Motivation (user privacy); PRIVACY_LEVEL in otlp_catalogue",
        Level.MUST,
        "baseline",
        tuple(r for r in RULES if r.startswith("otlp.privacy.")),
    ),
    "timestamps": (
        "Timestamps are epoch nanoseconds, start <= time, increasing push to push",
        ENCODING + "; Metric aggregation temporality",
        Level.MUST,
        "baseline",
        ("otlp.time.unit", "otlp.time.order", "otlp.time.regress"),
    ),
    "delta": (
        "With DeltaTemporality=true, Sums are DELTA",
        TEMPORALITY,
        Level.MUST,
        "baseline",
        ("otlp.temporality",),
    ),
    "delta_continuity": (
        "Each DELTA starts where the previous one ended; Sums set a start time",
        TEMPORALITY,
        Level.SHOULD,
        "baseline",
        ("otlp.delta.gap", "otlp.time.start"),
    ),
    "cumulative": (
        "With DeltaTemporality=false, Sums are CUMULATIVE and never decrease",
        TEMPORALITY + "; DeltaTemporality false injected",
        Level.MUST,
        "cumulative",
        ("otlp.temporality", "otlp.cumulative.decrease", "otlp.time.regress"),
    ),
    "cumulative_continuity": (
        "A CUMULATIVE series keeps its start time; Sums set a start time",
        TEMPORALITY + "; DeltaTemporality false injected",
        Level.SHOULD,
        "cumulative",
        ("otlp.cumulative.reset", "otlp.time.start"),
    ),
}


BOOK_RULES = {
    "valid_otlp": "kip714.client.payload.otlp",
    "naming": "kip714.client.payload.naming",
    "naming_conventions": "kip714.client.payload.naming_conventions",
    "metric_types": "kip714.client.payload.metric_types",
    "standard_labels": "kip714.client.payload.labels",
    "resource_labels": "kip714.client.payload.labels",
    "privacy": "kip714.client.payload.privacy",
    "timestamps": "kip714.client.payload.timestamps",
    "delta": "kip714.client.payload.temporality",
    "delta_continuity": "kip714.client.payload.temporality_continuity",
    "cumulative": "kip714.client.payload.temporality",
    "cumulative_continuity": "kip714.client.payload.temporality_continuity",
}
"""The rule book's rule each payload case judges; its OTLP checks (codecs.otlp_rules) are the
detailed conditions of that rule."""


def _rule_case(suffix: str) -> Any:
    title, spec, level, run, rules = RULE_CASES[suffix]
    wrong = [r for r in rules if RULES[r].level != str(level)]
    if wrong:
        raise ValueError(f"{suffix}: rules {wrong} are not {level}")
    spec_rules = "; ".join(f"{r}: {RULES[r].spec_ref}" for r in rules)

    @case(
        f"kip714.client.payload.{suffix}",
        rules=[BOOK_RULES[suffix]],
        title=title,
        spec=f"{spec} ({spec_rules})",
        level=level,
        requires=TELEMETRY,
        kind="client",
        shares=run,
    )
    async def test(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
        recording = await RUNS[run](check, client, client_target)
        if suffix == "valid_otlp":
            require_telemetry(check, recording)
            check.expect(
                "pushes whose Metrics decompress and parse as MetricsData",
                [],
                judge(recording).unreadable[:10],
            )
        expect_rules(check, recording, rules)

    test.__name__ = f"test_{suffix}"
    return test


for _suffix in RULE_CASES:
    globals()[f"test_{_suffix}"] = _rule_case(_suffix)
