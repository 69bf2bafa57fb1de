"""Broker memory, open connections and cached client instances, where the target can show them.

What can be read is the target kind's declaration (`TargetKind.soak_stats`), not a guess:

- `local_jvms` (`apache`): each node's JVM resident memory (the nanny's descendants in /proc)
  and its ESTABLISHED TCP connections on the client port (/proc/net/tcp); from the sink
  plugin's `/broker-metrics`: the cached client instances (`client-metrics` `instance-count`,
  Kafka 3.8+; Apache 3.7 has no such gauge) and the JVM heap in use.
- `sink_plugin` (`external --sink`, `kraft`): what the plugin shows (instances, heap in use,
  `connection-count` of the listeners); the resident memory of a remote JVM is not readable.
  Without a plugin (`librdkafka_mock`, `external` without `--sink`): nothing (the memory SLO is
  then unsupported).
- `in_process` (`reference`, as `RestartableReferenceTarget`): the resident memory of the
  process hosting it (the coordinator: it also holds the soak's own bookkeeping, so growth is an
  upper bound), the proxy's client connections, and every node's instance cache (Kafka's
  `instance-count`).

Readers block briefly (/proc, the target's lock): call them in a thread.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kconform.fixtures.targets.base import BrokerTarget, TargetError
from kconform.fixtures.targets.kind import SoakStats
from kconform.fixtures.targets.sink_cluster import SinkClient
from kconform.soak.sink import sink_endpoints

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes(pid: int) -> int | None:
    """A process's resident set size, from /proc (None when unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/statm").read_text().split()
        return int(fields[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return None


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (through /proc/<pid>/task/*/children)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                queue += [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
    return found


def established_on(ports: set[int]) -> int:
    """ESTABLISHED TCP connections whose local port is one of `ports` (IPv4 and IPv6)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 3 and parts[3] == "01" and int(parts[1].rsplit(":", 1)[1], 16) in ports:
                count += 1
    return count


class BrokerStats:
    """What `read()` returns: memory_bytes, connections, cached_instances (None: unknown)."""

    def __init__(self, target: BrokerTarget, source: SoakStats) -> None:
        self.target = target
        endpoints = sink_endpoints(target, every_node=False).values()
        self.sinks = [SinkClient(host, port) for host, port in endpoints]
        # what is read: the declared source, or nothing for a plugin-less target
        self.source: SoakStats | None = source if source != "sink_plugin" or self.sinks else None
        self.memory_source = {
            "in_process": "resident memory of the process hosting the reference (and the soak)",
            "local_jvms": "resident memory of each broker JVM, summed",
            "sink_plugin": "JVM heap in use of each broker, summed (the sink plugin's reading)",
            None: "not readable on this target",
        }[self.source]

    @property
    def readable(self) -> bool:
        return self.source is not None

    def read(self) -> dict[str, Any]:
        try:
            if self.source == "in_process":
                return self._in_process()
            if self.source == "local_jvms":
                return self._local_jvms()
            if self.source == "sink_plugin":
                gauges = self._gauges()
                return {**gauges, "memory_bytes": gauges["heap_floor_bytes"]}
        except Exception as exc:  # a stopped or restarting target: no reading this time
            return {
                "memory_bytes": None,
                "connections": None,
                "cached_instances": None,
                "stats_error": f"{type(exc).__name__}: {exc}",
            }
        return {"memory_bytes": None, "connections": None, "cached_instances": None}

    def _in_process(self) -> dict[str, Any]:
        target: Any = self.target
        return {
            "memory_bytes": rss_bytes(os.getpid()),
            "connections": target.open_connections(),
            "cached_instances": sum(target.instance_counts().values()),
        }

    def _local_jvms(self) -> dict[str, Any]:
        target: Any = self.target
        memory = 0
        readable = False
        for nanny in target.pids().values():
            for pid in descendants(nanny)[1:]:
                size = rss_bytes(pid)
                if size is not None:
                    memory += size
                    readable = True
        ports = {b.port for b in target.brokers}
        gauges = self._gauges()
        return {
            "memory_bytes": memory if readable else None,
            "connections": established_on(ports),
            "cached_instances": gauges["cached_instances"],
            "heap_floor_bytes": gauges["heap_floor_bytes"],
        }

    def heap(self) -> int | None:
        """The brokers' JVM heap in use, summed (None where the plugin does not say)."""
        if not self.sinks:
            return None
        try:
            value: int | None = self._gauges()["heap_floor_bytes"]
        except Exception:
            return None
        return value

    def _gauges(self) -> dict[str, Any]:
        """The sink plugin's `/broker-metrics` on every node, summed (None where unreadable)."""
        cached = heap = connections = None
        for sink in self.sinks:
            try:
                doc = sink.get("/broker-metrics")
            except TargetError:
                continue  # a node restarting, or a plugin from before /broker-metrics
            heap = (heap or 0) + int(doc.get("heap_used") or 0)
            for metric in doc.get("metrics", []):
                value = metric.get("value")
                if value is None:
                    continue
                if (metric.get("group"), metric.get("name")) == (
                    "client-metrics",
                    "instance-count",
                ):
                    cached = (cached or 0) + int(value)
                elif metric.get("name") == "connection-count" and (
                    metric.get("tags", {}).get("listener") not in ("CONTROLLER", "BROKER")
                ):
                    connections = (connections or 0) + int(value)
        return {"cached_instances": cached, "heap_floor_bytes": heap, "connections": connections}
