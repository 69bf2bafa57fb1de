"""Reading what the brokers' telemetry sinks received, incrementally, for hours.

- `ReferenceSink`: the reference target's in-process sink, drained (read once and forgotten,
  so it never grows).
- `HttpSink`: the kconform sink plugin on real brokers (`apache`, `kraft`, `external --sink`):
  `/telemetry?since=N` per node, from where the run started. The plugin keeps the last 20,000
  pushes; records evicted before they were read make that read incomplete (`Poll.complete`).
  After the coordinator restarts a node, `reset(node)` starts reading its new sink from the
  beginning as a new incarnation (the plugin counts from 1 again in a new JVM).

Each read returns (instance, stamp, time) per record and one `Poll` per node, for
`delivery.DeliveryMatcher`. Both readers block (HTTP, the target's lock): call them in a thread.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from kconform.fixtures.targets.base import BrokerTarget, TargetError
from kconform.fixtures.targets.sink_cluster import SinkClient
from kconform.soak.delivery import Poll, push_stamp

HTTP_TIMEOUT = 10.0


@dataclass
class SinkBatch:
    records: list[tuple[str, int, float, str]] = field(default_factory=list)  # + client.id
    polls: list[Poll] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dropped: int = 0  # records the plugin evicted before this read got them


class ReferenceSink:
    """The reference's sinks, drained."""

    def __init__(self, target: BrokerTarget) -> None:
        self.target = target
        self.nodes = [b.node_id for b in target.brokers]

    def start(self) -> None:
        self.read()  # forget anything from before the run

    def read(self) -> SinkBatch:
        started = time.time()
        drained = self.target.drain_telemetry()  # type: ignore[attr-defined]
        batch = SinkBatch(polls=[Poll(node, started, 0) for node in self.nodes])
        # received_at is on the reference's monotonic clock: the read's wall time stands in
        batch.records = [
            (r.client_instance_id, push_stamp(r.payload), started, r.client_id or "")
            for r in drained
        ]
        return batch

    def reset(self, node: int) -> None:
        """The reference keeps its sink across restarts: nothing to do."""


class HttpSink:
    """The plugin's HTTP endpoint on every node (module docstring)."""

    def __init__(self, endpoints: Mapping[int, tuple[str, int]]) -> None:
        self.endpoints = dict(endpoints)
        self.clients = {
            node: SinkClient(host, port, timeout=HTTP_TIMEOUT)
            for node, (host, port) in self.endpoints.items()
        }
        self.cursor: dict[int, int] = {}
        self.incarnation: dict[int, int] = dict.fromkeys(self.endpoints, 0)
        self.high: dict[int, int] = {}

    def _get(self, node: int, since: int) -> dict[str, object]:
        return self.clients[node].get(f"/telemetry?since={since}")

    def start(self) -> None:
        """Start every node's cursor at what its sink holds now (older pushes are not ours)."""
        for node in self.endpoints:
            doc = self._get(node, 2**63 - 1)
            self.cursor[node] = int(str(doc.get("next_seq") or 1)) - 1
            self.high[node] = self.cursor[node]

    def reset(self, node: int) -> None:
        """The node restarted (a new JVM, a new sink): read it from its first record."""
        self.cursor[node] = 0
        self.high[node] = 0
        self.incarnation[node] = self.incarnation.get(node, 0) + 1

    def read(self, nodes: list[int] | None = None) -> SinkBatch:
        batch = SinkBatch()
        for node in nodes or list(self.endpoints):
            started = time.time()
            try:
                doc = self._get(node, self.cursor.get(node, 0))
            except TargetError as exc:
                batch.errors.append(str(exc))
                continue
            next_seq = int(str(doc.get("next_seq") or 1))
            if next_seq - 1 < self.high.get(node, 0):  # went back: a restart we did not make
                self.reset(node)
                doc = self._get(node, 0)
                next_seq = int(str(doc.get("next_seq") or 1))
            complete = self._take(node, doc, batch)
            self.high[node] = max(self.high.get(node, 0), next_seq - 1)
            batch.polls.append(Poll(node, started, self.incarnation.get(node, 0), complete))
        return batch

    def _take(self, node: int, doc: Mapping[str, object], batch: SinkBatch) -> bool:
        records = doc.get("records")
        expected = self.cursor.get(node, 0) + 1
        complete = True
        for record in records if isinstance(records, list) else []:
            seq = int(record.get("seq") or 0)
            if seq > expected:
                complete = False
                batch.dropped += seq - expected
            expected = seq + 1
            self.cursor[node] = max(self.cursor.get(node, 0), seq)
            payload = record.get("payload_b64")
            raw = base64.b64decode(payload) if isinstance(payload, str) else b""
            received = int(record.get("received_at_ms") or 0) / 1000 or time.time()
            instance = str(record.get("client_instance_id"))
            client_id = str(record.get("client_id") or "")
            batch.records.append((instance, push_stamp(raw), received, client_id))
        return complete


def sink_reader(target: BrokerTarget) -> ReferenceSink | HttpSink | None:
    """The reader for `target`'s sinks, or None where the target has none."""
    if hasattr(target, "drain_telemetry"):
        return ReferenceSink(target)
    endpoints = sink_endpoints(target, every_node=True)
    return HttpSink(endpoints) if endpoints else None


def sink_endpoints(target: BrokerTarget, *, every_node: bool) -> dict[int, tuple[str, int]]:
    """{node id: (host, port)} of the sink plugin on `target`'s nodes: its own nodes' sinks, or an
    external cluster's `--sink` URLs (only when they cover every broker, if `every_node`)."""
    endpoints = getattr(target, "endpoints", None)
    if endpoints:
        return {e.node_id: (e.host, e.sink_port) for e in endpoints}
    sink_map = getattr(target, "sink_map", None)
    if sink_map is not None and (sink_map.complete or not every_node):
        return {n: (e.host, e.port) for n, e in sink_map.by_node.items()}
    return {}
