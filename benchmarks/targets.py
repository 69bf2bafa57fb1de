"""Start and stop times of the embedded targets, against the bare mock cluster as baseline.

Issue 3 asks that starting and stopping `reference` with 3 brokers takes under 5 s. The
reference is the mock plus the proxy, the reference brokers and an admin probe, so its cost is
printed as a ratio to starting the bare librdkafka mock in the same process.

Real Apache Kafka (`apache:<version>`, local KRaft processes) is measured beside them when a
distribution is found (KCONFORM_KAFKA_DISTS or the cache): start-to-ready (probe answered with
every broker, every sink healthy) for 1 and 3 nodes. The plugin build is done once before timing,
as a second run finds it cached.

Run: `make bench` (or `python benchmarks/targets.py --rounds 5 --apache 4.1.0`).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from kconform.fixtures.targets import kafka_dist
from kconform.fixtures.targets.apache import ApacheTarget
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.targets.librdkafka_mock import LibrdkafkaMockTarget
from kconform.fixtures.targets.reference import ReferenceTarget

GOAL_SECONDS = 5.0


def cycle(factory: Callable[[], BrokerTarget], rounds: int) -> tuple[float, float]:
    """Median start and stop times in seconds over `rounds` cycles."""
    starts, stops = [], []
    for _ in range(rounds):
        target = factory()
        t0 = time.perf_counter()
        target.start()
        t1 = time.perf_counter()
        target.stop()
        t2 = time.perf_counter()
        starts.append(t1 - t0)
        stops.append(t2 - t1)
    return statistics.median(starts), statistics.median(stops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--apache", default="", help="versions to measure (default: all found)")
    parser.add_argument("--apache-rounds", type=int, default=2)
    args = parser.parse_args()
    n = args.brokers
    base_start, base_stop = cycle(lambda: LibrdkafkaMockTarget(brokers=n), args.rounds)
    ref_start, ref_stop = cycle(lambda: ReferenceTarget(brokers=n), args.rounds)
    print(f"target start/stop, {n} brokers, median of {args.rounds} (baseline: bare mock)")
    print(f"{'target':<18} {'start ms':>9} {'stop ms':>8} {'total/baseline':>15}")
    print(f"{'librdkafka_mock':<18} {base_start * 1e3:>9.0f} {base_stop * 1e3:>8.0f} {1:>14.2f}x")
    ratio = (ref_start + ref_stop) / (base_start + base_stop)
    print(f"{'reference':<18} {ref_start * 1e3:>9.0f} {ref_stop * 1e3:>8.0f} {ratio:>14.2f}x")
    total = ref_start + ref_stop
    verdict = "within" if total < GOAL_SECONDS else "OVER"
    print(f"reference start+stop {total:.2f} s: {verdict} the {GOAL_SECONDS:.0f} s goal")
    versions = [v for v in args.apache.split(",") if v] or [
        d.version for d in kafka_dist.available()
    ]
    if not versions:
        print("apache: no distribution found (set KCONFORM_KAFKA_DISTS): not measured")
        return
    print(f"\napache start-to-ready / stop, median of {args.apache_rounds} (same run)")
    print(f"{'target':<18} {'nodes':>5} {'ready s':>8} {'stop s':>7} {'ready/reference':>16}")
    for version in versions:
        ApacheTarget(version).prepare()  # unpack and build the plugin outside the timing
        for nodes in (1, 3):
            start, stop = cycle(lambda v=version, k=nodes: ApacheTarget(v, brokers=k),
                                args.apache_rounds)  # fmt: skip
            print(f"{'apache:' + version:<18} {nodes:>5} {start:>8.1f} {stop:>7.1f} "
                  f"{start / ref_start:>15.0f}x")  # fmt: skip


if __name__ == "__main__":
    main()
