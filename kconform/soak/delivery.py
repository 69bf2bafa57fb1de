"""Every push a client saw acknowledged, matched against every push the broker's sink received.

A push is named by (ClientInstanceId, time_unix_nano of its data points): `payload.py` stamps
each push of a client with a distinct time, and the broker hands the payload to its receiver
unchanged (decompressed from 3.8 on). Pure: acks and sink records in, counts out.

- **matched**: acknowledged (NONE) and at the sink;
- **duplicate**: the same push at the sink twice;
- **missing**: acknowledged, not at the sink, although a complete read of that broker's sink
  started after the acknowledgement, with no broker restart in between. Apache exports before
  it answers (§C.4 steps 7 and 9), so such a push is lost;
- **unread**: acknowledged, not at the sink, and the harness cannot tell: the sink evicted
  records before they were read, the broker restarted before a read, or no read has happened
  since. These make the no-loss SLO undecidable (error), never a pass or a fail;
- **delivered unacknowledged**: at the sink, but the client never saw the answer (its
  connection dropped first): not a loss;
- **foreign**: another fleet's or a real client's push (other shards read the same sinks).
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from opentelemetry.proto.metrics.v1 import metrics_pb2

from kconform.codecs.compression import CompressionError, decompress

RECENT_PER_INSTANCE = 32  # stamps kept per instance to spot duplicates (a duplicate is recent)
FOREIGN_AFTER_S = 60.0  # an unknown instance's record is foreign once it is this old
_MAGIC = (
    (b"\x1f\x8b", 1),
    (b"\x82SNAPPY\x00", 2),
    (b"\x04\x22\x4d\x18", 3),
    (b"\x28\xb5\x2f\xfd", 4),
)


def push_stamp(payload: bytes) -> int:
    """The `time_unix_nano` naming a push (0 when the payload has no data point).

    A payload still compressed (Apache 3.7 hands the receiver the bytes as sent, ruling 13) is
    decompressed first, by its magic bytes.
    """
    for magic, compression in _MAGIC:
        if payload.startswith(magic):
            try:
                payload = decompress(payload, compression, max_size=64 << 20)
            except CompressionError:
                return 0
            break
    try:
        data = metrics_pb2.MetricsData.FromString(payload)
    except Exception:  # not OTLP: not one of the fleet's pushes
        return 0
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                kind = metric.WhichOneof("data")
                if kind in ("sum", "gauge") and getattr(metric, kind).data_points:
                    return int(getattr(metric, kind).data_points[0].time_unix_nano)
    return 0


@dataclass(frozen=True)
class Poll:
    """One read of a broker's sink: when it started, which incarnation of the sink it read, and
    whether it got everything since the previous read (no record evicted unread)."""

    node: int
    started: float
    incarnation: int
    complete: bool = True


@dataclass
class DeliveryCounts:
    acked: int = 0
    at_sink: int = 0  # own pushes the sinks received
    matched: int = 0
    duplicates: int = 0
    missing: int = 0
    unread: int = 0
    pending: int = 0  # acknowledged, not yet at the sink, not yet decidable
    unacked_delivered: int = 0
    foreign: int = 0
    examples_missing: list[str] = field(default_factory=list)
    examples_duplicate: list[str] = field(default_factory=list)


class DeliveryMatcher:
    """Acks and sink records in any order; `settle` classifies what is still unmatched."""

    def __init__(self) -> None:
        self.own: set[str] = set()
        self.acks: dict[tuple[str, int], tuple[float, int]] = {}  # key -> (ack time, node)
        self.unclaimed: dict[tuple[str, int], float] = {}  # at the sink, no ack (yet)
        self.recent: dict[str, tuple[deque[int], set[int]]] = {}
        self.polls: dict[int, list[Poll]] = {}
        self._starts: dict[int, list[float]] = {}  # the polls' start times, for bisect
        self.counts = DeliveryCounts()

    def instance(self, instance: str) -> None:
        """One of this fleet's ClientInstanceIds (from a Get answer)."""
        self.own.add(instance)

    def ack(self, instance: str, stamp: int, node: int, t: float) -> None:
        key = (instance, stamp)
        self.counts.acked += 1
        if self.unclaimed.pop(key, None) is not None:
            self.counts.matched += 1
            self.counts.at_sink += 1
            return
        self.acks[key] = (t, node)

    def sink(self, instance: str, stamp: int, t: float) -> None:
        """A record the broker's sink received (payload already reduced to its stamp)."""
        if not stamp:
            return
        stamps, seen = self.recent.setdefault(instance, (deque(), set()))
        if stamp in seen:
            self.counts.duplicates += 1
            if len(self.counts.examples_duplicate) < 5:
                self.counts.examples_duplicate.append(f"{instance} @ {stamp}")
            return
        stamps.append(stamp)
        seen.add(stamp)
        if len(stamps) > RECENT_PER_INSTANCE:
            seen.discard(stamps.popleft())
        key = (instance, stamp)
        if self.acks.pop(key, None) is not None:
            self.counts.matched += 1
            self.counts.at_sink += 1
            return
        self.unclaimed[key] = t

    def poll(self, poll: Poll) -> None:
        self.polls.setdefault(poll.node, []).append(poll)
        self._starts.setdefault(poll.node, []).append(poll.started)

    def decidable(self, node: int, t: float) -> bool | None:
        """True: a complete read of the same sink started after `t`; None: no read since;
        False: the reads around `t` cannot vouch for it (eviction or a restart between)."""
        polls = self.polls.get(node, [])
        at = bisect.bisect_right(self._starts.get(node, []), t)
        if at == len(polls):
            return None
        after = polls[at]
        before = polls[at - 1] if at else None
        same_sink = before is None or before.incarnation == after.incarnation
        return after.complete and same_sink

    def settle(self, now: float, *, final: bool = False) -> DeliveryCounts:
        """Classify unmatched acks (missing, unread, pending) and old unclaimed records."""
        counts = self.counts
        counts.missing = counts.unread = counts.pending = 0
        missing: list[str] = []
        for (instance, stamp), (t, node) in self.acks.items():
            verdict = self.decidable(node, t)
            if verdict:
                counts.missing += 1
                if len(missing) < 5:
                    missing.append(f"{instance} @ {stamp} (acked on node {node})")
            elif verdict is None and not final:
                counts.pending += 1
            else:
                counts.unread += 1
        counts.examples_missing = missing
        for key, t in list(self.unclaimed.items()):
            if final or now - t > FOREIGN_AFTER_S:
                del self.unclaimed[key]
                if key[0] in self.own:
                    counts.unacked_delivered += 1
                    counts.at_sink += 1
                else:
                    counts.foreign += 1
        return counts

    def feed_sink(self, records: Iterable[tuple[str, int, float, str]]) -> None:
        """Sink records as readers give them: (instance, stamp, time, client.id)."""
        for instance, stamp, t, _ in records:
            self.sink(instance, stamp, t)
