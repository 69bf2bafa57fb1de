"""The Java semantics Apache Kafka's broker leans on when it resolves KIP-714 subscriptions.

Hashing: ``String.hashCode()`` over UTF-16 code units and Kafka's ``Uuid.hashCode()``, as signed
32-bit ints. Hash tables: :class:`JavaHashTable` replays a ``java.util.HashMap`` (``HashSet``) or
``ConcurrentHashMap`` of String keys: spread hash, power-of-two tables grown at 0.75 load
(HashMap past it, ConcurrentHashMap on reaching it), bucket order, append order within a bucket,
HashMap's order-keeping resize split, ConcurrentHashMap's "lastRun" split (which reverses the
head of a bin), and the early resizes of a bin crowded past 8 in a table under 64 buckets. Java
would turn such a bin into a red-black tree once the table has 64 buckets (only crafted hash
collisions get there); that raises :class:`UnreproducibleOrderError` rather than return a guessed
order. ``HashSet(Collection)`` sizes its table differently before JDK 19; ``jdk`` picks.

Regexes: :func:`java_regex` compiles ``java.util.regex`` patterns with ``re`` in ASCII mode
(Java's default for ``\\d \\w \\s \\b`` and ``(?i)``), translating ``\\Q..\\E``, ``\\z``,
``\\Z``, ``\\h``, ``\\v``, ``\\R``, ``\\e``, ``\\cX``, ``\\0ooo``, ``(?<name>..)``, ``\\k<name>``
and Java's ``.`` (which also skips ``\\r``), and rejecting what Java rejects but Python takes
(a ``{`` that is not a counted quantifier, ``(?#..)``, ``(?P..)``). Out of scope: ``\\p{..}``,
``\\N{..}``, ``\\X``, ``\\G``, class union and intersection, ``(?U)``/``(?d)``/``(?u)``, quantifiers
on nothing or on a quantifier (``^*``, ``x{1}{2}``), and back-references to later groups.

Strings: ``String.trim()``, ``Integer.parseInt``, ``AbstractCollection.toString()``, Java's
UTF-8 encoder and ``InetAddress.getHostAddress()``.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import struct
import unicodedata
import uuid
import warnings
from collections.abc import Iterable, Iterator

from kconform.errors import HarnessError

__all__ = [
    "JavaHashTable", "UnreproducibleOrderError", "hashset_copy_capacity", "java_hashset_order",
    "java_host_address", "java_int32", "java_parse_int", "java_regex", "java_set_to_string",
    "java_string_hash", "java_trim", "java_utf8", "java_uuid_hash",
]  # fmt: skip

_MASK32 = 0xFFFFFFFF
_TREEIFY_THRESHOLD = 8  # a bin holding more than this many entries is treeified ...
_MIN_TREEIFY_CAPACITY = 64  # ... unless the table is smaller, in which case it grows instead


# --- Hashing and strings ---------------------------------------------------------------------


def java_int32(value: int) -> int:
    """``(int) value``: the low 32 bits as a signed int."""
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(s: str) -> int:
    """``String.hashCode()``: ``31*h + c`` over UTF-16 code units, as a signed 32-bit int."""
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for unit in struct.unpack(f">{len(units) // 2}H", units):
        h = (31 * h + unit) & _MASK32
    return java_int32(h)


def java_uuid_hash(value: uuid.UUID) -> int:
    """Kafka ``Uuid.hashCode()``: ``x = msb ^ lsb; (int)(x >> 32) ^ (int)x``."""
    x = (value.int >> 64) ^ (value.int & ((1 << 64) - 1))
    return java_int32((x >> 32) ^ x)


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


def java_utf8(s: str) -> bytes:
    """``s.getBytes(UTF_8)``."""
    # Java encodes a lone surrogate as '?'; Python keeps surrogate pairs it was handed apart.
    joined = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return joined.encode("utf-8", "replace")


_JAVA_INT = re.compile(r"[+-]?\d+")  # Integer.parseInt: Unicode decimal digits, as Python's \d


def java_parse_int(text: str) -> int | None:
    """``Integer.parseInt``, or None where it throws NumberFormatException."""
    if _JAVA_INT.fullmatch(text) is None:
        return None
    # decimal() maps every Unicode digit; dropping leading zeros keeps int() off huge strings
    digits = "".join(str(unicodedata.decimal(c)) for c in text.lstrip("+-")).lstrip("0")
    value = int(digits or "0") * (-1 if text[0] == "-" else 1) if len(digits) <= 10 else None
    return value if value is not None and -(2**31) <= value < 2**31 else None


# --- Hash tables -----------------------------------------------------------------------------


class UnreproducibleOrderError(HarnessError, ValueError):
    """Java would treeify a hash bin here, and this module does not model red-black bins."""


def _table_size_for(capacity: int) -> int:
    return 1 << max(capacity - 1, 0).bit_length()


class JavaHashTable:
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
    table = JavaHashTable(initial_capacity)
    for item in items:
        table.add(item)
    return list(table)


# --- Regexes ---------------------------------------------------------------------------------

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
