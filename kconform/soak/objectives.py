"""The soak's objectives (SLOs): for each rule of the book it judges (rules/soak.py: id, level,
source), the title it reports, what the target must be able to show and the unit of its figure;
and the thresholds (each a `kconform soak` flag with the default stated here). `judge` judges
them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.fixtures.targets.base import Capability
from kconform.rules import Level, Rule, rule

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
    """One objective the soak judges: `id` is a rule-book id (rules/soak.py gives its level and
    source); the title states the threshold it is judged with."""

    id: str
    title: str
    requires: frozenset[Capability] = frozenset()
    unit: str = ""

    @property
    def rule(self) -> Rule:
        return rule(self.id)

    @property
    def level(self) -> Level:
        return self.rule.level

    @property
    def spec(self) -> str:
        return self.rule.citation


SLOS: tuple[Slo, ...] = (
    Slo("soak.delivery.no_loss",
        "No push a client saw acknowledged is missing at the broker's telemetry sink",
        SINK, "pushes"),
    Slo("soak.delivery.no_duplicate", "No push reaches the sink twice", SINK, "pushes"),
    Slo("soak.subscription_change.recovery",
        "After a subscription change every affected client pushes again within "
        "--recovery-intervals (2) x PushIntervalMs of its first UNKNOWN_SUBSCRIPTION_ID",
        ADMIN, "s"),
    Slo("soak.lockout.none",
        "No client locked out: every live client has a push accepted at least every "
        "--lockout-intervals (6) x PushIntervalMs",
        frozenset(), "clients"),
    Slo("soak.restart.no_lockout",
        "After a broker restart every client pushes again within --lockout-intervals (6) x "
        "PushIntervalMs of the broker's return",
        RESTART, "clients"),
    Slo("soak.errors.kip_table", "Every error code a client sees is one the KIP's table names",
        frozenset(), "responses"),
    Slo("soak.throttle.bound",
        "Throttled pushes of well-behaved clients stay below --max-throttled-percent (1 %)",
        frozenset(), "%"),
    Slo("soak.broker.memory_growth",
        "Broker memory grows by less than --max-memory-growth (256 MiB) per hour",
        frozenset(), "MiB/h"),
    Slo("soak.latency.client_side",
        "Client-side push latency (p50, p99, max) while the fleet ran (not its final closes)",
        frozenset(), "ms"),
    Slo("soak.cache.instances", "Client instances the run created, and what the broker cached",
        frozenset(), "instances"),
)  # fmt: skip
BY_ID = {s.id: s for s in SLOS}
