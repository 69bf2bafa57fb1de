"""Scale of the volume comparison, measured: pandas up to its memory limit, Spark to 4x beyond it.

Issue 16 item 5 asks for the Spark job to be measured, not extrapolated. Synthetic volume runs
(`volumes_synthetic`: 100 samples per partition for each of 3 metrics, so 300 sample rows per
partition) go through both engines, each engine in its own subprocess:

1. The fixed sizes (`--sizes`: 1k, 10k and 100k partitions) on both engines. The Spark/pandas
   time ratio at 100k partitions is the first goal (at most 1.5x).
2. pandas' limit: from the largest fixed size, pandas runs at double the size until it fails,
   then `--bisect` halving steps between the largest size it completed (L) and the smallest it
   failed at.
3. Spark on L, 2L and 4L; pandas on 2L, where it must fail. Spark finishing at 4L within the
   same cap is the second goal.

The cap (`--memory-limit-gb`, 6 GiB by default) stands in for the machine's memory, so that the
whole benchmark takes about ten minutes. The parent polls each worker's resident memory, with its
children (Spark's JVM) included, and stops the worker at the cap. A pandas run that completes
with a peak (VmHWM) above the cap counts as failed too. The cap is on resident memory, not on
RLIMIT_AS: here pandas' address space runs 1.2-2.4 GiB above its resident peak (allocator
reservations), so an address-space cap would stop it below the memory it really uses.
`--memory-limit-gb` set just under the machine's RAM measures the real limit: at about 160 bytes
per sample row, near 150 million rows on 24 GiB. The run then takes far longer.

Times cover the comparison alone: reading the Parquet, judging, and writing the result and the
summary. Spark's session start and its first (cold, JIT-compiling) comparison are printed apart
and not counted. Spark's peak is its JVM's VmHWM, reset before each size.

Run: `make bench-volumes` (or `python benchmarks/volumes.py --memory-limit-gb 4 --bisect 1`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SAMPLES = 100
METRICS = 3
RATIO_GOAL = 1.5  # Spark within 1.5x of pandas at GOAL_PARTITIONS
GOAL_PARTITIONS = 100_000
STEP = 1000  # sizes searched are multiples of this many partitions
Result = dict[str, Any]  # one engine at one size, as a worker reports it or a failure


def _rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


# --- workers (run as subprocesses of the parent) ---------------------------------------------


def generate_worker(directory: Path, partitions: int, samples: int) -> Result:
    """Write one size's input in its own process: the parent stays small while pandas runs."""
    from kconform.pipelines.volumes_synthetic import write_synthetic

    began = time.perf_counter()
    faults = [("t0", 0, "MessagesInPerSec", 1.0)]
    write_synthetic(directory, partitions, samples=samples, faults=faults)
    return {"seconds": time.perf_counter() - began}


def pandas_worker(directory: Path) -> Result:
    from kconform.pipelines.volumes_pandas import compare_volumes_pandas

    started = time.perf_counter()
    summary = compare_volumes_pandas(
        directory / "ledger.parquet", directory / "samples.parquet", directory / "pandas"
    )
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over fork+exec, so a worker
    # would report the parent's peak as its own
    return {
        "seconds": time.perf_counter() - started,
        "peak_mb": _rss_mb("self", "VmHWM"),
        "mismatch": summary["totals"]["mismatch"],
        "rows": summary["totals"]["rows"],
    }


def spark_worker(directories: list[Path], memory: str) -> None:
    """One JVM for every size, one JSON line per size as soon as it is done: if the cap stops
    the worker at the largest size, the smaller ones are still reported."""
    from kconform.engine.volumes.compare import compare_volumes
    from kconform.fixtures.spark import local_spark

    started = time.perf_counter()
    spark = local_spark("local[2]", driver_memory=memory)
    spark.range(1).collect()
    start_seconds = time.perf_counter() - started
    jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
    cold = time.perf_counter()
    first = directories[0]
    compare_volumes(spark, first / "ledger.parquet", first / "samples.parquet", first / "cold")
    print(json.dumps({"start_seconds": start_seconds, "cold_seconds": time.perf_counter() - cold}))
    for directory in directories:
        resettable = _reset_peak(jvm)
        began = time.perf_counter()
        summary = compare_volumes(
            spark, directory / "ledger.parquet", directory / "samples.parquet", directory / "spark"
        )
        result = {
            "partitions": int(directory.name),
            "seconds": time.perf_counter() - began,
            "peak_mb": _rss_mb(jvm, "VmHWM"),
            "peak_reset": resettable,
            "mismatch": summary["totals"]["mismatch"],
            "rows": summary["totals"]["rows"],
        }
        print(json.dumps(result), flush=True)
        shutil.rmtree(directory / "spark", ignore_errors=True)
    spark.stop()


def _reset_peak(pid: int) -> bool:
    """Reset the JVM's VmHWM (Linux clear_refs 5), so each size reports its own peak."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


# --- the parent -------------------------------------------------------------------------------


def run_worker(argv: list[str], limit_mb: float) -> tuple[list[Result], str | None]:
    """Run this script as a worker under the cap: the JSON lines it printed, and None or why it
    did not finish (stopped at the cap, or exited with an error)."""
    env = {**os.environ, "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
    began = time.perf_counter()
    failure: str | None = None
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [sys.executable, __file__, *argv], stdout=output, stderr=subprocess.DEVNULL, env=env
        )
        while process.poll() is None:
            rss = _tree_rss_mb(process.pid)
            if rss > limit_mb:
                process.kill()
                process.wait()
                failure = (
                    f"stopped at {rss / 1024:.1f} GiB after {time.perf_counter() - began:.0f} s"
                )
                break
            time.sleep(0.05)
        output.seek(0)
        results = [json.loads(line) for line in output.read().splitlines() if line[:1] == "{"]
    if failure is None and process.returncode:
        failure = f"exited {process.returncode}"
    return results, failure


def _tree_rss_mb(pid: int) -> float:
    """RSS of a worker and its children (Spark's JVM is the Python driver's child)."""
    total = _rss_mb(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(_tree_rss_mb(int(c)) for c in children)


class Bench:
    """The inputs on disk, and pandas' results per size (each size is run at most once)."""

    def __init__(self, root: Path, samples: int, limit_mb: float) -> None:
        self.root, self.samples, self.limit_mb = root, samples, limit_mb
        self.pandas: dict[int, Result] = {}
        self.generated: dict[int, float] = {}

    def data(self, partitions: int) -> Path:
        directory = self.root / str(partitions)
        if not (directory / "samples.parquet").exists():
            argv = ["--worker", "generate", "--inputs", str(directory)]
            argv += ["--partitions", str(partitions), "--samples", str(self.samples)]
            results, failure = run_worker(argv, float("inf"))
            if failure or not results:
                raise RuntimeError(f"generating {partitions:,} partitions: {failure}")
            self.generated[partitions] = results[0]["seconds"]
        return directory

    def run_pandas(self, partitions: int) -> bool:
        """Whether pandas completes this size within the cap (the result is kept)."""
        if partitions not in self.pandas:
            argv = ["--worker", "pandas", "--inputs", str(self.data(partitions))]
            results, failure = run_worker(argv, self.limit_mb)
            result: Result = results[0] if results and not failure else {"failure": failure}
            if "peak_mb" in result and result["peak_mb"] > self.limit_mb:
                result = {"failure": f"completed at a {result['peak_mb'] / 1024:.1f} GiB peak"}
            self.pandas[partitions] = result
            shutil.rmtree(self.root / str(partitions) / "pandas", ignore_errors=True)
        return "failure" not in self.pandas[partitions]

    def pandas_limit(self, start: int, bisect: int) -> tuple[int, int]:
        """(largest size pandas completed, smallest size it failed at), found by doubling from
        `start` (halving if pandas fails there already), then `bisect` halving steps."""
        ok, failed = 0, 0
        size = start
        for _ in range(8):  # 256x either way: the cap, not this bound, ends the search
            if self.run_pandas(size):
                ok = size
                if failed:
                    break
                size *= 2
            else:
                failed = size
                if ok or size <= STEP:
                    break
                size = max(STEP, size // 2 // STEP * STEP)
        if not ok or not failed:
            raise RuntimeError(f"no limit bracketed from {start:,} partitions: raise the bound")
        for _ in range(bisect):
            middle = (ok + failed) // 2 // STEP * STEP
            if middle in (ok, failed):
                break
            if self.run_pandas(middle):
                ok = middle
            else:
                failed = middle
        return ok, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000,100000", help="partitions, both engines")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="per partition and metric")
    parser.add_argument("--memory-limit-gb", type=float, default=6.0, help="the cap, both engines")
    parser.add_argument("--bisect", type=int, default=2, help="halving steps for pandas' limit")
    parser.add_argument("--spark-memory", default=None, help="driver heap (default: half the cap)")
    parser.add_argument("--dir", type=Path, default=None, help="keep the data here")
    parser.add_argument("--worker", choices=("generate", "pandas", "spark"), help=argparse.SUPPRESS)
    parser.add_argument("--inputs", default="", help=argparse.SUPPRESS)
    parser.add_argument("--partitions", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    heap = args.spark_memory or f"{max(1, int(args.memory_limit_gb // 2))}g"
    if args.worker == "generate":
        print(json.dumps(generate_worker(Path(args.inputs), args.partitions, args.samples)))
        return
    if args.worker == "pandas":
        print(json.dumps(pandas_worker(Path(args.inputs))))
        return
    if args.worker == "spark":
        spark_worker([Path(d) for d in args.inputs.split(",")], heap)
        return

    root = args.dir or Path(tempfile.mkdtemp(prefix="kconform-bench-volumes-"))
    bench = Bench(root, args.samples, args.memory_limit_gb * 1024)
    began = time.perf_counter()
    fixed = sorted(int(s) for s in args.sizes.split(","))
    for size in fixed:
        bench.run_pandas(size)
    limit, failed = bench.pandas_limit(fixed[-1], args.bisect)
    bench.run_pandas(2 * limit)
    spark_sizes = sorted({*fixed, limit, 2 * limit, 4 * limit})
    inputs = ",".join(str(bench.data(s)) for s in spark_sizes)
    lines, failure = run_worker(
        ["--worker", "spark", "--inputs", inputs, "--spark-memory", heap], bench.limit_mb
    )
    spark = {r["partitions"]: r for r in lines if "partitions" in r}
    session = next((r for r in lines if "start_seconds" in r), None)
    report(args, heap, bench, (limit, failed), spark, session, failure)
    print(f"whole benchmark: {time.perf_counter() - began:.0f} s")
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)


def report(
    args: argparse.Namespace,
    heap: str,
    bench: Bench,
    bracket: tuple[int, int],
    spark: dict[int, Result],
    session: Result | None,
    spark_failure: str | None,
) -> None:
    import pandas as pd
    import pyspark

    limit = bracket[0]
    per = args.samples * METRICS
    print(
        f"volume comparison: {args.samples} samples x {METRICS} metrics per partition; pandas "
        f"{pd.__version__} (1 process) vs Spark {pyspark.__version__} local[2] (driver heap "
        f"{heap}); {os.cpu_count()} cores; cap {args.memory_limit_gb:g} GiB resident per engine"
    )
    if session:
        print(
            f"Spark session start {session['start_seconds']:.1f} s, first comparison in a fresh "
            f"JVM {session['cold_seconds']:.1f} s (neither counted)"
        )
    marks = {limit: "L", 2 * limit: "2L", 4 * limit: "4L"}
    print(
        f"{'partitions':>10} {'':>2} {'sample rows':>12} {'pandas':>36} {'Spark s':>8} "
        f"{'s/M rows':>8} {'JVM peak':>9} {'spark/pandas':>12} {'agree':>5}"
    )
    for size in sorted({*bench.pandas, *spark}):
        p, s = bench.pandas.get(size), spark.get(size)
        if p is None:
            p_cell = "not run"
        elif "failure" in p:
            p_cell = f"FAILED: {p['failure']}"
        else:
            p_cell = f"{p['seconds']:.2f} s, peak {p['peak_mb'] / 1024:.2f} GiB"
        if s:
            star = "" if s["peak_reset"] else "*"
            s_cell = (
                f"{s['seconds']:>8.2f} {s['seconds'] / (size * per / 1e6):>8.3f} "
                f"{s['peak_mb'] / 1024:>5.2f}GiB{star}"
            )
        else:
            s_cell = f"{'-':>8} {'-':>8} {'-':>9}"
        ratio, agree = "-", "-"
        if p and s and "failure" not in p:
            ratio = f"{s['seconds'] / p['seconds']:.2f}x"
            agree = "yes" if (p["mismatch"], p["rows"]) == (s["mismatch"], s["rows"]) else "NO"
        print(
            f"{size:>10,} {marks.get(size, ''):>2} {size * per:>12,} {p_cell:>36} {s_cell} "
            f"{ratio:>12} {agree:>5}"
        )
    if spark_failure:
        print(f"Spark did not finish every size: {spark_failure}")
    generated = sum(bench.generated.values())
    print(f"data generation (not counted): {generated:.0f} s for {len(bench.generated)} sizes")
    verdicts(args, bench, bracket, spark)


def verdicts(
    args: argparse.Namespace, bench: Bench, bracket: tuple[int, int], spark: dict[int, Result]
) -> None:
    """The measured limit and the two goals, each as a line that says met or not."""
    limit, failed = bracket
    per = args.samples * METRICS
    cap = args.memory_limit_gb
    at_limit = bench.pandas[limit]
    print(
        f"pandas' limit under the {cap:g} GiB cap: {limit:,} partitions ({limit * per / 1e6:,.1f}"
        f" M sample rows, peak {at_limit['peak_mb'] / 1024:.2f} GiB); it failed at {failed:,}"
    )
    doubled = bench.pandas[2 * limit]
    print(
        f"pandas at 2x its limit ({2 * limit:,} partitions): "
        + (f"FAILED, {doubled['failure']}" if "failure" in doubled else "completed (unexpected)")
    )
    p, s = bench.pandas.get(GOAL_PARTITIONS), spark.get(GOAL_PARTITIONS)
    if p and s and "failure" not in p:
        ratio = s["seconds"] / p["seconds"]
        met = "met" if ratio <= RATIO_GOAL else "NOT met"
        print(
            f"goal: Spark within {RATIO_GOAL}x of pandas at {GOAL_PARTITIONS:,} partitions: "
            f"{ratio:.2f}x ({s['seconds']:.1f} s against {p['seconds']:.1f} s): {met}"
        )
    else:
        print(f"goal: the ratio at {GOAL_PARTITIONS:,} partitions was not measured")
    top = spark.get(4 * limit)
    if top:
        print(
            f"goal: Spark finishes at 4x pandas' limit ({4 * limit:,} partitions, "
            f"{4 * limit * per / 1e6:,.1f} M sample rows) under the same cap: met, in "
            f"{top['seconds']:.1f} s, JVM peak {top['peak_mb'] / 1024:.2f} GiB"
        )
    else:
        print(f"goal: Spark finishes at 4x pandas' limit ({4 * limit:,} partitions): NOT met")


if __name__ == "__main__":
    main()
