"""What the fleet saw, turned into per-interval samples and the facts the SLOs judge. Pure.

`Ledger.feed` takes the clients' `Event`s (any order within a batch, any worker), `fault`
records what the schedule did to the target, `close_bucket` hands out one sample row per
interval. Three things are followed per client:

- **Accepted pushes**, for lock-out: a live client whose telemetry is on must have a push
  accepted at least every `lockout_intervals` x PushIntervalMs, counted from its start, its last
  accepted push, the end of the last broker restart or its last move to another broker,
  whichever is latest. Locked out means stuck, not slow (slow recovery is the recovery SLO's):
  the default, 6, is above the longest gap a KIP-following client sees on a broker that
  throttles the push after the Get that follows a 117 (Apache up to 4.1, §C.2 step 3): an
  interval to the push answered 117, up to 1.5 to the push answered 89, one of backoff, up to
  1.5 to the push that is accepted: 5. A client whose telemetry stopped (42, 87, a code outside
  the table) is locked out from then on.
- **117 storms**: a client's first UNKNOWN_SUBSCRIPTION_ID opens its storm, attributed to the
  latest subscription change before it; its next accepted push closes it. The recovery time is
  from that first 117 to the accepted push (KIP-714: "Immediately send a
  GetTelemetrySubscriptionsRequest", then the first push jittered 0.5-1.5 x PushIntervalMs).
- **Error codes** of every response, against the KIP's table.

Latencies are client-side (request written to response read), per push, in milliseconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.soak.client import KIP_PUSH_ERRORS, Event
from kconform.soak.latency import latency_histogram, percentile

GET_CODES = frozenset({ErrorCode.NONE, ErrorCode.THROTTLING_QUOTA_EXCEEDED})
"""Get answers a well-behaved client can expect: NONE, or 89 from the per-instance rate limit."""


@dataclass(frozen=True)
class Fault:
    """Something the schedule did: a subscription change, client churn, a broker restart."""

    kind: str  # subscription | client_churn | restart | rolling_restart
    start: float
    end: float
    detail: str
    nodes: tuple[int, ...] = ()


@dataclass
class Storm:
    """One subscription change's 117 storm."""

    fault: Fault
    affected: set[int] = field(default_factory=set)
    recovered: dict[int, float] = field(default_factory=dict)  # client -> seconds to recover
    intervals: dict[int, float] = field(default_factory=dict)  # client -> its PushIntervalMs (s)
    disturbed: set[int] = field(default_factory=set)  # lost its connection or moved meanwhile
    throttled: set[int] = field(default_factory=set)  # answered 89 before pushing again
    last_recovery: float = 0.0  # wall time the last affected client pushed again


@dataclass
class RestartWatch:
    """The clients live when a restart ended, until each has a push accepted again."""

    fault: Fault
    waiting: dict[int, float] = field(default_factory=dict)  # client -> its interval (s)
    recovered: dict[int, float] = field(default_factory=dict)  # client -> s after the return
    intervals: dict[int, float] = field(default_factory=dict)  # client -> its interval (s)
    disturbed: set[int] = field(default_factory=set)  # a later restart or a 117 storm came first
    bound_intervals: float = 6.0

    def overdue(self, judged_at: float, ledger: Ledger) -> list[int]:
        """Clients that pushed again too late, or not yet although their bound has passed
        (judged up to their end, if they ended)."""
        late = [
            client
            for client, took in self.recovered.items()
            if took > self.bound_intervals * self.intervals[client]
        ]
        for client, interval in self.waiting.items():
            ended = ledger.clients[client].ended
            until = judged_at if ended is None else min(judged_at, ended)
            if until - self.fault.end > self.bound_intervals * interval:
                late.append(client)
        return sorted(late)

    def interrupt(self, at: float) -> None:
        """A later restart at `at`: clients still within their bound are no longer judged."""
        for client, interval in list(self.waiting.items()):
            if at - self.fault.end <= self.bound_intervals * interval:
                del self.waiting[client]
                self.disturbed.add(client)


@dataclass
class _Client:
    started: float
    ended: float | None = None
    ok_since: float = 0.0  # lock-out clock: start, last accepted push, or last restart's end
    interval_s: float = 0.0
    stopped: str = ""
    storm_since: float | None = None
    storm: Storm | None = None
    locked_since: float | None = None  # when the current lock-out began (None: not locked)
    last_code: int = 0
    connected: bool = False


@dataclass
class Lockout:
    client: int
    since: float
    until: float | None
    reason: str


@dataclass
class Bucket:
    """One sample interval's counters."""

    start: float
    pushes: int = 0
    accepted: int = 0
    rejected: Counter[int] = field(default_factory=Counter)
    terminating: int = 0
    terminating_accepted: int = 0
    gets: int = 0
    get_rejected: Counter[int] = field(default_factory=Counter)
    connects: int = 0
    refused: int = 0
    lost: int = 0
    timeouts: int = 0
    started: int = 0
    closed: int = 0
    killed: int = 0
    moved: int = 0
    stopped: int = 0
    storm_117: int = 0
    latencies: list[float] = field(default_factory=list)
    lag_ms: float = 0.0


class Ledger:
    """Per-client tracking and per-interval counters (module docstring)."""

    def __init__(self, start: float, interval_s: float, lockout_intervals: float = 6.0) -> None:
        self.start = start
        self.default_interval_s = interval_s
        self.lockout_intervals = lockout_intervals
        self.clients: dict[int, _Client] = {}
        self.instances: set[str] = set()
        self.faults: list[Fault] = []
        self.storms: list[Storm] = []
        self.lockouts: list[Lockout] = []
        self.codes_outside: Counter[str] = Counter()  # "push 35", "get 117", ...
        self.totals: Counter[str] = Counter()
        self.bucket = Bucket(start)
        self.latency_max = 0.0
        self.unexplained_117 = 0
        self.restart_watches: list[RestartWatch] = []
        self.restarting = False  # no lock-out opens while a restart is under way

    # --- input --------------------------------------------------------------------------------

    def begin(self, t: float) -> None:
        """The fleet starts now: offsets and the first interval count from here."""
        self.start = t
        self.bucket.start = t

    def feed(self, events: Iterable[Event]) -> None:
        for event in events:
            handler = getattr(self, f"_on_{event.kind}", None)
            if handler is not None:
                handler(event)

    def fault(self, fault: Fault) -> None:
        """A fault the schedule finished; restarts give every client a fresh lock-out clock."""
        self.faults.append(fault)
        if fault.kind == "subscription":
            self.storms.append(Storm(fault))
        if fault.kind in ("restart", "rolling_restart"):
            self.restarting = False
            for earlier in self.restart_watches:
                earlier.interrupt(fault.start)
            watch = RestartWatch(fault, bound_intervals=self.lockout_intervals)
            for index, state in self.clients.items():
                state.ok_since = max(state.ok_since, fault.end)
                if state.ended is None and not state.stopped and state.started < fault.start:
                    interval = state.interval_s or self.default_interval_s
                    watch.waiting[index] = watch.intervals[index] = interval
            self.restart_watches.append(watch)

    def _on_life(self, e: Event) -> None:
        b = self.bucket
        if e.detail == "started":
            self.clients[e.client] = _Client(e.t, ok_since=e.t)
            b.started += 1
            return
        state = self.clients.get(e.client)
        if state is None:
            return
        if e.detail in ("closed", "killed"):
            state.ended, state.connected = e.t, False
            if state.locked_since is not None:
                self._end_lockout(e.client, e.t)
            b.closed += e.detail == "closed"
            b.killed += e.detail == "killed"
        elif e.detail == "moved":
            b.moved += 1
            state.ok_since = max(state.ok_since, e.t)  # the harness moved it: a fresh start
            self._disturbed(e.client, state)
        elif e.detail.startswith("stopped:"):
            state.stopped = e.detail.removeprefix("stopped:")
            b.stopped += 1

    def _on_conn(self, e: Event) -> None:
        b = self.bucket
        state = self.clients.get(e.client)
        if state is not None:
            state.connected = e.detail == "connected"
        if e.detail == "connected":
            b.connects += 1
            return
        if e.detail == "refused":
            b.refused += 1
        elif e.detail == "timeout":
            b.timeouts += 1
        else:
            b.lost += 1
        if state is not None:
            self._disturbed(e.client, state)

    def _disturbed(self, index: int, state: _Client) -> None:
        """A client in a 117 storm that lost its connection (a restart, a move) recovers on
        another clock: its storm no longer measures the reaction to the subscription change."""
        if state.storm is not None:
            state.storm.disturbed.add(index)
            state.storm.affected.discard(index)
            state.storm, state.storm_since = None, None

    def _on_apiversions(self, e: Event) -> None:
        self.totals["apiversions"] += 1

    def _on_lag(self, e: Event) -> None:
        self.bucket.lag_ms = max(self.bucket.lag_ms, e.latency_ms)

    def _on_get(self, e: Event) -> None:
        b = self.bucket
        b.gets += 1
        self.totals["gets"] += 1
        if e.code:
            b.get_rejected[e.code] += 1
            self.totals[f"get_{e.code}"] += 1
        if e.code not in GET_CODES:
            self.codes_outside[f"GetTelemetrySubscriptions {_name(e.code)}"] += 1
        state = self.clients.get(e.client)
        if e.code == 0 and state is not None:
            state.interval_s = e.value / 1000
            if e.instance:
                self.instances.add(e.instance)

    def _on_push(self, e: Event) -> None:
        b = self.bucket
        b.pushes += 1
        self.totals["pushes"] += 1
        b.latencies.append(e.latency_ms)
        self.latency_max = max(self.latency_max, e.latency_ms)
        terminating = e.detail == "T"
        if terminating:
            b.terminating += 1
            b.terminating_accepted += e.code == 0
            self.totals["terminating"] += 1
            self.totals["terminating_accepted"] += e.code == 0
        if e.code not in KIP_PUSH_ERRORS:
            self.codes_outside[f"PushTelemetry {_name(e.code)}"] += 1
        state = self.clients.get(e.client)
        if e.code == 0:
            b.accepted += 1
            self.totals["accepted"] += 1
            if state is not None and not terminating:
                self._accepted(e.client, state, e.t)
            return
        b.rejected[e.code] += 1
        self.totals[f"push_{e.code}"] += 1
        if state is not None:
            state.last_code = e.code
            if e.code == ErrorCode.THROTTLING_QUOTA_EXCEEDED and state.storm is not None:
                state.storm.throttled.add(e.client)
            if e.code == ErrorCode.UNKNOWN_SUBSCRIPTION_ID and not terminating:
                b.storm_117 += 1
                self._storm_117(e.client, state, e.t)

    def _accepted(self, client: int, state: _Client, t: float) -> None:
        state.ok_since = max(state.ok_since, t)
        for watch in self.restart_watches:
            if client in watch.waiting and t >= watch.fault.end:
                del watch.waiting[client]
                watch.recovered[client] = t - watch.fault.end
        if state.locked_since is not None:
            self._end_lockout(client, t)
        if state.storm is not None and state.storm_since is not None:
            storm = state.storm
            storm.recovered[client] = t - state.storm_since
            storm.intervals[client] = state.interval_s or self.default_interval_s
            storm.last_recovery = max(storm.last_recovery, t)
            state.storm, state.storm_since = None, None

    def _storm_117(self, client: int, state: _Client, t: float) -> None:
        if state.storm_since is not None:
            return  # still in the storm it is in
        storm = next((s for s in reversed(self.storms) if s.fault.start <= t), None)
        if storm is None:
            self.unexplained_117 += 1
            return
        state.storm, state.storm_since = storm, t
        storm.affected.add(client)
        storm.recovered.pop(client, None)
        for watch in self.restart_watches:  # the storm now decides when it pushes again
            if watch.waiting.pop(client, None) is not None:
                watch.disturbed.add(client)

    # --- lock-out ------------------------------------------------------------------------------

    def interval_of(self, client: int) -> float:
        state = self.clients[client]
        return state.interval_s or self.default_interval_s

    def check_lockouts(self, now: float) -> int:
        """Open a lock-out for every live client past its bound; returns how many are locked."""
        locked = 0
        for index, state in self.clients.items():
            if state.ended is not None or (self.restarting and not state.stopped):
                locked += state.locked_since is not None
                continue
            bound = self.lockout_intervals * (state.interval_s or self.default_interval_s)
            overdue = now - state.ok_since > bound
            if (state.stopped or overdue) and state.locked_since is None:
                since = now if state.stopped else state.ok_since + bound
                state.locked_since = since
                reason = (
                    f"telemetry stopped ({state.stopped})"
                    if state.stopped
                    else (
                        f"no push accepted for {now - state.ok_since:.0f} s "
                        f"(> {self.lockout_intervals:g} x {bound / self.lockout_intervals:g} s); "
                        f"last error {_name(state.last_code)}"
                    )
                )
                self.lockouts.append(Lockout(index, since, None, reason))
            locked += state.locked_since is not None
        return locked

    def _end_lockout(self, client: int, t: float) -> None:
        self.clients[client].locked_since = None
        for lockout in reversed(self.lockouts):
            if lockout.client == client and lockout.until is None:
                lockout.until = t
                break

    # --- output --------------------------------------------------------------------------------

    def live_clients(self) -> int:
        return sum(1 for s in self.clients.values() if s.ended is None)

    def connected_clients(self) -> int:
        """Live clients whose last connection event was a connect."""
        return sum(1 for s in self.clients.values() if s.ended is None and s.connected)

    def close_bucket(self, now: float, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The sample row of the interval ending `now`; a new interval starts."""
        b, self.bucket = self.bucket, Bucket(now)
        hist = latency_histogram(b.latencies)
        row: dict[str, Any] = {
            "bucket_start": b.start,
            "bucket_end": now,
            "offset_s": b.start - self.start,
            "clients_live": self.live_clients(),
            "clients_started": b.started,
            "clients_closed": b.closed,
            "clients_killed": b.killed,
            "clients_moved": b.moved,
            "clients_stopped": b.stopped,
            "clients_locked_out": self.check_lockouts(now),
            "pushes": b.pushes,
            "pushes_accepted": b.accepted,
            "pushes_rejected": sum(b.rejected.values()),
            "terminating": b.terminating,
            "terminating_accepted": b.terminating_accepted,
            "gets": b.gets,
            "gets_rejected": sum(b.get_rejected.values()),
            "throttled": b.rejected[89] + b.get_rejected[89],
            "storm_117": b.storm_117,
            "storm_open": self.storm_open(),
            "connects": b.connects,
            "refused": b.refused,
            "lost": b.lost,
            "timeouts": b.timeouts,
            "latency_p50_ms": percentile(b.latencies, 50),
            "latency_p99_ms": percentile(b.latencies, 99),
            "latency_max_ms": max(b.latencies, default=0.0),
            "latency_hist": hist,
            "loop_lag_max_ms": b.lag_ms,
            "distinct_instances": len(self.instances),
        }
        for code in (42, 76, 87, 89, 117, 118):
            row[f"rejected_{code}"] = b.rejected[code]
        row["rejected_other"] = sum(v for k, v in b.rejected.items() if k not in KIP_PUSH_ERRORS)
        row.update(extra or {})
        return row

    def storm_open(self) -> int:
        return sum(1 for s in self.clients.values() if s.storm_since is not None and not s.ended)


def _name(code: int) -> str:
    try:
        return f"{ErrorCode(code).name} ({code})"
    except ValueError:
        return f"error {code}"
