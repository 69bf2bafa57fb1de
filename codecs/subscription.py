"""KIP-714 CLIENT_METRICS subscriptions, resolved exactly as Apache Kafka 4.1's broker does.

The reference broker must hand out the SubscriptionId a real broker would (a client may push to
another broker, ``testPushTelemetryOnNewServer``), and ``ClientMetricsManager`` derives it from
Java hash-table iteration order: subscriptions sit in a ``ConcurrentHashMap`` keyed by name, each
one's ``metrics`` list is copied into a ``HashSet``, the matching ones are ``addAll``-ed into a
fresh ``HashSet``, and that set's ``toString()`` plus the interval feeds CRC32C. This module
replays those steps on the tables of :mod:`kconform.codecs.java`, which raises
:class:`UnreproducibleOrderError` where Java would treeify a bin rather than return a guessed
order. ``HashSet(Collection)`` sizes its table differently before JDK 19; ``jdk`` picks (default
21, the JVM of the ``apache/kafka`` image).

Match values are Java regexes, full-matched; :func:`java_regex` describes the dialect taken.
The Java helpers and ``kafka_uuid_str`` (from :mod:`kconform.codecs.wire`) stay importable here.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import crc32c

from kconform.errors import ProtocolError

from .errors import ErrorCode
from .java import (
    JavaHashTable,
    UnreproducibleOrderError,
    hashset_copy_capacity,
    java_hashset_order,
    java_host_address,
    java_int32,
    java_parse_int,
    java_regex,
    java_set_to_string,
    java_string_hash,
    java_trim,
    java_utf8,
    java_uuid_hash,
)
from .wire import kafka_uuid_str

__all__ = [
    "ALL_METRICS", "CLIENT_METRICS_RESOURCE_TYPE", "CONFIG_NAMES", "INTERVAL_MS_CONFIG",
    "INTERVAL_MS_DEFAULT", "INTERVAL_MS_MAX", "INTERVAL_MS_MIN", "MATCH_CONFIG", "METRICS_CONFIG",
    "SELECTOR_NAMES", "ClientMetadata", "ClientMetricsConfigError", "ClientMetricsSubscription",
    "ResolvedSubscription", "SubscriptionMap", "UnreproducibleOrderError",
    "compute_subscription_id", "hashset_copy_capacity", "java_hashset_order", "java_host_address",
    "java_regex", "java_set_to_string", "java_string_hash", "java_trim", "java_uuid_hash",
    "kafka_uuid_str", "matches", "parse_client_metrics_config", "resolve",
]  # fmt: skip

CLIENT_METRICS_RESOURCE_TYPE = 16  # ConfigResource.Type.CLIENT_METRICS
METRICS_CONFIG = "metrics"
INTERVAL_MS_CONFIG = "interval.ms"
MATCH_CONFIG = "match"
CONFIG_NAMES = frozenset({METRICS_CONFIG, INTERVAL_MS_CONFIG, MATCH_CONFIG})
SELECTOR_NAMES = (  # ClientMetricsConfigs.ALLOWED_MATCH_PARAMS
    "client_instance_id", "client_id", "client_software_name", "client_software_version",
    "client_source_address", "client_source_port",
)  # fmt: skip
ALL_METRICS = "*"
INTERVAL_MS_DEFAULT = 300_000
INTERVAL_MS_MIN = 100
INTERVAL_MS_MAX = 3_600_000


# --- Subscriptions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientMetricsSubscription:
    """One CLIENT_METRICS config resource, parsed as ``ClientMetricsConfigs`` parses it."""

    name: str
    metrics: tuple[str, ...] = ()
    interval_ms: int = INTERVAL_MS_DEFAULT
    match: Mapping[str, str] = field(default_factory=dict, hash=False)  # selector -> regex


@dataclass(frozen=True)
class ClientMetadata:
    """What ``ClientMetricsInstanceMetadata`` captures from the request that created an instance."""

    client_instance_id: uuid.UUID
    client_id: str
    client_software_name: str
    client_software_version: str
    client_source_address: str  # as java_host_address() renders it
    client_source_port: int

    def attribute(self, selector: str) -> str | None:
        """The string a ``selector`` regex is matched against (None, never matching, for a
        name that is not a selector)."""
        if selector == "client_instance_id":
            return kafka_uuid_str(self.client_instance_id)
        if selector == "client_source_port":
            return str(self.client_source_port)
        return str(getattr(self, selector)) if selector in SELECTOR_NAMES else None


@dataclass(frozen=True)
class ResolvedSubscription:
    """What GetTelemetrySubscriptions hands a client: metrics in Java ``HashSet`` order."""

    requested_metrics: tuple[str, ...]
    push_interval_ms: int
    subscription_id: int


def matches(subscription: ClientMetricsSubscription, metadata: ClientMetadata) -> bool:
    """``ClientMetricsInstanceMetadata.isMatch``: an empty match map matches every client;
    otherwise every selector's regex must match its attribute in full."""
    for selector, regex in subscription.match.items():
        attribute = metadata.attribute(selector)
        if attribute is None or java_regex(regex).fullmatch(attribute) is None:
            return False
    return True


def compute_subscription_id(
    requested_metrics: Sequence[str], push_interval_ms: int, client_instance_id: uuid.UUID
) -> int:
    """``computeSubscriptionId``: ``(int) CRC32C(UTF-8(set.toString() + interval))`` XOR
    ``Uuid.hashCode()``, with the metrics in their ``HashSet`` iteration order."""
    text = java_set_to_string(requested_metrics) + str(push_interval_ms)
    return java_int32(crc32c.crc32c(java_utf8(text))) ^ java_uuid_hash(client_instance_id)


def resolve(
    subscriptions: Iterable[ClientMetricsSubscription], metadata: ClientMetadata, *, jdk: int = 21
) -> ResolvedSubscription:
    """``createClientInstance``: the union of the matching subscriptions' metrics (exactly
    ``("*",)`` if any has ``*``), the least matching interval (from 300000), and the id.

    ``subscriptions`` must come in the broker's iteration order (:meth:`SubscriptionMap.values`)."""
    interval, everything = INTERVAL_MS_DEFAULT, False
    chosen: list[ClientMetricsSubscription] = []
    for subscription in subscriptions:
        if matches(subscription, metadata):
            chosen.append(subscription)
            everything = everything or ALL_METRICS in subscription.metrics
            interval = min(interval, subscription.interval_ms)
    requested: tuple[str, ...] = (ALL_METRICS,)
    if not everything:  # with "*" Java clears the set, so its order never shows
        union = JavaHashTable()
        for subscription in chosen:
            capacity = hashset_copy_capacity(len(subscription.metrics), jdk)
            for metric in java_hashset_order(subscription.metrics, capacity):
                union.add(metric)
        requested = tuple(union)
    subscription_id = compute_subscription_id(requested, interval, metadata.client_instance_id)
    return ResolvedSubscription(requested, interval, subscription_id)


class SubscriptionMap:
    """The broker's ``subscriptionMap`` (a ``ConcurrentHashMap`` keyed by subscription name).

    Apply config changes in the order the broker saw them: iteration order depends on the whole
    history of puts and removes, because tables never shrink."""

    def __init__(self) -> None:
        self._table = JavaHashTable(concurrent=True)
        self._subscriptions: dict[str, ClientMetricsSubscription] = {}

    def put(self, subscription: ClientMetricsSubscription) -> None:
        self._table.add(subscription.name)
        self._subscriptions[subscription.name] = subscription

    def remove(self, name: str) -> None:
        if self._subscriptions.pop(name, None) is not None:
            self._table.remove(name)

    def update(self, name: str, configs: Mapping[str, str | None]) -> None:
        """``updateSubscription``: validate, then drop the subscription if no key is left."""
        subscription = parse_client_metrics_config(name, configs)
        if all(value is None for value in configs.values()):
            self.remove(name)
        else:
            self.put(subscription)

    def values(self) -> list[ClientMetricsSubscription]:
        return [self._subscriptions[name] for name in self._table]

    def resolve(self, metadata: ClientMetadata, *, jdk: int = 21) -> ResolvedSubscription:
        return resolve(self.values(), metadata, jdk=jdk)


# --- Config validation (ClientMetricsConfigs.validate, Kafka 4.0-4.1) ------------------------


class ClientMetricsConfigError(ProtocolError):
    """A CLIENT_METRICS config change the controller rejects, with the error code it answers."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(f"{error_code.name}: {message}")
        self.error_code = error_code
        self.message = message


_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")  # Java's \s*,\s*


def _parse_list(value: str) -> list[str]:
    """``ConfigDef`` LIST: trim, nothing for an empty value, else split keeping empty entries."""
    trimmed = java_trim(value)
    return _LIST_SEPARATOR.split(trimmed) if trimmed else []


def _parse_match_entry(entry: str) -> tuple[str, str]:
    parts = entry.split("=")
    while parts and not parts[-1]:  # String.split drops trailing empty strings
        parts.pop()
    try:
        selector, regex = map(java_trim, parts)  # exactly two parts, or ValueError
        if selector in SELECTOR_NAMES:
            java_regex(regex)
            return selector, regex
    except (ValueError, re.error):
        pass
    raise ClientMetricsConfigError(
        ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {entry}"
    )


def parse_client_metrics_config(
    name: str, configs: Mapping[str, str | None]
) -> ClientMetricsSubscription:
    """Validate and parse a CLIENT_METRICS resource as Kafka 4.1's controller and broker do.

    ``configs`` is the resource's full set of keys after the change; ``None`` is a deleted key.
    Checks run in Kafka's order, so the first broken rule decides the error code."""
    if not name:
        raise ClientMetricsConfigError(
            ErrorCode.INVALID_REQUEST, "Subscription name can't be empty"
        )
    present = {key: value for key, value in configs.items() if value is not None}
    for key in present:
        if key not in CONFIG_NAMES:
            raise ClientMetricsConfigError(
                ErrorCode.INVALID_REQUEST, f"Unknown client metrics configuration: {key}"
            )
    interval = INTERVAL_MS_DEFAULT
    if (raw := present.get(INTERVAL_MS_CONFIG)) is not None:
        parsed = java_parse_int(java_trim(raw))
        if parsed is None:
            raise ClientMetricsConfigError(
                ErrorCode.INVALID_CONFIG,
                f"Invalid value {raw} for configuration {INTERVAL_MS_CONFIG}: "
                "Not a number of type INT",
            )
        interval = parsed
        if not INTERVAL_MS_MIN <= interval <= INTERVAL_MS_MAX:
            raise ClientMetricsConfigError(
                ErrorCode.INVALID_REQUEST,
                f"Invalid value {interval} for {INTERVAL_MS_CONFIG}, interval must be between 100 "
                "and 3600000 (1 hour)",
            )
    match = dict(_parse_match_entry(entry) for entry in _parse_list(present.get(MATCH_CONFIG, "")))
    metrics = tuple(_parse_list(present.get(METRICS_CONFIG, "")))
    return ClientMetricsSubscription(name, metrics, interval, match)
