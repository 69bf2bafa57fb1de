"""Many fuzz requests per connection: pipelined, answered in order, judged one by one.

The request oracle (`oracle.py`) judges one request on one new connection, then a plain
ApiVersions on another (liveness): two connection set-ups and two round trips for each example,
which capped the request fuzzer at about a hundred examples a second (issue 16). Here one
Hypothesis example is a batch of requests (`examples`: families of related requests), and
`run_batch` judges each of them exactly as `oracle.exchange` would, spending fewer
connections:

- **Requests that keep the framing intact are pipelined** on a connection kept for the batch
  (its `lanes`: several such connections side by side, the requests dealt out among them, each
  lane judged as if it were alone). A broker answers a connection's requests in order (Kafka
  mutes a connection until its answer is sent), so the n-th answer belongs to the n-th
  request. Its deadline
  (`Patience.deadline`) runs from when it reached the head of the line; a missed one starts the
  same busy check as `oracle.exchange`, and a hang ends the batch.
- **A request that may make the target close goes in its turn** (`risky`: what the codec cannot
  read as a request it knows): written when nothing else is outstanding, and nothing after it
  until it is answered, so a close is the answer of that one request (ruling 11) even on a
  target that reads ahead and drops the answers it owed (a proxy in front of a broker may). A
  session push (`FuzzRequest.session`) goes in its turn too, after its GetTelemetrySubscriptions.
- **A close with several requests outstanding is unclear**: each of them is then judged alone.
- **After a close, liveness** is the first request on the new connection the rest of the batch
  goes on (a plain ApiVersions); only when that is not answered does the patient `oracle.alive`
  decide dead or slow.
- **Frames that break the framing go alone** (a wrong size prefix, a half-close, a frame too
  short to hold a request): each on its own connection through `oracle.exchange`, unchanged, a
  few at a time beside the pipeline.
- **Liveness after every batch** too (`oracle.alive`), so it is checked after every connection
  close and at least once per `Pipelining.depth` requests, and after any failure for the report.
  A one-request batch (what Hypothesis shrinks a finding to) is judged exactly as before.

`Pipelining(depth=1)` is the old way: each request alone on its own connection, liveness after
each one (`benchmarks/fuzz.py` measures both).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections import deque
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import strategies as st

from kconform.codecs.framing import FrameReader, decode_request
from kconform.codecs.wire import INT32, DecodeError
from kconform.engine.fuzz import oracle
from kconform.engine.fuzz.inputs import (
    FAMILY_MAX,
    FuzzRequest,
    response_expected,
    well_formed,
    well_formed_families,
)
from kconform.engine.fuzz.mutations import malformed, malformed_families
from kconform.engine.fuzz.wire import (
    PLAIN_API_VERSIONS,
    Outcome,
    answered_ok,
    judge_answer,
    session_prelude,
)
from kconform.errors import Inconclusive
from kconform.fixtures.targets.base import BrokerAddress
from kconform.fixtures.wirelog import WireLog

T = TypeVar("T")
ALONE_AT_ONCE = 4
"""Framing-breaking requests of a batch in flight at once, each on its own connection."""
RISKY_ABOVE = 64 * 1024
"""Bytes above which a request is taken as `risky` without decoding it."""
NESTED_MAX = 16
"""Elements of each level of `batches`' list of lists: large enough for their mean of six."""
MAX_STALLED = 3
"""New connections in a row on which no request was judged before the harness gives up."""
LANES = 4
"""Connections a batch's pipelined requests share out at once: a broker in a process of its own
answers a lone connection's requests one round trip at a time, and the harness would idle
through its latency (on Apache 4.1.0 the harness used half a core with one)."""


@dataclass(frozen=True)
class Pipelining:
    """How many requests one example holds (`depth`; 1 is the old way, one per connection), and
    on how many connections at once its pipelined requests go (`lanes`)."""

    depth: int = 64
    lanes: int = LANES

    def describe(self) -> str:
        if self.depth == 1:
            return "one request per connection, liveness after each"
        return (
            f"up to {self.depth} requests per example in families (one drawn request broken, "
            f"or its body re-sent with other headers and versions, up to {FAMILY_MAX} ways), "
            f"pipelined on {self.lanes} connections at once; liveness after every connection "
            f"close and after every example"
        )


def batches(
    requests: st.SearchStrategy[FuzzRequest], pipelining: Pipelining
) -> st.SearchStrategy[list[FuzzRequest]]:
    """Lists of 1 to `depth` requests that shrink by dropping requests.

    Hypothesis' lists average six elements whatever `max_size`; a list of such lists averages
    about thirty-six (cut at `depth`) and still shrinks one element at a time, down to a single
    request."""
    if pipelining.depth == 1:
        return requests.map(lambda r: [r])
    return _packed(st.lists(requests, min_size=1, max_size=NESTED_MAX), pipelining)


def examples(
    group: str, broken: bool, pipelining: Pipelining
) -> st.SearchStrategy[list[FuzzRequest]]:
    """What one example of a request case holds: one request (depth 1, the old way), or
    families of related requests (`mutations.malformed_families`,
    `inputs.well_formed_families`), as many as fit in `depth`, that shrink family by family and
    within a family down to a single request."""
    if pipelining.depth == 1:
        return batches(malformed(group) if broken else well_formed(group), pipelining)
    families = malformed_families(group) if broken else well_formed_families(group)
    return _packed(families, pipelining)


def _packed(
    units: st.SearchStrategy[list[FuzzRequest]], pipelining: Pipelining
) -> st.SearchStrategy[list[FuzzRequest]]:
    """Lists of `units` (lists of requests), flattened and cut at `depth`."""
    outer = st.lists(units, min_size=1, max_size=NESTED_MAX)
    return outer.map(functools.partial(_flatten, limit=pipelining.depth))


def _flatten(groups: list[list[FuzzRequest]], limit: int) -> list[FuzzRequest]:
    return [r for g in groups for r in g][:limit]


def alone(request: FuzzRequest) -> bool:
    """Must this request have a connection to itself? (It spoils the framing after it.)"""
    return request.eof or request.size is not None or not request.answerable


def risky(request: FuzzRequest) -> bool:
    """Might this request make a broker close the connection? (What the codec cannot read as
    a request it knows.) Only scheduling depends on it: such a request is never pipelined
    behind or ahead of another, so a close is always the answer of the one request open."""
    if len(request.payload) > RISKY_ABOVE:
        return True  # not worth decoding twice: its own processing outweighs a round trip
    try:
        frame = decode_request(request.payload)
    except DecodeError:
        return True
    return frame.body is None


@dataclass
class Batch:
    """What one batch got: each request's outcome by position (those judged before the batch
    stopped), the request a failure is blamed on, and the liveness check that goes with it."""

    outcomes: dict[int, Outcome] = field(default_factory=dict)
    failed: int | None = None
    liveness: oracle.Liveness | None = None
    closes: int = 0
    liveness_checks: int = 0
    closed_at: int = -1  # the last request whose connection the target closed

    def fail(self, index: int) -> None:
        """Blame `index` (the earliest failing request of the batch is the one reported)."""
        if self.failed is None or index < self.failed:
            self.failed = index


async def run_batch(
    address: BrokerAddress,
    requests: Sequence[FuzzRequest],
    patience: oracle.Patience,
    log: WireLog,
    label: str,
    lanes: int = 1,
) -> Batch:
    """Judge every request of the batch (see the module docstring); the pipelined ones dealt
    out to `lanes` connections that run side by side, each as if it were the only one."""
    return await _Run(address, patience, log, label).batch_of(requests, lanes)


class _Run:
    """One batch's I/O against one broker."""

    def __init__(
        self, address: BrokerAddress, patience: oracle.Patience, log: WireLog, label: str
    ) -> None:
        self.address, self.patience, self.log, self.label = address, patience, log, label
        self.batch = Batch()

    async def batch_of(self, requests: Sequence[FuzzRequest], lanes: int = 1) -> Batch:
        batch = self.batch
        if len(requests) == 1:  # the old way, exactly
            await self._alone(0, requests[0])
            await self._check_alive(0)
            return batch
        piped = [(i, r) for i, r in enumerate(requests) if not alone(r)]
        solo = [(i, r) for i, r in enumerate(requests) if alone(r)]
        gate = asyncio.Semaphore(ALONE_AT_ONCE)

        async def gated(index: int, request: FuzzRequest) -> None:
            async with gate:
                if batch.failed is None:
                    await self._alone(index, request)

        jobs = [asyncio.ensure_future(gated(i, r)) for i, r in solo]
        try:
            if piped:
                lanes = max(1, lanes)
                dealt = [deque(piped[lane::lanes]) for lane in range(lanes)]
                await asyncio.gather(*(self._pipeline(share) for share in dealt if share))
            await asyncio.gather(*jobs)
        finally:
            for job in jobs:
                job.cancel()
            await asyncio.gather(*jobs, return_exceptions=True)
        if batch.liveness is None or batch.liveness.alive:
            # Whom a dead target is blamed on when no request failed: the last one sent alone
            # (its connection closed last), else the last one pipelined. Shrinking settles it:
            # a finding's size is its whole batch's, so the one-request finding wins.
            last = solo[-1][0] if solo else piped[-1][0]
            await self._check_alive(batch.failed if batch.failed is not None else last)
        return batch

    async def _alone(self, index: int, request: FuzzRequest) -> None:
        """`oracle.exchange`: the request on its own new connection."""
        outcome = await oracle.exchange(self.address, request, self.patience, self.log, self.label)
        self.batch.outcomes[index] = outcome
        self.batch.closes += 1
        if outcome.problem is not None:
            self.batch.fail(index)

    async def _check_alive(self, blame: int) -> None:
        """`oracle.alive`; a dead target is blamed on `blame` unless a request already failed."""
        batch = self.batch
        liveness = await oracle.alive(self.address, self.patience, self.log)
        batch.liveness_checks += 1
        if not liveness.alive:
            if batch.failed is None:
                batch.failed = blame
            batch.liveness = liveness
        elif batch.liveness is None or batch.liveness.alive:
            batch.liveness = liveness

    async def _pipeline(self, left: deque[tuple[int, FuzzRequest]]) -> None:
        """Send the requests on one connection, a new one after each close (liveness first)."""
        batch, address = self.batch, self.address
        after_close, stalled = False, 0
        while left and batch.failed is None:
            if stalled > MAX_STALLED:
                raise Inconclusive(f"{stalled} new connections in a row judged no request")
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(address.host, address.port), self.patience.base
                )
            except (OSError, TimeoutError) as exc:
                if after_close:  # the close before: did the target die, or is it slow?
                    await self._check_alive(batch.closed_at)
                    if batch.failed is not None:
                        return
                index, request = left[0]
                batch.outcomes[index] = Outcome(
                    request.readable_api(),
                    "unreachable",
                    detail=f"cannot connect to {address}: {exc}",
                )
                batch.fail(index)
                return
            before = len(left)
            try:
                await self._connection(left, after_close, reader, writer)
            finally:
                stalled = stalled + 1 if len(left) == before else 0
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
            after_close = True

    async def _connection(
        self,
        left: deque[tuple[int, FuzzRequest]],
        after_close: bool,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """Pipeline what is `left` on one connection until the target closes it or each is
        judged: a `risky` request only when nothing is outstanding, and nothing after it until
        it is answered. After a close, the first request is the liveness ApiVersions."""
        batch = self.batch
        frames, answers = FrameReader(), deque[bytes]()
        liveness_due, sent = after_close, 0  # sent: left[:sent] are written, not yet judged
        if liveness_due:
            self._write(writer, -1, PLAIN_API_VERSIONS)
        head_since = time.monotonic()  # the head of the line's clock starts at its turn
        while True:
            while sent < len(left):
                index, request = left[sent]
                in_turn = request.session or risky(request)
                if in_turn and (sent or liveness_due):
                    break
                if request.session:  # its Get first, then the push with the Get's ids
                    since = time.monotonic()
                    getting = session_prelude(reader, writer, frames, self.log, self.label)
                    prelude = await self._answer(index, request, getting, since)
                    if prelude is None:
                        return
                    if isinstance(prelude, Outcome):  # what the Get got is the push's outcome
                        left.popleft()
                        deadline = self.patience.deadline(len(request.frame()))
                        if self._judged(index, prelude.timed(time.monotonic() - since, deadline)):
                            return
                        continue
                    request = prelude.with_ids(request)
                    left[0] = index, request
                self._write(writer, index, request)
                sent += 1
                if in_turn:
                    break
            if not sent and not liveness_due:
                return
            index, request = (-1, PLAIN_API_VERSIONS) if liveness_due else left[0]
            got: bytes | str | None
            if answers:  # already read with an earlier one: no task, no timer
                got = answers.popleft()
            else:
                reading = _next(reader, frames, answers)
                got = await self._answer(index, request, reading, head_since)
            if got is None:
                return
            deadline = self.patience.deadline(len(request.frame()))
            seconds, head_since = time.monotonic() - head_since, time.monotonic()
            outcome = _outcome(got, request, self.log, self.label).timed(seconds, deadline)
            if index < 0:
                liveness_due = False
                if answered_ok(outcome):
                    batch.liveness_checks += 1
                    continue
                await self._check_alive(batch.closed_at)  # the patient check decides
                await self._after_unclear_close(left, sent)
                return
            if outcome.kind == "closed" and sent > 1:
                await self._after_unclear_close(left, sent)
                return
            left.popleft()
            sent -= 1
            if self._judged(index, outcome):
                return

    def _judged(self, index: int, outcome: Outcome) -> bool:
        """Record a request's outcome; True when this connection is done (failed or closed)."""
        batch = self.batch
        batch.outcomes[index] = outcome
        if outcome.problem is not None:
            batch.fail(index)
            return True
        if outcome.kind == "closed":
            batch.closes += 1
            batch.closed_at = index
            return True
        return False

    def _write(self, writer: asyncio.StreamWriter, index: int, request: FuzzRequest) -> None:
        self.log.record(
            self.label if index >= 0 else "liveness",
            "client->broker",
            request.payload,
            summary=request.description[:300],
            note="fuzz, pipelined" if index >= 0 else "liveness, first on a new connection",
        )
        writer.write(request.frame())

    async def _after_unclear_close(self, left: deque[tuple[int, FuzzRequest]], sent: int) -> None:
        """The target closed a connection with several requests outstanding: which one it
        closed on is unclear (a target may read ahead), so each goes alone (`oracle.exchange`)."""
        if self.batch.failed is not None:
            return
        unclear = [left.popleft() for _ in range(sent)]
        for index, request in unclear:
            await self._alone(index, request)
            if self.batch.failed is not None:
                return
        self.batch.closed_at = unclear[-1][0]

    async def _answer(
        self, index: int, request: FuzzRequest, reading: Coroutine[Any, Any, T], since: float
    ) -> T | None:
        """The head request's answer; None when it got none in time (judged here: the same
        busy check and hang as `oracle.exchange`, or for the liveness request `oracle.alive`)."""
        patience = self.patience
        deadline = patience.deadline(len(request.frame()))
        task = asyncio.ensure_future(reading)
        try:
            await asyncio.wait({task}, timeout=deadline)
            if task.done():
                return task.result()
            if index < 0:
                await self._check_alive(self.batch.closed_at)
                return None
            busy = await oracle.wait_out(self.address, patience, task, self.log)
            if task.done():
                return task.result()
            waited = time.monotonic() - since
            self.batch.outcomes[index] = oracle.hang(request, waited, deadline, busy, ", pipelined")
            self.batch.fail(index)
            return None
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


async def _next(
    reader: asyncio.StreamReader, frames: FrameReader, answers: deque[bytes]
) -> bytes | str:
    """The next answer's payload, or why there is none ("closed: ..." / "undecodable: ...")."""
    while not answers:
        try:
            data = await reader.read(65536)
        except (ConnectionError, OSError) as exc:
            return f"closed: connection reset: {exc}"
        if not data:
            return "closed: closed without an answer"
        try:
            answers.extend(frames.feed(data))
        except DecodeError as exc:
            return f"undecodable: unreadable response frame: {exc}"
    return answers.popleft()


def _outcome(got: bytes | str, request: FuzzRequest, log: WireLog, label: str) -> Outcome:
    api = request.readable_api()
    if isinstance(got, str):
        kind, _, detail = got.partition(": ")
        if kind == "closed":
            log.record(label, "broker->client", b"", summary="connection closed", note="closed")
        return Outcome(api, kind, detail=detail)
    cid = INT32.unpack_from(request.payload, 4)[0] if len(request.payload) >= 8 else None
    return judge_answer(got, response_expected(request), cid, api, log, label)
