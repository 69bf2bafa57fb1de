"""The soak's objectives as rules: what a fleet of KIP-714 clients against one broker must see
over minutes to hours. `kconform soak` judges each (kconform/soak/objectives.py declares how:
the capability it needs, its unit, its threshold flag); no suite case can, within its budget."""

from __future__ import annotations

from kconform.rules.model import Level, Rule

_SOAK = "judged by `kconform soak` over a client fleet's run, longer than any suite case"
_RECEIVER = "Client telemetry receiver"


def _soak(
    rule_id: str, level: Level, kip: str, section: str, means: str, behaviour: str = ""
) -> Rule:
    return Rule(rule_id, level, kip, section, "", means, behaviour=behaviour, outside_suites=_SOAK)


RULES = (
    _soak("soak.delivery.no_loss", Level.MUST, "KIP-714", _RECEIVER,
          "Accepted metrics are handed to the receiver; Apache exports before it answers NONE "
          "(§C.4 steps 7, 9). Operational promise: telemetry a broker acknowledged is not lost: "
          "no push a client saw acknowledged is missing at the broker's telemetry sink.",
          behaviour="C.4"),
    _soak("soak.delivery.no_duplicate", Level.MUST, "KIP-714", _RECEIVER,
          "One export per accepted push; operational promise: no double counting downstream, so "
          "no push reaches the sink twice.", behaviour="C.4"),
    _soak("soak.subscription_change.recovery", Level.MUST, "KIP-714",
          "SubscriptionId; Error handling",
          "UNKNOWN_SUBSCRIPTION_ID -> \"Immediately send a GetTelemetrySubscriptionsRequest\"; "
          "the next push within 0.5-1.5 x PushIntervalMs ('Client behavior'): after a "
          "subscription change every affected client pushes again within a bound of intervals."),
    _soak("soak.lockout.none", Level.MUST, "KIP-714", "Error handling; Connection selection",
          "Every error but 42/87 is recoverable; operational promise: a fleet keeps reporting "
          "through restarts and subscription changes, every live client having a push accepted "
          "within a bound of intervals."),
    _soak("soak.restart.no_lockout", Level.MUST, "KIP-714", "Connection selection",
          "Reconnect to the same or another broker and go on; operational promise: a broker "
          "restart locks no client out."),
    _soak("soak.errors.kip_table", Level.MUST, "KIP-714",
          "Error handling; Throttling and rate-limiting",
          "Every error code a client sees is one the KIP's table names (42, 87, 118, 117, 76) or "
          "THROTTLING_QUOTA_EXCEEDED (89)."),
    _soak("soak.throttle.bound", Level.MUST, "KIP-714", "Throttling and rate-limiting",
          "Only pushes before PushIntervalMs expires are throttled and the fleet never pushes "
          "early, so throttled pushes of well-behaved clients stay below a small bound."),
    _soak("soak.broker.memory_growth", Level.MUST, "operational", "broker memory",
          "The instance cache is bounded (16,384 LRU, expiry after max(60 s, 3 x interval), "
          "§C.5), so broker memory levels off: it grows by less than a bound per hour.",
          behaviour="C.5"),
    _soak("soak.latency.client_side", Level.INFO, "operational", "push latency",
          "What the fleet measured, request written to response read: client-side push latency "
          "(p50, p99, max) while the fleet ran."),
    _soak("soak.cache.instances", Level.INFO, "operational", "instance cache",
          "The client instances the run created, and what the broker cached (LRU cache of "
          "16,384 instances, expiry after max(60 s, 3 x PushIntervalMs), §C.5).",
          behaviour="C.5"),
)  # fmt: skip
