"""Who the simulated clients are, and the OTLP payloads they push. Pure: no I/O, no clocks.

A fleet is a mix of the KIP-511 identities real clients send (Apache's Java client, librdkafka
and the clients built on it), each a producer or a consumer with its own client.id. A client's
payload is what KIP-714 asks of it: the standard producer or consumer metrics of
`codecs/otlp_catalogue.py` that its subscription's RequestedMetrics select (prefix match, `*`
for all), sums DELTA or CUMULATIVE as DeltaTemporality says, per-node metrics once per broker,
laid out as that client lays them out (the Java client: one ResourceMetrics per metric;
librdkafka: one ResourceMetrics, one scope named after the client instance; §E.1, E.2).

Every data point of a push carries the same `time_unix_nano`, distinct for each push of a
client: with the instance id it names the push, which is how the soak finds each acknowledged
push at the broker's sink (`delivery.py`). The protobuf is built once per subscription and
only its values and times change per push, which keeps a push at ~100 us of CPU.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2

from kconform.codecs.otlp_catalogue import STANDARD_METRICS, StandardMetric

Layout = Literal["per_metric", "shared"]
ClientType = Literal["producer", "consumer"]


@dataclass(frozen=True)
class Software:
    """One client implementation as KIP-511 names it, and how it lays out its payload."""

    name: str
    versions: tuple[str, ...]
    layout: Layout
    weight: int
    wraps_librdkafka: bool = False


SOFTWARE: tuple[Software, ...] = (
    Software("apache-kafka-java", ("3.7.0", "3.8.1", "3.9.1", "4.0.0", "4.1.0"), "per_metric", 40),
    Software("librdkafka", ("2.5.0", "2.6.1", "2.10.1", "2.16.0"), "shared", 15),
    Software("confluent-kafka-python", ("2.5.0", "2.10.1", "2.16.0"), "shared", 15, True),
    Software("confluent-kafka-go", ("2.5.0", "2.10.1"), "shared", 12, True),
    Software("confluent-kafka-dotnet", ("2.5.0", "2.10.1"), "shared", 12, True),
    Software("confluent-kafka-javascript", ("1.0.0", "1.3.0"), "shared", 6, True),
)
"""KIP-714 clients seen in the wild (names as they send them; all match Apache's KIP-511
pattern, ruling 9). Wrappers report their own version with librdkafka's appended."""


@dataclass(frozen=True)
class ClientProfile:
    """One simulated client's identity: fixed for its life, derived from (seed, index)."""

    index: int
    client_id: str
    software_name: str
    software_version: str
    client_type: ClientType
    layout: Layout
    group_id: str | None = None
    rack: str | None = None


def make_profile(index: int, seed: int, tag: str) -> ClientProfile:
    """The `index`-th client of a fleet; `tag` goes into client.id so subscriptions can match
    (and only match) this fleet's clients (`client_id=<tag>-.*`)."""
    rng = random.Random(f"{seed}/{index}")
    software = rng.choices(SOFTWARE, weights=[s.weight for s in SOFTWARE])[0]
    version = rng.choice(software.versions)
    if software.wraps_librdkafka:
        version = f"{version}-librdkafka-{rng.choice(SOFTWARE[1].versions)}"
    client_type: ClientType = "producer" if rng.random() < 0.6 else "consumer"
    group = f"{tag}-group-{rng.randrange(16)}" if client_type == "consumer" else None
    rack = f"rack-{rng.randrange(3)}" if rng.random() < 0.3 else None
    return ClientProfile(
        index,
        f"{tag}-{index}-{client_type}",
        software.name,
        version,
        client_type,
        software.layout,
        group,
        rack,
    )


def selected_metrics(client_type: ClientType, requested: Sequence[str]) -> list[StandardMetric]:
    """The standard metrics of `client_type` that RequestedMetrics asks for (prefixes; a lone
    "*" is all, an empty list none: KIP-714 'Client metrics configuration', ruling 1)."""
    mine = [m for m in STANDARD_METRICS if m.client_type == client_type]
    if list(requested) == ["*"]:
        return mine
    return [m for m in mine if any(m.name.startswith(prefix) for prefix in requested)]


class PayloadBuilder:
    """One client's pushes: `configure` after each Get, `build` for each push."""

    def __init__(self, profile: ClientProfile, nodes: Sequence[int], rng: random.Random) -> None:
        self.profile = profile
        self.nodes = list(nodes) or [1]
        self.rng = rng
        self.delta = True
        self.limit: int | None = None  # metrics kept after TELEMETRY_TOO_LARGE
        self._metrics: list[StandardMetric] = []
        self._data = metrics_pb2.MetricsData()
        self._points: list[tuple[metrics_pb2.NumberDataPoint, StandardMetric]] = []
        self._totals: dict[int, int] = {}
        self._start_ns = 0
        self._last_ns = 0

    @property
    def last_stamp(self) -> int:
        """The `time_unix_nano` of the latest push built (0 before the first)."""
        return self._last_ns

    @property
    def empty(self) -> bool:
        """No requested metric matches: the KIP asks for pushes with an empty blob."""
        return not self._points

    def configure(self, requested: Sequence[str], delta: bool, now_ns: int) -> None:
        """Apply a Get's RequestedMetrics and DeltaTemporality (an absolute update)."""
        metrics = selected_metrics(self.profile.client_type, requested)
        if delta != self.delta or not self._start_ns:
            self._start_ns = now_ns  # a new temporality restarts the sums (§E.1)
            self._totals.clear()
        self.delta = delta
        if [m.name for m in metrics] != [m.name for m in self._metrics]:
            self._metrics = metrics
            self._rebuild()
        else:
            self._set_temporality()

    def shrink(self) -> None:
        """TELEMETRY_TOO_LARGE: "Reduce the size of the metrics payload" (ruling 10)."""
        count = len(self._metrics) if self.limit is None else self.limit
        self.limit = max(1, count // 2)
        self._rebuild()

    def build(self, now_ns: int) -> bytes:
        """The uncompressed MetricsData of one push, every point stamped `time_unix_nano`."""
        stamp = max(now_ns, self._last_ns + 1)
        start = self._last_ns or self._start_ns
        self._last_ns = stamp
        for key, (point, metric) in enumerate(self._points):
            point.time_unix_nano = stamp
            if metric.kind == "sum":
                increment = self.rng.randrange(0, 3)
                total = self._totals.get(key, 0) + increment
                self._totals[key] = total
                point.start_time_unix_nano = start if self.delta else self._start_ns
                point.as_int = increment if self.delta else total
            else:
                point.start_time_unix_nano = start
                point.as_double = _gauge_value(metric.name, self.rng)
        return bytes(self._data.SerializeToString())

    def _rebuild(self) -> None:
        metrics = self._metrics[: self.limit] if self.limit is not None else self._metrics
        self._data = metrics_pb2.MetricsData()
        self._points = []
        resource = _resource_attributes(self.profile)
        shared_scope: metrics_pb2.ScopeMetrics | None = None
        for metric in metrics:
            if self.profile.layout == "per_metric" or shared_scope is None:
                rm = self._data.resource_metrics.add()
                rm.resource.attributes.extend(resource)
                shared_scope = rm.scope_metrics.add()
                if self.profile.layout == "shared":
                    shared_scope.scope.name = f"rdkafka#{self.profile.client_type}-1"
                    shared_scope.scope.version = self.profile.software_version
            out = shared_scope.metrics.add()
            out.name = metric.name
            nodes = self.nodes if metric.labels else [None]
            for node in nodes:
                if metric.kind == "sum":
                    out.sum.is_monotonic = True
                    point = out.sum.data_points.add()
                else:
                    point = out.gauge.data_points.add()
                if node is not None:
                    point.attributes.append(_string_attribute("node_id", str(node)))
                self._points.append((point, metric))
        self._set_temporality()

    def _set_temporality(self) -> None:
        temporality = (
            metrics_pb2.AGGREGATION_TEMPORALITY_DELTA
            if self.delta
            else metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE
        )
        for rm in self._data.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    if metric.WhichOneof("data") == "sum":
                        metric.sum.aggregation_temporality = temporality


def _string_attribute(key: str, value: str) -> common_pb2.KeyValue:
    return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(string_value=value))


def _resource_attributes(profile: ClientProfile) -> list[common_pb2.KeyValue]:
    """What each client puts on its Resource (§E.1/E.2): group and rack, never a host."""
    attrs = []
    if profile.group_id:
        attrs.append(_string_attribute("group_id", profile.group_id))
        member_key = "group_member_id" if profile.layout == "per_metric" else "member_id"
        attrs.append(_string_attribute(member_key, f"{profile.client_id}-member"))
    if profile.rack:
        attrs.append(_string_attribute("client_rack", profile.rack))
    return attrs


def _gauge_value(name: str, rng: random.Random) -> float:
    """A plausible reading: latencies in ms, rates per second, ratios in [0, 1]."""
    if name.endswith(".ratio.avg"):
        return round(rng.random(), 4)
    if ".rate" in name:
        return round(rng.uniform(0.0, 2.0), 3)
    if name.endswith("assigned.partitions"):
        return float(rng.randrange(0, 64))
    scale = 400.0 if ".max" in name else 40.0
    return round(rng.expovariate(1.0 / scale) if "throttle" not in name else 0.0, 3)
