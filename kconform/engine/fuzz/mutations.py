"""Malformed requests: a well-formed request from `inputs.py` with one thing broken.

Bits flipped, the frame truncated, a wrong size prefix (then a half-close: no broker could finish
reading it), the header claiming another version or api key, garbage in the body's tag section,
bytes after the body. Each mutation says what it did in the request's description, so the bug
report reads "PushTelemetryRequest v0 {...} | truncated to 7 of 52 bytes".

A mutation must not turn a ValidateOnly config request into a real change of the shared target
(`changes_state` decodes every frame a broker could read from the bytes and discards those).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from kconform.codecs.framing import decode_request
from kconform.codecs.messages import REQUESTS
from kconform.codecs.wire import INT16, DecodeError
from kconform.engine.fuzz.inputs import (
    FAMILY_MAX,
    GROUPS,
    STATE_CHANGING,
    FuzzRequest,
    well_formed,
)

UNASSIGNED_KEYS = (-1, 1000, 32767)
"""Api keys no Kafka release assigns (a broker closes the connection, §B.4)."""
_STATE_CHANGING_KEYS = frozenset(INT16.pack(k) for k in STATE_CHANGING if k is not None)

Mutation = Callable[[st.DrawFn, FuzzRequest], FuzzRequest | None]


def _flip(draw: st.DrawFn, r: FuzzRequest) -> FuzzRequest:
    bits = draw(
        st.lists(st.integers(0, 8 * len(r.payload) - 1), min_size=1, max_size=3, unique=True)
    )
    data = bytearray(r.payload)
    for bit in bits:
        data[bit // 8] ^= 1 << (bit % 8)
    where = ", ".join(f"byte {b // 8} bit {b % 8}" for b in sorted(bits))
    return FuzzRequest(f"{r.description} | flipped {where}", bytes(data))


def _truncate(draw: st.DrawFn, r: FuzzRequest) -> FuzzRequest:
    cut = draw(st.integers(0, len(r.payload) - 1))
    return FuzzRequest(
        f"{r.description} | truncated to {cut} of {len(r.payload)} bytes", r.payload[:cut]
    )


def _size_prefix(draw: st.DrawFn, r: FuzzRequest) -> FuzzRequest:
    n = len(r.payload)
    # A frame that cannot be completed: the sender half-closes, as a client that gives up would.
    size = draw(st.sampled_from([0, -1, -(2**31), 2**31 - 1, n - 1, n + 1, n + 8, 2 * n, 1]))
    return FuzzRequest(
        f"{r.description} | size prefix {size} for {n} bytes", r.payload, size=size, eof=True
    )


def _version(draw: st.DrawFn, r: FuzzRequest) -> FuzzRequest | None:
    claimed = r.claimed()
    assert claimed is not None
    cls = REQUESTS[claimed[0]]
    others = [v for v in cls.versions() if v != claimed[1]]
    version = draw(st.sampled_from([*others, -1, cls.versions()[-1] + 1, 32767]))
    data = r.payload[:2] + version.to_bytes(2, "big", signed=True) + r.payload[4:]
    return FuzzRequest(f"{r.description} | header claims v{version}", data)


_KEYS = sorted({c.api_key for g in GROUPS.values() for c in g if c.api_key is not None})
_API_KEYS = st.sampled_from([*_KEYS, *UNASSIGNED_KEYS])
_HUGE_COUNT, _SHORT_TAG = b"\xff\xff\xff\xff\x0f", b"\x01\x05\x64\x00"
_GARBAGE = st.one_of(st.binary(min_size=1, max_size=12), st.sampled_from([_HUGE_COUNT, _SHORT_TAG]))
_JUNK = st.binary(min_size=1, max_size=16)


def _api_key(draw: st.DrawFn, r: FuzzRequest) -> FuzzRequest:
    key = draw(_API_KEYS)
    data = key.to_bytes(2, "big", signed=True) + r.payload[2:]
    return FuzzRequest(f"{r.description} | header claims api key {key}", data)


def _tags(draw: st.DrawFn, r: FuzzRequest) -> FuzzRequest | None:
    claimed = r.claimed()
    assert claimed is not None
    if not REQUESTS[claimed[0]].is_flexible(claimed[1]) or not r.payload.endswith(b"\x00"):
        return None  # no tag section to spoil (or it already holds unknown tags)
    garbage = draw(_GARBAGE)
    return FuzzRequest(
        f"{r.description} | body tag section replaced by {garbage.hex()}", r.payload[:-1] + garbage
    )


def _trailing(draw: st.DrawFn, r: FuzzRequest) -> FuzzRequest:
    junk = draw(_JUNK)
    return FuzzRequest(
        f"{r.description} | {len(junk)} bytes after the body: {junk.hex()}", r.payload + junk
    )


MUTATIONS: dict[str, Mutation] = {
    "bit_flips": _flip,
    "truncation": _truncate,
    "size_prefix": _size_prefix,
    "wrong_version": _version,
    "wrong_api_key": _api_key,
    "garbage_tags": _tags,
    "trailing_bytes": _trailing,
}


def changes_state(r: FuzzRequest) -> bool:
    """Would a broker read this as an AlterConfigs/IncrementalAlterConfigs that really alters?

    Checked for every frame a broker could cut from the bytes (the whole payload, and the first
    `size` bytes when the size prefix is short), with the codec's lenient decoder."""
    candidates = [r.payload]
    if r.size is not None and 4 <= r.size < len(r.payload):
        candidates.append(r.payload[: r.size])
    for payload in candidates:
        if payload[:2] not in _STATE_CHANGING_KEYS:
            continue  # the header's first two bytes name the api: no need to decode the rest
        try:
            frame = decode_request(payload, strict=False)
        except DecodeError:
            continue
        body = frame.body
        if frame.api_key in STATE_CHANGING and body is not None and not body.validate_only:
            return True
    return False


def _mutated(
    draw: st.DrawFn, base: FuzzRequest, kinds: st.SearchStrategy[str]
) -> FuzzRequest | None:
    broken = MUTATIONS[draw(kinds)](draw, base)
    if broken is None or changes_state(broken):
        return None
    return broken


@st.composite
def _malformed(draw: st.DrawFn, group: str, kinds: st.SearchStrategy[str]) -> FuzzRequest | None:
    return _mutated(draw, draw(well_formed(group)), kinds)


def malformed(
    group: str, kinds: Sequence[str] = tuple(MUTATIONS)
) -> st.SearchStrategy[FuzzRequest]:
    """Requests of the group broken in one way (see the module docstring)."""
    drawn = _malformed(group, st.sampled_from(list(kinds)))
    return drawn.filter(lambda r: r is not None)  # type: ignore[return-value]


@st.composite
def _family(draw: st.DrawFn, group: str, kinds: st.SearchStrategy[str]) -> list[FuzzRequest]:
    base = draw(well_formed(group))
    count = draw(st.integers(1, FAMILY_MAX))
    family = [_mutated(draw, base, kinds) for _ in range(count)]
    return [r for r in family if r is not None]


def malformed_families(
    group: str, kinds: Sequence[str] = tuple(MUTATIONS)
) -> st.SearchStrategy[list[FuzzRequest]]:
    """1 to `FAMILY_MAX` requests, each one well-formed request of the group broken in its own
    way: drawing the well-formed request costs twenty times what breaking it does (issue 16),
    so the pipelined fuzzer breaks each one many times. Shrinks to one broken request."""
    return _family(group, st.sampled_from(list(kinds))).filter(bool)
