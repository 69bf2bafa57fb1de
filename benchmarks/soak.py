"""How many concurrent simulated telemetry clients one machine drives, p99 push latency < 100 ms.

    python benchmarks/soak.py [--targets reference,apache:4.1.0] [--clients 2000,5000,10000]
                              [--interval-ms 30000] [--workers N] [--window 30]

For each target and client count: a soak with no faults (steady state), clients started over
`--ramp` seconds, PushIntervalMs `--interval-ms`. The latency is measured once every client
pushes at its interval (from ramp + 1.5 intervals, the latest first push) for `--window`
seconds; start-up and the final Terminating pushes are not in it. A count passes when the p99
of that window is under 100 ms, every client is connected and no request timed out; the
search stops at the first count that fails. Printed per count: pushes/s, p50/p99/max latency,
the fleet's event-loop lag, the CPU seconds per second each side used (fleet workers, the
process hosting the target, the broker JVMs) and how long it waited for a core (`-wait`, from
schedstat: other load on the machine), and the open file descriptors (the limit: `ulimit -n`),
which is what tells the broker, the event loop, the machine or file descriptors apart as the
limit.

From `--distinct` (20,000) distinct instances on (2 x clients), a count's run ends with a
turnover of `--turnover` seconds: every client closes cleanly and a new one (a new instance)
takes its place, so the run creates 2 x clients instances and Apache's 16,384-entry instance
cache must evict (`cached max` is the broker's own count, from the sink plugin's gauges).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kconform.soak.broker_stats import descendants
from kconform.soak.latency import histogram_percentile
from kconform.soak.options import SoakOptions
from kconform.soak.run import Coordinator
from kconform.soak.tables import merge_histograms

GOAL_MS = 100.0
GAP = 10.0  # seconds between the measured window and the turnover (no sample spans both)
CLIENTS_PER_WORKER = 9000  # a worker holds one socket per client: below the fd limit (ulimit -n)


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def run_queue_wait(pid: int) -> float:
    """Seconds the process's threads were runnable but waiting for a core (schedstat): high when
    something else (another process on the machine) holds the cores."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            total += int((task / "schedstat").read_text().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            continue
    return total


def open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


class Probe:
    """CPU and file descriptors of the processes in play, sampled while a soak runs."""

    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator
        self.cpu_start: dict[str, float] = {}
        self.cpu_end: dict[str, float] = {}
        self.fds_max: dict[str, int] = {}

    def processes(self) -> dict[str, list[int]]:
        groups = {"coordinator (target host)": [os.getpid()]}
        fleet: Any = self.coordinator.fleet
        if fleet is not None and hasattr(fleet, "_processes"):
            groups["fleet workers"] = [p.pid for p in fleet._processes if p.pid]
        target: Any = self.coordinator.target
        if target is not None and hasattr(target, "pids"):
            groups["broker JVMs"] = [c for n in target.pids().values() for c in descendants(n)[1:]]
        mock = getattr(getattr(target, "mock", None), "_proc", None)
        if mock is not None and getattr(mock, "pid", None):
            groups["librdkafka mock"] = [mock.pid]
        return groups

    def cpu(self) -> dict[str, float]:
        """CPU seconds used, and (keys ending in " wait") seconds spent waiting for a core."""
        out = {}
        for key, pids in self.processes().items():
            out[key] = sum(cpu_seconds(p) for p in pids)
            out[key + " wait"] = sum(run_queue_wait(p) for p in pids)
        return out

    def sample_fds(self) -> None:
        for key, pids in self.processes().items():
            self.fds_max[key] = max(self.fds_max.get(key, 0), max(map(open_fds, pids), default=0))


async def one(target: str, clients: int, args: argparse.Namespace) -> dict[str, Any]:
    interval = args.interval_ms / 1000
    settle = args.ramp + 1.5 * interval + 5
    turnover = args.turnover if clients * 2 >= args.distinct else 0.0
    options = SoakOptions(
        target=target,
        duration=settle + args.window + (GAP + turnover if turnover else 0.0),
        clients=clients,
        out=Path(tempfile.mkdtemp(prefix="kconform-bench-soak-")),
        workers=args.workers or -(-clients // CLIENTS_PER_WORKER),
        push_interval_ms=args.interval_ms,
        brokers=args.brokers,
        cadences=dict.fromkeys(
            ("subscription", "client_churn", "restart", "rolling_restart"), "none"
        ),
        sample_seconds=5.0,
        ramp_seconds=args.ramp,
        progress=False,
    )
    coordinator = Coordinator(options)
    probe = Probe(coordinator)
    task = asyncio.create_task(coordinator.run_soak())
    while coordinator.run.ledger is None and not task.done():
        await asyncio.sleep(0.5)
    marks: dict[str, float] = {}
    started = time.time()
    replaced = 0
    while not task.done():
        await asyncio.sleep(2.0)
        probe.sample_fds()
        elapsed = time.time() - started
        if not probe.cpu_start and elapsed >= settle:
            probe.cpu_start, marks["window"] = probe.cpu(), time.time()
        if probe.cpu_start and not probe.cpu_end and elapsed >= settle + args.window - 3:
            probe.cpu_end, marks["window_end"] = probe.cpu(), time.time()
        if turnover and elapsed >= settle + args.window + GAP and replaced < clients:
            replaced = replace_clients(coordinator, replaced, clients, turnover, elapsed)
    run = await task
    everything = run.writer.rows if run.writer else []
    rows = [
        r
        for r in everything
        if r["offset_s"] >= settle - 1e-6  # whole sample intervals within the window only
        and r["offset_s"] + r["bucket_end"] - r["bucket_start"] <= settle + args.window + 1
        and r["bucket_end"] <= run.judged_at + 1e-6
    ]
    turning = [
        r
        for r in everything
        if r["offset_s"] >= settle + args.window + GAP - 1
        and r["bucket_end"] <= run.judged_at + 1e-6
    ]
    hist = merge_histograms(r["latency_hist"] or [] for r in rows)
    span = sum(r["bucket_end"] - r["bucket_start"] for r in rows) or 1.0
    window = marks.get("window_end", time.time()) - marks.get("window", time.time())
    cpu = {k: round(probe.cpu_end.get(k, 0.0) - v, 1) for k, v in probe.cpu_start.items()}
    connected = max((r["clients_live"] for r in rows), default=0)
    timeouts = sum(r["timeouts"] + r["refused"] for r in rows)
    result = {
        "target": target,
        "clients": clients,
        "pushes_per_s": round(sum(r["pushes"] for r in rows) / span, 1),
        "p50_ms": histogram_percentile(hist, 50),
        "max_ms": round(max((r["latency_max_ms"] for r in rows), default=0.0), 1),
        "loop_lag_max_ms": round(max((r["loop_lag_max_ms"] for r in rows), default=0.0), 1),
        "cpu_s_per_s": {k: round(v / window, 2) for k, v in cpu.items()} if window > 0 else {},
        "fds_max": probe.fds_max,
        "clients_live": connected,
        "distinct_instances": max((r["distinct_instances"] for r in everything), default=0),
        "cached_max": max((r["cached_instances"] or 0 for r in everything), default=0),
        "turnover_p99_ms": histogram_percentile(
            merge_histograms(r["latency_hist"] or [] for r in turning), 99
        )
        if turning
        else None,
        "timeouts_or_refused": timeouts,
        "crash": run.crash,
        "unavailable": run.unavailable,
    }
    # the histogram's p99 is its bucket's upper bound: never above the largest latency seen
    result["p99_ms"] = min(histogram_percentile(hist, 99), result["max_ms"])
    result["ok"] = (
        not run.crash
        and not run.unavailable
        and result["p99_ms"] < GOAL_MS
        and timeouts == 0
        and connected >= clients
    )
    return result


def replace_clients(
    coordinator: Coordinator, replaced: int, clients: int, seconds: float, elapsed: float
) -> int:
    """Turnover: the first `clients` close cleanly and as many new ones (new instances)
    arrive, spread over `seconds`, so that a run creates 2 x `clients` distinct instances."""
    fleet, start = coordinator.fleet, elapsed - (coordinator.options.duration - seconds)
    if fleet is None:
        return replaced
    due = min(clients, round(clients * min(1.0, (start + 2.0) / seconds)))
    if due > replaced:
        fleet.close(list(range(replaced, due)), kill=False)
        coordinator._add_clients(due - replaced, ramp=2.0)
    return max(replaced, due)


def line(r: dict[str, Any]) -> str:
    cpu = " ".join(
        f"{k.split()[0]}{'-wait' if k.endswith(' wait') else ''} {v:.2f}"
        for k, v in r["cpu_s_per_s"].items()
    )
    fds = " ".join(f"{k.split()[0]} {v}" for k, v in r["fds_max"].items())
    verdict = "ok " if r["ok"] else "NO "
    return (
        f"{verdict}{r['target']:<14} {r['clients']:>6} {r['pushes_per_s']:>8} "
        f"{r['p50_ms']:>7.1f} {r['p99_ms']:>7.1f} {r['max_ms']:>8.1f} {r['loop_lag_max_ms']:>7.1f}"
        f"  cpu/s [{cpu}]  fds [{fds}]"
        + f"  instances {r['distinct_instances']} (cached max {r['cached_max']})"
        + (f" turnover p99 {r['turnover_p99_ms']:.1f}" if r["turnover_p99_ms"] is not None else "")
        + (f"  {r['crash'] or r['unavailable']}" if r["crash"] or r["unavailable"] else "")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--targets", default="reference,apache:4.1.0")
    parser.add_argument("--clients", default="2000,5000,10000,15000,20000")
    parser.add_argument("--interval-ms", type=int, default=30_000)
    parser.add_argument("--workers", type=int, default=0, help="0: one per 9,000 clients")
    parser.add_argument("--brokers", type=int, default=None)
    parser.add_argument("--ramp", type=float, default=30.0)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument(
        "--distinct", type=int, default=20_000,
        help="from this many distinct instances (2 x clients) on, a count's run ends with a "
        "turnover: every client replaced by a new instance (Apache's cache holds 16,384)",
    )  # fmt: skip
    parser.add_argument("--turnover", type=float, default=60.0, help="seconds of turnover")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    print(
        f"{os.cpu_count()} cores, file descriptors per process: {soft} (hard {hard}); "
        f"PushIntervalMs {args.interval_ms}, workers {args.workers}, goal p99 < {GOAL_MS} ms"
    )
    print("    target         clients  push/s     p50     p99      max  looplag")
    best: dict[str, int] = {}
    for target in args.targets.split(","):
        for clients in (int(c) for c in args.clients.split(",")):
            result = asyncio.run(one(target, clients, args))
            print(line(result), flush=True)
            if not result["ok"]:
                break
            best[target] = clients
    for target in args.targets.split(","):
        print(f"{target}: {best.get(target, 0)} concurrent clients with p99 < {GOAL_MS:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
