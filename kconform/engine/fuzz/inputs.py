"""Fuzz inputs: requests derived from the codec's declarations, well-formed or broken on purpose.

A `FuzzRequest` is exactly what goes on the wire (size prefix, header, body) together with a
readable account of it: the body's `describe()`, the header, and what was done to it. That
account is the bug report when a target fails (STYLE: shrunk counter-examples print as values).

Well-formed requests take every version of each API with unusual values: boundaries of every
integer type, empty and very long strings, empty and huge arrays, odd UUIDs, unknown tagged
fields, every compression id, random OTLP payloads. (`mutations.py` breaks them.)

Config requests never change the shared target's state: AlterConfigs and IncrementalAlterConfigs
are sent ValidateOnly.
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import asdict, dataclass, replace
from typing import Any, cast

from hypothesis import strategies as st

from kconform.codecs.compression import compress
from kconform.codecs.framing import peek_request_api
from kconform.codecs.messages import (
    REQUESTS,
    RESPONSES,
    AlterConfigsRequest,
    ApiVersionsRequest,
    DescribeConfigsRequest,
    GetTelemetrySubscriptionsRequest,
    IncrementalAlterConfigsRequest,
    ListConfigResourcesRequest,
    PushTelemetryRequest,
    RequestHeader,
    request_header_version,
)
from kconform.codecs.otlp import build_metrics_data, counter, gauge
from kconform.codecs.schema import Field, Message, Struct
from kconform.codecs.strategies import field_strategy
from kconform.codecs.wire import INT32, ONE_UUID, ZERO_UUID, DecodeError, EncodeError

GROUPS: dict[str, tuple[type[Message], ...]] = {
    "api_versions": (ApiVersionsRequest,),
    "get_telemetry": (GetTelemetrySubscriptionsRequest,),
    "push_telemetry": (PushTelemetryRequest,),
    "configs": (
        DescribeConfigsRequest,
        AlterConfigsRequest,
        IncrementalAlterConfigsRequest,
        ListConfigResourcesRequest,
    ),
}
"""The APIs each request case fuzzes, by group name (the case id's third part)."""

STATE_CHANGING = (AlterConfigsRequest.api_key, IncrementalAlterConfigsRequest.api_key)
MAX_PAYLOAD = 4 * 1024 * 1024
HEADER_PREFIX = 8
"""Bytes every request header version starts with: api key, api version, correlation id."""


@dataclass(frozen=True)
class FuzzRequest:
    """One request as sent, and how to read it.

    `size` is the size prefix when it is deliberately wrong (None: the payload's length); `eof`
    half-closes the connection after sending, for frames no broker could finish reading.
    `session` (PushTelemetry) first sends a GetTelemetrySubscriptions on the same connection and
    writes the ClientInstanceId and SubscriptionId it returns at `body_offset`, so the push
    reaches the checks behind the subscription check (compression, size, payload).
    """

    description: str
    payload: bytes
    size: int | None = None
    eof: bool = False
    session: bool = False
    body_offset: int = 0

    def frame(self) -> bytes:
        return INT32.pack(len(self.payload) if self.size is None else self.size) + self.payload

    @property
    def complete(self) -> bool:
        """Does the size prefix promise no more bytes than were sent? (A negative size is no
        frame at all: nothing more could complete it.)"""
        return self.size is None or self.size <= len(self.payload)

    @property
    def answerable(self) -> bool:
        """Could a broker answer this? Only a complete frame whose first frame holds api key,
        version and correlation id (8 bytes); an answer needs that correlation id."""
        return self.why_unanswerable() == ""

    def why_unanswerable(self) -> str:
        """Why no answer is owed to this frame ("" when one is)."""
        if not self.complete:
            return f"the size prefix promises {self.size} bytes and {len(self.payload)} were sent"
        first = len(self.payload) if self.size is None else self.size
        if first < 0:
            return f"the size prefix {first} is negative"
        if first < HEADER_PREFIX:
            return (
                f"the frame's {first} bytes cannot hold api key, version and correlation id "
                f"({HEADER_PREFIX} bytes)"
            )
        return ""

    def claimed(self) -> tuple[int, int] | None:
        """(api key, version) the header claims, if it is long enough to claim any."""
        try:
            return peek_request_api(self.payload)
        except DecodeError:
            return None

    def readable_api(self) -> str:
        claimed = self.claimed()
        if claimed is None:
            return "no api (frame shorter than a header)"
        known = REQUESTS.get(claimed[0])
        name = known.struct_name.removesuffix("Request") if known else f"api {claimed[0]}"
        return f"{name} v{claimed[1]}"

    def hex(self, limit: int | None = None) -> str:
        data = self.frame()
        shown = data if limit is None else data[:limit]
        more = f"…(+{len(data) - len(shown)} bytes)" if len(shown) < len(data) else ""
        return shown.hex() + more

    def to_replay(self) -> dict[str, Any]:
        data = asdict(self)
        data["payload"] = self.payload.hex()
        return data

    @classmethod
    def from_replay(cls, data: dict[str, Any]) -> FuzzRequest:
        return cls(
            data["description"],
            bytes.fromhex(data["payload"]),
            data.get("size"),
            bool(data.get("eof")),
            bool(data.get("session")),
            int(data.get("body_offset", 0)),
        )

    def __repr__(self) -> str:
        return f"<{self.description}; {len(self.frame())} bytes {self.hex(48)}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis prints examples with this: the readable account, not the fields."""
        printer.text(repr(self))


# --- unusual values, derived from the declarations ---------------------------------------------

_BOUNDS = {"int8": 7, "int16": 15, "uint16": 16, "int32": 31, "uint32": 32, "int64": 63}
ODD_UUIDS = (
    ZERO_UUID,
    ONE_UUID,
    uuid.UUID(int=2**128 - 1),
    uuid.UUID(int=1 << 127),
    uuid.UUID(int=(1 << 64) - 1),
    uuid.UUID(int=2),
)
text = st.text(st.characters(codec="utf-8"), max_size=24)
"""Strings that encode as UTF-8 (no lone surrogates)."""


def _int_extremes(type_name: str) -> st.SearchStrategy[int]:
    bits = _BOUNDS[type_name]
    if type_name.startswith("uint"):
        return st.sampled_from([0, 1, 2**bits - 1, 2 ** (bits - 1)])
    return st.sampled_from([-(2**bits), -1, 0, 1, 2**bits - 1])


def _repeat(unit_count: tuple[Any, int]) -> Any:
    unit, count = unit_count
    return unit * count


def _extreme(f: Field) -> st.SearchStrategy[Any]:
    name = f.element_type
    if name in _BOUNDS:
        return _int_extremes(name)
    if name == "uuid":
        return st.sampled_from(ODD_UUIDS)
    if name == "string":  # classic strings are int16-length: 32767 bytes at most
        # long values are built by `map`: a strategy holding them would print 32 kB reprs
        short = st.sampled_from(["", " ", "\x00", "*", "=,;"])
        return st.one_of(
            short, st.sampled_from([("é", 300), ("x", 255), ("x", 32767)]).map(_repeat)
        )
    if name in ("bytes", "records"):
        return st.sampled_from([0, 1, 65536]).map(lambda n: b"\xa5" * n)
    return st.nothing()


_HINTS: dict[str, tuple[Any, ...]] = {
    # Values a broker's config validation branches on (§D), so fuzzing reaches past the
    # first "unknown resource type" check: resource types, operations, keys and values.
    "ResourceType": (16, 4, 2, 32),
    "ConfigOperation": (0, 1, 2, 3),
    "Name": ("metrics", "interval.ms", "match", "telemetry.max.bytes", "metrics.verbosity"),
    "Value": ("99", "100", "3600001", "abc", "*", "org.apache.", "client_id=.*", "a=b=c", "[x"),
    "ResourceName": ("", "0", "kconform-fuzz"),
    "ResourceTypes": (16, 4, 2, 32, 0),
}
_HINTS["ConfigurationKeys"] = _HINTS["Name"]


def _hint(f: Field) -> st.SearchStrategy[Any]:
    values = _HINTS.get(f.name)
    return st.sampled_from(values) if values else st.nothing()


def unusual(cls: type[Struct], version: int) -> st.SearchStrategy[Struct]:
    """Instances of `cls` at `version`, each field either an ordinary codec value or an extreme
    one; arrays may be empty or huge (thousands of one ordinary element)."""
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for f in cls.schema_fields:
        if not f.present(version):
            continue
        ordinary = field_strategy(cls, f, version)
        if f.is_array:
            if f.is_struct:
                element = unusual(cls.structs[f.element_type], version)
            else:
                element = st.one_of(_extreme(f), _hint(f))
            one = field_strategy(
                cls, replace(f, type=f.element_type, nullable_versions="none"), version
            )
            huge = st.tuples(one, st.sampled_from([300, 3000])).map(lambda p: [p[0]] * p[1])
            kwargs[f.attr] = st.one_of(ordinary, huge, st.lists(element, max_size=2))
        elif f.is_struct:
            kwargs[f.attr] = st.one_of(ordinary, unusual(cls.structs[f.element_type], version))
        else:
            kwargs[f.attr] = st.one_of(ordinary, _extreme(f), _hint(f))
    if cls.owner is not None and cls.owner.is_flexible(version):
        known = {f.tag for f in cls.schema_fields if f.tagged(version)}
        kwargs["unknown_tagged_fields"] = st.dictionaries(
            st.integers(0, 2**31 - 1).filter(lambda t: t not in known),
            st.one_of(st.binary(max_size=8), st.just((b"\x00", 1000)).map(_repeat)),
            max_size=2,
        )
    return st.builds(cls, **kwargs)


# --- PushTelemetry: payloads the way clients (and broken clients) build them -------------------

_COMPRESSION = st.one_of(st.sampled_from([0, 1, 2, 3, 4]), st.integers(-128, 127))
_NAMES = st.one_of(text, text.map(lambda s: "org.apache.kafka.producer." + s))
# Built once: a strategy built inside a draw is validated anew on every draw (issue 16).
_POINTS = st.integers(0, 4)
_VALUES = st.one_of(st.integers(-(2**63), 2**63 - 1), st.floats())
_TIMES = st.integers(0, 2**64 - 1)
_LABELS = st.dictionaries(text, text, max_size=2)
_KINDS = st.sampled_from(["otlp", "otlp", "bytes", "empty", "null", "large"])
_CODECS = {c: st.sampled_from([c, 0, 1, 2, 3, 4]) for c in range(5)}
_RANDOM_METRICS = st.binary(min_size=1, max_size=64)
_LARGE = st.sampled_from([1024 * 1024, 1024 * 1024 + 1])
_INSTANCE_IDS = st.one_of(st.sampled_from(ODD_UUIDS), st.uuids())


@st.composite
def otlp(draw: st.DrawFn) -> tuple[bytes, str]:
    """A random OTLP MetricsData (gauges and delta/cumulative sums) and its description."""
    points = []
    for _ in range(draw(_POINTS)):
        name = draw(_NAMES)
        value = draw(_VALUES)
        at = draw(_TIMES)
        labels = draw(_LABELS)
        if draw(st.booleans()):
            points.append(gauge(name, value, time_unix_nano=at, attributes=labels))
        else:
            delta = draw(st.booleans())
            points.append(counter(name, value, delta=delta, time_unix_nano=at, attributes=labels))
    return build_metrics_data(points), f"{len(points)}-point OTLP MetricsData"


_SUBSCRIPTION_IDS = st.one_of(_int_extremes("int32"), st.integers(-(2**31), 2**31 - 1))


@st.composite
def push_body(draw: st.DrawFn) -> tuple[Message, str]:
    """A PushTelemetryRequest: odd ids, every compression id, and a Metrics field that is OTLP
    (compressed as declared or not), random bytes, empty, null, or larger than 1 MiB."""
    ctype = draw(_COMPRESSION)
    kind = draw(_KINDS)
    metrics: bytes | None
    if kind == "otlp":
        raw, what = draw(otlp())
        codec = draw(_CODECS[ctype]) if 0 <= ctype <= 4 else 0
        metrics, note = (
            compress(raw, codec),
            f"{what}, {('none', 'gzip', 'snappy', 'lz4', 'zstd')[codec]}",
        )
    elif kind == "bytes":
        metrics = draw(_RANDOM_METRICS)
        note = f"{len(metrics)} random bytes"
    elif kind == "large":
        metrics = b"\x5a" * draw(_LARGE)
        note = f"{len(metrics)} bytes"
    else:
        metrics, note = (b"", "empty") if kind == "empty" else (None, "null (non-nullable field)")
    if draw(st.booleans()):
        note = (
            f"after a GetTelemetrySubscriptions, with the id and SubscriptionId it returned; {note}"
        )
        return PushTelemetryRequest(
            terminating=draw(st.booleans()), compression_type=ctype, metrics=metrics
        ), SESSION_NOTE + note
    body = PushTelemetryRequest(
        client_instance_id=draw(_INSTANCE_IDS),
        subscription_id=draw(_SUBSCRIPTION_IDS),
        terminating=draw(st.booleans()),
        compression_type=ctype,
        metrics=metrics,
    )
    return body, f"Metrics: {note}"


SESSION_NOTE = "session: "
"""Marks a push the oracle sends after a Get, with the Get's id and SubscriptionId."""

# --- whole requests ----------------------------------------------------------------------------

_CLIENT_IDS = st.one_of(st.none(), text, st.just(""), st.just(("c", 32767)).map(_repeat))


@functools.cache
def _body(cls: type[Message], version: int) -> st.SearchStrategy[tuple[Message, str]]:
    if cls is PushTelemetryRequest:
        return push_body()
    return unusual(cls, version).map(lambda body: (cast(Message, body), ""))


def _assemble(
    cls: type[Message], version: int, drawn: tuple[Message, str], cid: int, client_id: str | None
) -> FuzzRequest | None:
    body, note = drawn
    if cls.api_key in STATE_CHANGING:
        alter: Any = body
        alter.validate_only = True  # the shared target's configs must not change
    assert cls.api_key is not None
    header = RequestHeader(
        request_api_key=cls.api_key,
        request_api_version=version,
        correlation_id=cid,
        client_id=client_id,
    )
    try:
        head = header.encode(request_header_version(cls.api_key, version))
        payload = head + body.encode(version, strict=False)
    except (EncodeError, UnicodeEncodeError, OverflowError):
        return None
    if len(payload) > MAX_PAYLOAD:
        return None
    shown = "null" if client_id is None else repr(client_id[:40] + "…" * (len(client_id) > 40))
    session = note.startswith(SESSION_NOTE)
    note = note.removeprefix(SESSION_NOTE)
    parts = [body.describe(version), f"header: correlation_id={cid} client_id={shown}", note]
    return FuzzRequest(
        "; ".join(p for p in parts if p), payload, session=session, body_offset=len(head)
    )


@functools.cache
def well_formed(group: str) -> st.SearchStrategy[FuzzRequest]:
    """Valid requests of the group's APIs, every version, unusual values.

    Built once per group: `mutations` draws from it inside every example, and building and
    validating the strategy tree costs more than drawing from it."""
    choices = []
    for cls in GROUPS[group]:
        for version in cls.versions():
            choices.append(
                st.builds(
                    _assemble,
                    st.just(cls),
                    st.just(version),
                    _body(cls, version),
                    _CORRELATION_IDS,
                    _CLIENT_IDS,
                )
            )
    return st.one_of(choices).filter(lambda r: r is not None)  # type: ignore[return-value]


FAMILY_MAX = 16
"""Requests in a family: one drawn request broken (`mutations.malformed_families`) or its body
re-sent (`well_formed_families`) up to this many ways."""
_CORRELATION_IDS = st.integers(-(2**31), 2**31 - 1)


@functools.cache
def _apis(group: str) -> st.SearchStrategy[tuple[type[Message], int]]:
    return st.sampled_from([(cls, v) for cls in GROUPS[group] for v in cls.versions()])


@st.composite
def _well_formed_family(draw: st.DrawFn, group: str) -> list[FuzzRequest]:
    cls, version = draw(_apis(group))
    drawn = draw(_body(cls, version))
    family = []
    for i in range(draw(st.integers(1, FAMILY_MAX))):
        at = version if i == 0 else draw(st.sampled_from(cls.versions()))
        request = _assemble(cls, at, drawn, draw(_CORRELATION_IDS), draw(_CLIENT_IDS))
        if request is not None:
            family.append(request)
    return family


def well_formed_families(group: str) -> st.SearchStrategy[list[FuzzRequest]]:
    """1 to `FAMILY_MAX` valid requests sharing one drawn body, each with its own header and
    version (the body encoded at every version it fits): drawing a body costs many times what
    encoding it again does (issue 16). The first is at the version the body was drawn for;
    shrinks to one request."""
    return _well_formed_family(group).filter(bool)


def response_expected(r: FuzzRequest) -> tuple[int, int] | None:
    """(api key, version) to read an answer as, when the codec can read one; None when the
    header names an api or version the codec does not know (a broker should close)."""
    claimed = r.claimed()
    if claimed is None:
        return None
    key, version = claimed
    response = RESPONSES.get(key)
    if response is None:
        return None
    if version in response.valid_versions or key == ApiVersionsRequest.api_key:
        return key, version
    return None


assemble = _assemble
"""A request from a body, its version and a header (None when it does not encode); public for
the coverage-guided fuzzer (`guided.py`), which re-encodes corpus entries."""
body_strategy = _body
"""Bodies of one API version as the well-formed cases draw them, with their note."""
