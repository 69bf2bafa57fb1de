"""The soak's SLOs, declared once: id, title, the rule or operational promise each checks, its
level, what the target must be able to show, and the thresholds (each a `kconform soak` flag
with the default stated here). `slo` judges them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.engine.model import Level
from kconform.fixtures.targets.base import Capability

SINK = frozenset({Capability.TELEMETRY_SINK})
RESTART_SETTLE_S = 180.0  # a restarted JVM refills its heap for minutes: not a leak
ADMIN = frozenset({Capability.CLIENT_METRICS_ADMIN})
RESTART = frozenset({Capability.RESTART})


@dataclass(frozen=True)
class Thresholds:
    """The SLOs' bounds (each a `kconform soak` flag)."""

    recovery_intervals: float = 2.0  # --recovery-intervals
    lockout_intervals: float = 6.0  # --lockout-intervals
    max_throttled_percent: float = 1.0  # --max-throttled-percent
    max_memory_growth_mib_per_hour: float = 256.0  # --max-memory-growth
    memory_min_minutes: float = 10.0  # growth is judged on runs at least this long


@dataclass(frozen=True)
class Slo:
    id: str
    title: str
    spec: str
    level: Level
    requires: frozenset[Capability] = frozenset()
    unit: str = ""


SLOS: tuple[Slo, ...] = (
    Slo("soak.delivery.no_loss",
        "No push a client saw acknowledged is missing at the broker's telemetry sink",
        "KIP-714 'Client telemetry receiver': accepted metrics are handed to the receiver; "
        "Apache exports before it answers NONE (§C.4 steps 7, 9). Operational promise: "
        "telemetry a broker acknowledged is not lost",
        Level.MUST, SINK, "pushes"),
    Slo("soak.delivery.no_duplicate",
        "No push reaches the sink twice",
        "KIP-714 'Client telemetry receiver' (one export per accepted push); operational "
        "promise: no double counting downstream",
        Level.MUST, SINK, "pushes"),
    Slo("soak.subscription_change.recovery",
        "After a subscription change every affected client pushes again within "
        "--recovery-intervals (2) x PushIntervalMs of its first UNKNOWN_SUBSCRIPTION_ID",
        "KIP-714 'SubscriptionId' and 'Error handling': UNKNOWN_SUBSCRIPTION_ID -> "
        "\"Immediately send a GetTelemetrySubscriptionsRequest\"; the next push within 0.5-1.5 "
        "x PushIntervalMs ('Client behavior')",
        Level.MUST, ADMIN, "s"),
    Slo("soak.lockout.none",
        "No client locked out: every live client has a push accepted at least every "
        "--lockout-intervals (6) x PushIntervalMs",
        "KIP-714 'Error handling' (every error but 42/87 is recoverable) and 'Connection "
        "selection'; operational promise: a fleet keeps reporting through restarts and "
        "subscription changes",
        Level.MUST, frozenset(), "clients"),
    Slo("soak.restart.no_lockout",
        "After a broker restart every client pushes again within --lockout-intervals (6) x "
        "PushIntervalMs of the broker's return",
        "KIP-714 'Connection selection': reconnect to the same or another broker and go on; "
        "operational promise: a restart locks no client out",
        Level.MUST, RESTART, "clients"),
    Slo("soak.errors.kip_table",
        "Every error code a client sees is one the KIP's table names",
        "KIP-714 'Error handling' table (42, 87, 118, 117, 76) and 'Throttling and "
        "rate-limiting' (89)",
        Level.MUST, frozenset(), "responses"),
    Slo("soak.throttle.bound",
        "Throttled pushes of well-behaved clients stay below --max-throttled-percent (1 %)",
        "KIP-714 'Throttling and rate-limiting': only pushes before PushIntervalMs expires "
        "are throttled; the fleet never pushes early",
        Level.MUST, frozenset(), "%"),
    Slo("soak.broker.memory_growth",
        "Broker memory grows by less than --max-memory-growth (256 MiB) per hour",
        "Operational promise: the instance cache is bounded (16,384 LRU, expiry after max(60 "
        "s, 3 x interval), §C.5), so memory levels off",
        Level.MUST, frozenset(), "MiB/h"),
    Slo("soak.latency.client_side",
        "Client-side push latency (p50, p99, max) while the fleet ran (not its final closes)",
        "Informational: what the fleet measured, request written to response read",
        Level.INFO, frozenset(), "ms"),
    Slo("soak.cache.instances",
        "Client instances the run created, and what the broker cached",
        "§C.5: LRU cache of 16,384 instances, expiry after max(60 s, 3 x PushIntervalMs); "
        "informational",
        Level.INFO, frozenset(), "instances"),
)  # fmt: skip
BY_ID = {s.id: s for s in SLOS}
