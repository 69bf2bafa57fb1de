"""What one client did on the wire, read back from the reference target's proxy log.

The proxy records every frame of every connection with a monotonic timestamp. A client case
sets a unique `client.id`, so the client's connections are the ones whose requests carry it; each
request is paired with the response the client actually received (after any injected change:
the proxy logs the original and then the rewritten frame, and the last one is what left). The
client ids of the window's other requests are counted (`Traffic.others`), to say what a client
that ignores its `client.id` sent instead. Pure bookkeeping: no sockets, no waiting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from kconform.codecs.compression import CompressionError, decompress
from kconform.codecs.framing import decode_request, decode_request_header, decode_response
from kconform.codecs.schema import Message
from kconform.codecs.wire import DecodeError
from kconform.engine.check import present
from kconform.errors import HarnessDefect
from kconform.fixtures.wirelog import WireEntry

METADATA, API_VERSIONS, GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY = 3, 18, 71, 72
TELEMETRY = (GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY)
EVIDENCE_KEYS = (API_VERSIONS, *TELEMETRY)
"""The APIs a case page's wire log shows unless the case asks for more."""
NAMES = {METADATA: "Metadata", API_VERSIONS: "ApiVersions", 71: "Get", 72: "Push"}
MAX_DECOMPRESSED = 64 * 1024 * 1024
MAX_ENTRIES = 50_000  # a request storm is judged by its count, not decoded frame by frame
_BROKER = re.compile(r"->broker (-?\d+)")
UNANSWERED = ("closed", "dropped")
"""Notes of the proxy's entries for a request it left unanswered (an injected close or drop)."""


@dataclass
class Exchange:
    """One request the client sent and the response it got (None: no response seen)."""

    connection: str
    api_key: int
    api_version: int
    correlation_id: int
    sent: float  # monotonic
    request: Message | None
    answered: float | None = None
    response: Message | None = None

    @property
    def broker(self) -> int | None:
        found = _BROKER.search(self.connection)
        return int(found.group(1)) if found else None

    @property
    def error_code(self) -> int | None:
        return None if self.response is None else int(self.response.error_code)

    @property
    def terminating(self) -> bool:
        return bool(self.api_key == PUSH_TELEMETRY and self.request and self.request.terminating)

    def metrics_payload(self) -> bytes:
        """A push's Metrics, decompressed per its CompressionType (CompressionError if not)."""
        if self.request is None or self.api_key != PUSH_TELEMETRY:
            raise HarnessDefect("not a decoded PushTelemetry request")
        raw = bytes(self.request.metrics or b"")
        kind = int(self.request.compression_type)
        return raw if kind == 0 else decompress(raw, kind, max_size=MAX_DECOMPRESSED)

    def __str__(self) -> str:
        name = NAMES.get(self.api_key, f"api {self.api_key}")
        return f"{name} v{self.api_version} on {self.connection.split()[0]} at {self.sent:.3f}"


@dataclass
class Traffic:
    """The client's exchanges in the order sent, plus when each of its connections closed."""

    client_id: str
    exchanges: list[Exchange]
    closed: dict[str, float]  # connection -> first close record
    entries: list[WireEntry]  # the raw log of the client's connections (evidence)
    truncated: int = 0  # requests beyond MAX_ENTRIES, counted but not decoded
    # client id -> requests, on the proxy's other connections in the same window: when nothing
    # carried `client_id`, these say what the client sent instead (a client that ignores it)
    others: dict[str, int] = field(default_factory=dict)

    def seen_instead(self) -> str:
        """The other client ids seen in the window, busiest first, for a message."""
        if not self.others:
            return "no request at all reached the proxy"
        ranked = sorted(self.others.items(), key=lambda item: (-item[1], item[0]))
        shown = ", ".join(f"{cid!r} ({n} request{'' if n == 1 else 's'})" for cid, n in ranked[:8])
        return shown + (f" and {len(ranked) - 8} more" if len(ranked) > 8 else "")

    def of(self, *api_keys: int) -> list[Exchange]:
        return [e for e in self.exchanges if e.api_key in api_keys]

    @property
    def gets(self) -> list[Exchange]:
        return self.of(GET_TELEMETRY_SUBSCRIPTIONS)

    @property
    def pushes(self) -> list[Exchange]:
        return self.of(PUSH_TELEMETRY)

    @property
    def telemetry(self) -> list[Exchange]:
        return self.of(*TELEMETRY)

    def connections(self) -> list[str]:
        """The client's connections, in the order they sent their first request."""
        return list(dict.fromkeys(e.connection for e in self.exchanges))

    def versions(self, api_key: int) -> list[int]:
        """The versions of `api_key` the client sent, for a message."""
        return sorted({e.api_version for e in self.of(api_key)})

    def on(self, connection: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.connection == connection]

    def after(self, when: float, *api_keys: int) -> list[Exchange]:
        return [e for e in self.of(*api_keys) if e.sent > when]


def collect(entries: Sequence[WireEntry], client_id: str) -> Traffic:
    """The traffic of the connections on which `client_id` sent at least one request."""
    requests: list[tuple[WireEntry, Message | None, str | None]] = []
    responses: dict[tuple[str, int], WireEntry] = {}
    closed: dict[str, float] = {}
    truncated = 0
    for entry in entries:
        if entry.direction == "client->broker" and entry.raw:
            if len(requests) >= MAX_ENTRIES:
                truncated += 1
                continue
            try:
                frame = decode_request(entry.raw, strict=False)
            except DecodeError:
                continue
            requests.append((entry, frame.body, frame.header.client_id))
        elif entry.raw and entry.correlation_id is not None:
            responses[entry.connection, entry.correlation_id] = entry  # the last one wins
        else:
            if entry.correlation_id is not None and entry.note in UNANSWERED:
                # the answer logged before it never left: the client got none
                responses.pop((entry.connection, entry.correlation_id), None)
            if "closed" in entry.note:
                closed.setdefault(entry.connection, entry.monotonic)
    mine = {e.connection for e, _, cid in requests if cid == client_id}
    others: dict[str, int] = {}
    for entry, _, cid in requests:
        if entry.connection not in mine:
            name = "(null)" if cid is None else cid
            others[name] = others.get(name, 0) + 1
    exchanges = []
    for entry, body, _ in requests:
        if entry.connection not in mine:
            continue
        exchange = Exchange(
            entry.connection,
            present(entry.api_key, "the api key of a request the proxy decoded"),
            present(entry.api_version, "the version of a request the proxy decoded"),
            entry.correlation_id or 0,
            entry.monotonic,
            body,
        )
        answer = responses.get((entry.connection, exchange.correlation_id))
        if answer is not None and answer.monotonic >= entry.monotonic:
            exchange.answered = answer.monotonic
            exchange.response = _response(answer, exchange)
        exchanges.append(exchange)
    own = [e for e in entries if e.connection in mine]
    closes = {c: t for c, t in closed.items() if c in mine}
    return Traffic(client_id, exchanges, closes, own, truncated, others)


def first_request_at(entries: Iterable[WireEntry], client_id: str) -> float | None:
    """When the first request carrying `client_id` reached the proxy (monotonic), reading only
    request headers; None if none did."""
    return next((entry.monotonic for entry in _requests_of(entries, client_id)), None)


def connections_of(entries: Iterable[WireEntry], client_id: str) -> set[str]:
    """The connections on which a request carrying `client_id` reached the proxy, reading only
    request headers (cheap enough to ask while the client runs, as `run_client(until=...)` does)."""
    return {entry.connection for entry in _requests_of(entries, client_id)}


def _requests_of(entries: Iterable[WireEntry], client_id: str) -> Iterator[WireEntry]:
    """The requests carrying `client_id`, in order, reading only their headers."""
    for entry in entries:
        if entry.direction != "client->broker" or not entry.raw:
            continue
        try:
            header = decode_request_header(entry.raw)
        except DecodeError:
            continue
        if header.client_id == client_id:
            yield entry


def _response(entry: WireEntry, exchange: Exchange) -> Message | None:
    if exchange.api_key not in (METADATA, API_VERSIONS, *TELEMETRY):
        return None
    try:
        _, body, _ = decode_response(
            entry.raw, exchange.api_key, exchange.api_version, strict=False, allow_trailing=True
        )
    except DecodeError:
        return None
    return body


def evidence(traffic: Traffic, api_keys: Iterable[int] = EVIDENCE_KEYS) -> list[WireEntry]:
    """The log entries worth showing: the given APIs' frames and connection closes."""
    keys = set(api_keys)
    return [e for e in traffic.entries if e.api_key in keys or "closed" in e.note]


def payload_or_error(exchange: Exchange) -> tuple[bytes | None, str | None]:
    """(decompressed Metrics, None) or (None, why it could not be read)."""
    try:
        return exchange.metrics_payload(), None
    except CompressionError as exc:
        kind = exchange.request.compression_type if exchange.request is not None else "?"
        return None, f"{exchange}: CompressionType {kind}: {exc}"
