"""KIP-714 CLIENT_METRICS subscriptions, resolved exactly as Apache Kafka 4.1's broker does.

The reference broker must hand out the SubscriptionId a real broker would (a client may push to
another broker, ``testPushTelemetryOnNewServer``), and ``ClientMetricsManager`` derives it from
Java hash-table iteration order: subscriptions sit in a ``ConcurrentHashMap`` keyed by name, each
one's ``metrics`` list is copied into a ``HashSet``, the matching ones are ``addAll``-ed into a
fresh ``HashSet``, and that set's ``toString()`` plus the interval feeds CRC32C. This module
replays those tables: spread hash, power-of-two tables grown at 0.75 load (HashMap past it,
ConcurrentHashMap on reaching it), bucket order, append order within a bucket, HashMap's
order-keeping resize split, ConcurrentHashMap's "lastRun" split (which reverses the head of a
bin), and the early resizes of a bin crowded past 8 in a table under 64 buckets. Java would turn
such a bin into a red-black tree once the table has 64 buckets (only crafted hash collisions get
there); that raises :class:`UnreproducibleOrderError` rather than return a guessed order.
``HashSet(Collection)`` sizes its table differently before JDK 19; ``jdk`` picks (default 21, the
JVM of the ``apache/kafka`` image).

Match values are Java regexes, full-matched. :func:`java_regex` compiles them with ``re`` in ASCII
mode (Java's default for ``\\d \\w \\s \\b`` and ``(?i)``), translating ``\\Q..\\E``, ``\\z``,
``\\Z``, ``\\h``, ``\\v``, ``\\R``, ``\\e``, ``\\cX``, ``\\0ooo``, ``(?<name>..)``, ``\\k<name>``
and Java's ``.`` (which also skips ``\\r``), and rejecting what Java rejects but Python takes
(a ``{`` that is not a counted quantifier, ``(?#..)``, ``(?P..)``). Out of scope: ``\\p{..}``,
``\\N{..}``, ``\\X``, ``\\G``, class union and intersection, ``(?U)``/``(?d)``/``(?u)``, quantifiers
on nothing or on a quantifier (``^*``, ``x{1}{2}``), and back-references to later groups.
"""

from __future__ import annotations

import base64
import functools
import ipaddress
import re
import struct
import unicodedata
import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import crc32c

from .errors import ErrorCode

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

_MASK32 = 0xFFFFFFFF
_TREEIFY_THRESHOLD = 8  # a bin holding more than this many entries is treeified ...
_MIN_TREEIFY_CAPACITY = 64  # ... unless the table is smaller, in which case it grows instead


# --- Java semantics ------------------------------------------------------------------------


def _int32(value: int) -> int:
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(s: str) -> int:
    """``String.hashCode()``: ``31*h + c`` over UTF-16 code units, as a signed 32-bit int."""
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for unit in struct.unpack(f">{len(units) // 2}H", units):
        h = (31 * h + unit) & _MASK32
    return _int32(h)


def java_uuid_hash(value: uuid.UUID) -> int:
    """Kafka ``Uuid.hashCode()``: ``x = msb ^ lsb; (int)(x >> 32) ^ (int)x``."""
    x = (value.int >> 64) ^ (value.int & ((1 << 64) - 1))
    return _int32((x >> 32) ^ x)


def kafka_uuid_str(value: uuid.UUID) -> str:
    """Kafka ``Uuid.toString()``: URL-safe base64 of the 16 bytes, unpadded (22 characters)."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def java_trim(s: str) -> str:
    """``String.trim()``: strips every character up to U+0020, and no other whitespace."""
    return s.strip("".join(map(chr, range(0x21))))


def java_set_to_string(elements: Iterable[str]) -> str:
    """``AbstractCollection.toString()`` of strings iterated in ``elements`` order."""
    return "[" + ", ".join(elements) + "]"


def java_host_address(address: str) -> str:
    """``InetAddress.getHostAddress()`` for an IP literal, the form ``client_source_address``
    regexes see: IPv6 as eight unpadded hex groups, IPv4-mapped IPv6 as plain IPv4."""
    text, _, scope = address.partition("%")
    ip = ipaddress.ip_address(text)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is None:
            groups = ":".join(f"{int(group, 16):x}" for group in ip.exploded.split(":"))
            return f"{groups}%{scope}" if scope else groups
        ip = ip.ipv4_mapped
    return str(ip)


def _java_utf8(s: str) -> bytes:
    # Java encodes a lone surrogate as '?'; Python keeps surrogate pairs it was handed apart.
    joined = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return joined.encode("utf-8", "replace")


class UnreproducibleOrderError(ValueError):
    """Java would treeify a hash bin here, and this module does not model red-black bins."""


def _table_size_for(capacity: int) -> int:
    return 1 << max(capacity - 1, 0).bit_length()


class _JavaHashTable:
    """Bucket layout of a ``java.util.HashMap`` (``concurrent=False``) or ``ConcurrentHashMap``
    of String keys; iterating yields keys in Java's iteration order."""

    def __init__(self, capacity: int = 16, *, concurrent: bool = False) -> None:
        self._bins: list[list[tuple[int, str]]] = [[] for _ in range(_table_size_for(capacity))]
        self._concurrent = concurrent
        self._size = 0

    def __iter__(self) -> Iterator[str]:
        return (key for entries in self._bins for _, key in entries)

    def _bin(self, key: str) -> tuple[int, list[tuple[int, str]]]:
        h = java_string_hash(key) & _MASK32
        h ^= h >> 16  # HashMap.hash / ConcurrentHashMap.spread (whose sign mask never matters)
        return h, self._bins[h & (len(self._bins) - 1)]

    def add(self, key: str) -> None:
        h, entries = self._bin(key)
        for position, (_, existing) in enumerate(entries, 1):
            if existing == key:  # ConcurrentHashMap also treeifies on a deep update
                if self._concurrent and position >= _TREEIFY_THRESHOLD:
                    self._treeify_bin()
                return
        entries.append((h, key))
        if len(entries) > _TREEIFY_THRESHOLD:
            self._treeify_bin()
        self._size += 1
        # HashMap grows once size exceeds 0.75n; ConcurrentHashMap as soon as it reaches it.
        while self._size > self._threshold() - self._concurrent:
            self._resize()

    def remove(self, key: str) -> None:
        _, entries = self._bin(key)
        for index, (_, existing) in enumerate(entries):
            if existing == key:
                del entries[index]
                self._size -= 1
                return

    def _threshold(self) -> int:
        return len(self._bins) - (len(self._bins) >> 2)

    def _treeify_bin(self) -> None:
        n = len(self._bins)
        if n >= _MIN_TREEIFY_CAPACITY:
            raise UnreproducibleOrderError(
                f"more than {_TREEIFY_THRESHOLD} keys share one bucket of a {n}-bucket table"
            )
        if not self._concurrent:
            self._resize()
            return
        # tryPresize(n << 1): doubles until sizeCtl reaches tableSizeFor(1.5 * 2n + 1).
        target = _table_size_for(3 * n + 1)
        while target > self._threshold():
            self._resize()

    def _resize(self) -> None:
        n = len(self._bins)
        grown: list[list[tuple[int, str]]] = [[] for _ in range(2 * n)]
        for index, entries in enumerate(self._bins):
            if self._concurrent and entries:
                # transfer(): the longest tail bound for one half moves as is; every entry
                # before it is pushed onto the front of its half, which reverses them.
                run = len(entries) - 1
                while run > 0 and (entries[run - 1][0] & n) == (entries[-1][0] & n):
                    run -= 1
                for entry in entries[run:]:
                    grown[index + (entry[0] & n)].append(entry)
                for entry in entries[:run]:
                    grown[index + (entry[0] & n)].insert(0, entry)
            else:  # HashMap.resize() splits a bin keeping its order
                for entry in entries:
                    grown[index + (entry[0] & n)].append(entry)
        self._bins = grown


def hashset_copy_capacity(size: int, jdk: int = 21) -> int:
    """Initial capacity ``new HashSet<>(collection)`` asks for, for a collection of ``size``."""
    if jdk >= 19:  # HashMap.newHashMap(max(size, 12)): ceil(n / 0.75)
        return -(-4 * max(size, 12) // 3)
    return max(size * 4 // 3 + 1, 16)  # (int) (size / .75f) + 1, exact below 2**22


def java_hashset_order(items: Iterable[str], initial_capacity: int = 16) -> list[str]:
    """Iteration order of a ``HashSet<String>`` built with ``initial_capacity`` (16 is
    ``new HashSet<>()``) into which ``items`` were added one by one, in order."""
    table = _JavaHashTable(initial_capacity)
    for item in items:
        table.add(item)
    return list(table)


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


_JAVA_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")
_DOTALL = re.compile(r"\(\?[a-zA-Z]*s")  # an inline (?s) anywhere: leave '.' to Python
_JAVA_DOT = r"[^\n\r\x85\u2028\u2029]"
_JAVA_OCTAL = re.compile(r"0([0-3][0-7]{2}|[0-7]{1,2})")
_VERTICAL = "\\n\\x0b\\f\\r\\x85\\u2028\\u2029"
_HORIZONTAL = " \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"
_CLASS_ESCAPES = {"h": _HORIZONTAL, "v": _VERTICAL, "e": r"\x1b"}
_ESCAPES = {
    **{key: f"[{value}]" for key, value in _CLASS_ESCAPES.items()},
    "z": r"\Z",
    "Z": r"(?=(?:\r\n|[\n\r\x85\u2028\u2029])?\Z)",
    "R": r"(?:\r\n|[" + _VERTICAL + "])",
}


def _java_escape(source: str, i: int, in_class: bool) -> tuple[str, int]:
    """Python for the escape at ``source[i]`` (a backslash), and the index after it."""
    escaped = source[i + 1]
    if escaped == "Q":  # a literal up to \E or the end
        end = source.find("\\E", i + 2)
        end = len(source) if end < 0 else end
        return re.escape(source[i + 2 : end]), end + 2
    if escaped == "c" and i + 2 < len(source):  # control character
        return re.escape(chr(ord(source[i + 2]) ^ 64)), i + 3
    if escaped == "0":  # Java octal needs a digit and takes up to three
        octal = _JAVA_OCTAL.match(source, i + 1)
        if octal is None:
            raise re.error("illegal octal escape", source, i)
        return re.escape(chr(int(octal[1], 8))), octal.end()
    if escaped == "k" and source.startswith("<", i + 2) and not in_class:
        close = source.find(">", i + 3)
        if close < 0:
            raise re.error("unterminated \\k<name>", source, i)
        return f"(?P={source[i + 3 : close]})", close + 1
    table = _CLASS_ESCAPES if in_class else _ESCAPES
    return table.get(escaped, source[i : i + 2]), i + 2


@functools.lru_cache(maxsize=4096)
def java_regex(source: str) -> re.Pattern[str]:
    """Compile a ``java.util.regex`` pattern for Python; raises ``re.error`` where Java would
    throw ``PatternSyntaxException`` (within the dialect described in the module docstring)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(source):
        c = source[i]
        if c == "\\" and i + 1 < len(source):
            text, i = _java_escape(source, i, in_class)
            out.append(text)
            continue
        if in_class:
            in_class = c != "]" or source[i - 1] == "[" or source[i - 2 : i] == "[^"
        elif c == "[":
            in_class = True
        elif c == "(" and source.startswith(("?#", "?P"), i + 1):
            raise re.error("Python-only group syntax", source, i)
        elif c == "(" and source.startswith("?<", i + 1) and source[i + 3 : i + 4] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        elif c == "{" and (not out or _JAVA_QUANTIFIER.match(source, i) is None):
            raise re.error("'{' is not a counted quantifier", source, i)
        elif c == "." and _DOTALL.search(source) is None:  # Java's '.' skips \r, \x85 too
            c = _JAVA_DOT
        out.append(c)
        i += 1
    with warnings.catch_warnings():  # Java's [a&&b] and [a[b]] make Python warn
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile("".join(out), re.ASCII)


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
    return _int32(crc32c.crc32c(_java_utf8(text))) ^ java_uuid_hash(client_instance_id)


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
        union = _JavaHashTable()
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
        self._table = _JavaHashTable(concurrent=True)
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


class ClientMetricsConfigError(ValueError):
    """A CLIENT_METRICS config change the controller rejects, with the error code it answers."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(f"{error_code.name}: {message}")
        self.error_code = error_code
        self.message = message


_JAVA_INT = re.compile(r"[+-]?\d+")  # Integer.parseInt: Unicode decimal digits, as Python's \d
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")  # Java's \s*,\s*


def _parse_java_int(text: str) -> int | None:
    """``Integer.parseInt``, or None where it throws NumberFormatException."""
    if _JAVA_INT.fullmatch(text) is None:
        return None
    # decimal() maps every Unicode digit; dropping leading zeros keeps int() off huge strings
    digits = "".join(str(unicodedata.decimal(c)) for c in text.lstrip("+-")).lstrip("0")
    value = int(digits or "0") * (-1 if text[0] == "-" else 1) if len(digits) <= 10 else None
    return value if value is not None and -(2**31) <= value < 2**31 else None


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
        parsed = _parse_java_int(java_trim(raw))
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
