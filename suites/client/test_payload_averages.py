"""KIP-714: an `.avg` is the mean of the observations its window holds (ruling 20).

The KIP's tables define each `.avg` as an average of something measured per request (a request's
latency, a produce response's throttle time) and its `.max` as the largest of the same. A mean
of n values is no more than their maximum and no less than maximum / n; the proxy counts the
requests the client sent, so n has a bound the harness knows. franz-go v1.19.0-v1.21.3 divided
a window's summed latency by the window's length in milliseconds instead of by the number of
observations (fixed in v1.21.4, commit 16e51c5b): with a 2 s window and Produce answered 50 ms
late, its average came out near 50 ms x requests / 2000, far below max / n.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping

from kconform.codecs.otlp import MetricPoint
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver
from kconform.fixtures.proxy import Injection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import (
    TELEMETRY,
    Recording,
    for_client,
    produce,
    require_telemetry,
    run_client,
)
from kconform.suites.client.helpers_payload import judge

PER_REQUEST = (
    "org.apache.kafka.producer.node.request.latency",
    "org.apache.kafka.producer.produce.throttle.time",
)
"""Metrics whose `.avg`/`.max` have one observation per request (or response) of the client."""
SUBSCRIBED = ("org.apache.kafka.producer.",)
DELAY_S = 0.05  # each Produce answered this late, so every client has latencies to average
INTERVAL_MS = 2000
SLACK_MS = 1.0  # whole-millisecond maxima (franz-go's are int64 ms)


async def _delayed_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    def injections(client_id: str) -> list[Injection]:
        return [for_client(client_id, 0, delay=DELAY_S, name=f"Produce answered {DELAY_S} s late")]

    # one prefix, not ["*"]: franz-go reads "*" as a metric name; librdkafka before
    # 2.10.1 misreads every prefix of a list but the last
    return await run_client(check, client, target, produce(7.0, rate=4.0), metrics=SUBSCRIBED,
                            interval_ms=INTERVAL_MS, injections=injections)  # fmt: skip


def _series(points: list[MetricPoint]) -> dict[tuple[str, str], dict[str, float]]:
    """(base name, attributes) -> {"avg": v, "max": v} for the per-request metrics of one push."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    for p in points:
        base, _, stat = p.name.rpartition(".")
        if base in PER_REQUEST and stat in ("avg", "max") and isinstance(p.value, int | float):
            key = (base, _attributes(p.attributes))
            out.setdefault(key, {})[stat] = float(p.value)
    return out


def _attributes(attributes: Mapping[str, object]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(attributes.items()))


@case(
    "kip714.client.payload.averages",
    rules=["kip714.client.payload.averages"],
    title="Each per-request .avg lies between its .max / requests sent and its .max",
    spec="KIP-714 Client metrics and metric labels (node.request.latency.avg 'Average request "
    "latency', .max 'Maximum request latency'; produce.throttle.time.avg/.max); ruling 20; "
    f"Produce answered {DELAY_S * 1000:.0f} ms late, PushIntervalMs {INTERVAL_MS}; franz-go "
    "CHANGELOG v1.21.4",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_averages(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
    recording = await _delayed_run(check, client, client_target)
    require_telemetry(check, recording)
    sent = sorted(e.sent for e in recording.traffic.exchanges)
    judged, wrong, shown = 0, list[str](), list[str]()
    # an unreadable payload is kip714.client.payload.valid_otlp's to judge: judge() leaves it out
    for pushed in judge(recording).per_push:
        requests = bisect.bisect_right(sent, pushed.push.sent)  # those sent by the push's time
        for (base, attrs), stats in sorted(_series(pushed.points).items()):
            avg, top = stats.get("avg"), stats.get("max")
            if avg is None or top is None or not (math.isfinite(avg) and math.isfinite(top)):
                continue
            judged += top > 0
            short = ".".join(base.split(".")[-2:])  # request.latency, throttle.time
            name = f"push {pushed.number}: {short}" + (f"{{{attrs}}}" if attrs else "")
            if len(shown) < 8 and top > 0:
                shown.append(f"{name} avg {avg:g} max {top:g}, {requests} requests sent")
            if avg > top * (1 + 1e-9) + 1e-9:
                wrong.append(f"{name}: avg {avg:g} above max {top:g}")
            elif avg * requests + SLACK_MS < top:
                wrong.append(f"{name}: avg {avg:g} x {requests} requests sent < max {top:g}")
    check.observe("per-request averages and maxima (the first with a non-zero max)", shown)
    check.precondition(
        "pushed .avg/.max pairs of a per-request metric with a non-zero max",
        ">= 1",
        judged,
        ok=judged > 0,
    )
    check.expect("averages outside [max / requests sent, max]", [], wrong[:12])
