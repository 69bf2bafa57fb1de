"""The request fuzzer's oracle: what a target may do with any request, and what it may not.

A target answers a request with a response the codec decodes, whose every ErrorCode is one Kafka
defines, or it closes the connection; it never leaves a request hanging; and afterwards it still
answers a plain ApiVersions on a new connection (liveness). Ruling 11 (a malformed request is
answered or its one connection closed; no crash, other and new connections still served) and
ruling 12 ("the broker staying healthy and answering later requests is MUST") are the reasons;
Kafka's SocketServer closing a connection whose request it cannot parse is why closing is a fine
answer to a malformed request.

A real broker is sometimes slow and seldom dead, so the oracle tells the two apart (`Patience`):

- **No answer is owed to a frame that carries no request.** A frame whose size prefix promises
  more bytes than were sent, or one too short to hold api key, version and correlation id, has
  nothing a broker could answer. The oracle half-closes its side and waits for the close; a
  broker that keeps the connection open instead is not wrong. Liveness then judges it.
- **A request's deadline grows with its size** (`Patience.deadline`): Apache parses a request on
  its network thread, and an AlterConfigs with thousands of resources can take seconds there.
- **A missed deadline starts a busy check, not a verdict.** The oracle opens a few new
  connections (more than Kafka's default three network threads) and sends ApiVersions on each,
  still listening for the late answer. While any of them waits, the broker is busy (one of its
  network threads is stuck on something) and the clock is extended up to `busy_limit`. Once
  all are answered the broker is idle: the request gets `grace` more seconds, then it is a hang.
  A late answer is `slow` (acceptable, reported with its timing); a hang is a `fail` reported
  with the timings that justify it.
- **Liveness is patient the same way**: the ApiVersions may wait behind a stuck network thread;
  the broker is dead only when a new connection is refused or stays unanswered past the limit.

The exchange itself (one raw connection, the answer decoded and judged) is in `wire.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

from kconform.engine.fuzz.inputs import FuzzRequest
from kconform.engine.fuzz.wire import (
    ACCEPTABLE,
    DEFINED_ERRORS,
    PLAIN_API_VERSIONS,
    Outcome,
    answered_ok,
    error_codes,
    once,
)
from kconform.fixtures.targets.base import BrokerAddress
from kconform.fixtures.wirelog import WireLog

__all__ = [
    "ACCEPTABLE",
    "DEFINED_ERRORS",
    "PLAIN_API_VERSIONS",
    "Busy",
    "Liveness",
    "Outcome",
    "Patience",
    "alive",
    "error_codes",
    "exchange",
    "hang",
    "wait_out",
    "wait_while_busy",
]

BUSY_THRESHOLD = 1.0
"""Seconds within which a broker with no stuck network thread answers a new connection."""


@dataclass(frozen=True)
class Patience:
    """How long the oracle waits, in seconds (see the module docstring).

    `base` is any request's deadline and the liveness check's first wait; `seconds_per_mib`
    extends the deadline with the frame's size, up to `cap`; `busy_limit` bounds a busy check;
    `grace` is what a request still gets once its broker is idle; `probes` is how many new
    connections a busy check opens (Kafka assigns them to its network threads in turn).
    """

    base: float = 3.0
    seconds_per_mib: float = 16.0
    cap: float = 30.0
    grace: float = 1.0
    busy_limit: float = 60.0
    probes: int = 4

    def deadline(self, frame_bytes: int) -> float:
        """The request's own deadline: `base`, plus 1 s per 64 KiB by default, at most `cap`."""
        return min(self.cap, self.base + self.seconds_per_mib * frame_bytes / (1 << 20))

    def longest(self, frame_bytes: int) -> float:
        """The most one exchange (or liveness check) can take: what the bridge waits for."""
        return self.deadline(frame_bytes) + self.busy_limit + self.grace + self.base


@dataclass(frozen=True)
class Liveness:
    """Whether the target answered ApiVersions on new connections, and how long it took."""

    alive: bool
    seconds: float
    detail: str = ""

    @property
    def problem(self) -> str | None:
        return None if self.alive else self.detail


@dataclass(frozen=True)
class Busy:
    """A busy check's result: did the watched exchange finish, and what the probes showed."""

    watched_done: bool
    answered: int  # probes answered with ApiVersions ErrorCode 0
    opened: int
    failures: tuple[str, ...]  # probes refused, closed or answered wrongly
    seconds: float

    @property
    def idle(self) -> bool:
        """Every probe answered: no network thread of the broker is stuck."""
        return self.answered == self.opened

    def describe(self) -> str:
        if self.failures:
            return (
                f"{len(self.failures)} of {self.opened} new connections failed ({self.failures[0]})"
            )
        if self.idle and self.seconds < BUSY_THRESHOLD:
            return (
                f"the broker was not busy: {self.opened} new connections were answered "
                f"within {self.seconds:.2f}s"
            )
        if self.idle:
            return (
                f"the broker was busy for {self.seconds:.1f}s (new connections waited that "
                f"long), then answered all {self.opened}, but not this request"
            )
        return (
            f"the broker was still busy: {self.opened - self.answered} of {self.opened} new "
            f"connections unanswered after {self.seconds:.1f}s"
        )


async def exchange(
    address: BrokerAddress, request: FuzzRequest, patience: Patience, log: WireLog, label: str
) -> Outcome:
    """Send `request` on a new connection and judge what came back (see the module)."""
    deadline = patience.deadline(len(request.frame()))
    started = time.monotonic()
    longest = patience.longest(len(request.frame()))
    task = asyncio.ensure_future(once(address, request, longest, log, label))
    try:
        await asyncio.wait({task}, timeout=deadline)
        if task.done():
            return task.result().timed(time.monotonic() - started, deadline)
        api = request.readable_api()
        if not request.answerable:
            await _cancel(task)
            waited = time.monotonic() - started
            return Outcome(
                api,
                "unanswered",
                detail=f"no answer or close within {deadline:.1f}s, and none is owed: "
                f"{request.why_unanswerable()}; the fuzzer closed the connection",
                seconds=waited,
                deadline=deadline,
            )
        busy = await wait_out(address, patience, task, log)
        waited = time.monotonic() - started
        if task.done():
            return task.result().timed(waited, deadline)
        await _cancel(task)
        return hang(request, waited, deadline, busy)
    finally:
        await _cancel(task)


async def wait_out(
    address: BrokerAddress, patience: Patience, watched: asyncio.Future[Any], log: WireLog
) -> Busy:
    """Past its deadline, give `watched` as long as the broker is visibly busy (the busy
    check), then `grace` more once the broker is idle."""
    busy = await wait_while_busy(address, patience, watched, log)
    if not watched.done() and busy.idle:
        await asyncio.wait({watched}, timeout=patience.grace)
    return busy


def hang(
    request: FuzzRequest, waited: float, deadline: float, busy: Busy, how: str = ""
) -> Outcome:
    """The outcome of a request that got neither an answer nor a close in time."""
    return Outcome(
        request.readable_api(),
        "hang",
        detail=f"no answer (or close) after {waited:.1f}s (deadline {deadline:.1f}s for "
        f"{len(request.frame())} bytes{how}); {busy.describe()}",
        seconds=waited,
        deadline=deadline,
    )


async def wait_while_busy(
    address: BrokerAddress, patience: Patience, watched: asyncio.Future[Any], log: WireLog
) -> Busy:
    """Probe the broker on new connections until `watched` finishes, every probe is answered,
    or `busy_limit` passes (see the module docstring)."""
    started = time.monotonic()
    probes = [
        asyncio.ensure_future(once(address, PLAIN_API_VERSIONS, patience.busy_limit, log, "busy"))
        for _ in range(patience.probes)
    ]
    try:
        pending: set[asyncio.Future[Any]] = {watched, *probes}
        limit = started + patience.busy_limit
        while not watched.done() and not all(p.done() for p in probes):
            left = limit - time.monotonic()
            if left <= 0:
                break
            _, pending = await asyncio.wait(
                pending, timeout=left, return_when=asyncio.FIRST_COMPLETED
            )
        finished = [p.result() for p in probes if p.done()]
        failures = tuple(f"{o.kind}: {o.detail}"[:160] for o in finished if not answered_ok(o))
        return Busy(
            watched.done(),
            sum(answered_ok(o) for o in finished),
            len(probes),
            failures,
            time.monotonic() - started,
        )
    finally:
        for probe in probes:
            await _cancel(probe)


async def alive(address: BrokerAddress, patience: Patience, log: WireLog) -> Liveness:
    """Does the target answer a plain ApiVersions on a new connection? Patiently: a first wait
    of `base`, then a busy check; dead only when refused, closed or unanswered past the limit."""
    started = time.monotonic()
    first = asyncio.ensure_future(
        once(address, PLAIN_API_VERSIONS, patience.longest(0), log, "liveness")
    )
    try:
        await asyncio.wait({first}, timeout=patience.base)
        if not first.done():
            busy = await wait_out(address, patience, first, log)
            if not first.done():
                waited = time.monotonic() - started
                return Liveness(
                    False,
                    waited,
                    f"ApiVersions v0 on a new connection got no answer in {waited:.1f}s "
                    f"({busy.describe()})",
                )
        waited = time.monotonic() - started
        outcome = first.result()
        if answered_ok(outcome):
            slow = f"slow: answered after {waited:.1f}s" if waited > patience.base else ""
            return Liveness(True, waited, slow)
        return Liveness(
            False,
            waited,
            f"ApiVersions v0 on a new connection got {outcome.kind}: {outcome.detail}",
        )
    finally:
        await _cancel(first)


async def _cancel(task: asyncio.Future[Outcome]) -> None:
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
