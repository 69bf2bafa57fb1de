"""Scale of the volume comparison: Spark `local[2]` against single-process pandas, same run.

Issue 7 asks when the Spark job earns its JVM. Synthetic volume runs (`volumes_synthetic`: 1k,
10k and 100k partitions; 100 samples per partition for each of 3 metrics, so 0.3, 3 and 30
million sample rows) are compared by both engines, each in its own process so peak memory is
its own: pandas' peak RSS (VmHWM: `getrusage` would count the parent's too), Spark's as its
driver JVM's VmHWM. Times are the comparison alone (read Parquet, judge, write the result and
the summary); Spark's session start is printed once, apart, and its first (cold, JIT-compiling)
run is not counted.
The parent polls each worker's RSS and stops one that passes `--memory-limit-gb`, so running out
of memory is observed at a limit, never by exhausting the machine; beyond the sizes measured
the growth is extrapolated from the last two sizes, and the output says so.

Run: `make bench-volumes` (or `python benchmarks/volumes.py --sizes 1000,10000`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SAMPLES = 100
METRICS = 3


def _rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


# --- workers (run as subprocesses of the parent) ---------------------------------------------


def pandas_worker(directory: Path) -> dict[str, Any]:
    from kconform.pipelines.volumes_pandas import compare_volumes_pandas

    baseline = _rss_mb()
    started = time.perf_counter()
    summary = compare_volumes_pandas(
        directory / "ledger.parquet", directory / "samples.parquet", directory / "pandas"
    )
    seconds = time.perf_counter() - started
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over fork+exec, so a worker
    # would report the parent's peak (the data generation) as its own
    peak = _rss_mb("self", "VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "seconds": seconds,
        "peak_mb": peak,
        "import_mb": baseline,
        "mismatch": summary["totals"]["mismatch"],
        "rows": summary["totals"]["rows"],
    }


def spark_worker(directories: list[Path], memory: str) -> list[dict[str, Any]]:
    from kconform.pipelines.spark import local_spark
    from kconform.pipelines.volumes import compare_volumes

    started = time.perf_counter()
    spark = local_spark("local[2]", driver_memory=memory)
    spark.range(1).collect()
    start_seconds = time.perf_counter() - started
    jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
    out: list[dict[str, Any]] = []
    cold = time.perf_counter()
    compare_volumes(
        spark,
        directories[0] / "ledger.parquet",
        directories[0] / "samples.parquet",
        directories[0] / "spark-cold",
    )
    cold_seconds = time.perf_counter() - cold
    for directory in directories:
        resettable = _reset_peak(jvm)
        began = time.perf_counter()
        summary = compare_volumes(
            spark, directory / "ledger.parquet", directory / "samples.parquet", directory / "spark"
        )
        out.append(
            {
                "seconds": time.perf_counter() - began,
                "start_seconds": start_seconds,
                "cold_seconds": cold_seconds,
                "jvm_peak_mb": _rss_mb(jvm, "VmHWM"),
                "peak_reset": resettable,
                "python_mb": _rss_mb(),
                "mismatch": summary["totals"]["mismatch"],
                "rows": summary["totals"]["rows"],
            }
        )
    spark.stop()
    return out


def _reset_peak(pid: int) -> bool:
    """Reset the JVM's VmHWM (Linux clear_refs 5), so each size reports its own peak."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


# --- the parent -------------------------------------------------------------------------------


def run_worker(argv: list[str], limit_mb: float) -> tuple[Any, str | None]:
    """Run this script as a worker; (its JSON answer, None) or (None, why it was stopped)."""
    env = {**os.environ, "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [sys.executable, __file__, *argv], stdout=output, stderr=subprocess.DEVNULL, env=env
        )
        peak = 0.0
        while process.poll() is None:
            peak = max(peak, _tree_rss_mb(process.pid))
            if peak > limit_mb:
                process.kill()
                process.wait()
                return None, f"stopped at {peak / 1024:.1f} GiB RSS (limit {limit_mb / 1024:.0f})"
            time.sleep(0.1)
        output.seek(0)
        lines = [line for line in output.read().splitlines() if line[:1] in ("{", "[")]
    if process.returncode or not lines:
        return None, f"worker exited {process.returncode}"
    return json.loads(lines[-1]), None


def _tree_rss_mb(pid: int) -> float:
    """RSS of a worker and its children (Spark's JVM is the Python driver's child)."""
    total = _rss_mb(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(_tree_rss_mb(int(c)) for c in children)


def grow(values: list[float]) -> str:
    return " ".join(f"x{b / a:.1f}" for a, b in itertools.pairwise(values) if a > 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000,100000", help="partitions, comma separated")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="per partition and metric")
    parser.add_argument("--spark-memory", default="4g", help="Spark driver heap")
    parser.add_argument("--memory-limit-gb", type=float, default=12.0)
    parser.add_argument("--dir", type=Path, default=None, help="keep the data here")
    parser.add_argument("--worker", choices=("pandas", "spark"), help=argparse.SUPPRESS)
    parser.add_argument("--inputs", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "pandas":
        print(json.dumps(pandas_worker(Path(args.inputs))))
        return
    if args.worker == "spark":
        dirs = [Path(d) for d in args.inputs.split(",")]
        print(json.dumps(spark_worker(dirs, args.spark_memory)))
        return
    from kconform.pipelines.volumes_synthetic import write_synthetic

    sizes = [int(s) for s in args.sizes.split(",")]
    root = args.dir or Path(tempfile.mkdtemp(prefix="kconform-bench-volumes-"))
    limit = args.memory_limit_gb * 1024
    dirs, generated = [], []
    for size in sizes:
        began = time.perf_counter()
        write_synthetic(
            root / str(size),
            size,
            samples=args.samples,
            faults=[("t0", 0, "MessagesInPerSec", 1.0)],
        )
        dirs.append(root / str(size))
        generated.append(time.perf_counter() - began)
    pandas = [run_worker(["--worker", "pandas", "--inputs", str(d)], limit) for d in dirs]
    spark, why = run_worker(
        [
            "--worker",
            "spark",
            "--inputs",
            ",".join(map(str, dirs)),
            "--spark-memory",
            args.spark_memory,
        ],
        limit,
    )
    report(sizes, args.samples, generated, pandas, spark, why, args.spark_memory)
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)


def report(
    sizes: list[int],
    samples: int,
    generated: list[float],
    pandas: list[tuple[Any, str | None]],
    spark: Any,
    why: str | None,
    memory: str,
) -> None:
    import pandas as pd
    import pyspark

    print(
        f"volume comparison: {samples} samples x {METRICS} metrics per partition; "
        f"pandas {pd.__version__} (1 process) vs Spark {pyspark.__version__} local[2] "
        f"(driver heap {memory}); {os.cpu_count()} cores"
    )
    if spark:
        print(
            f"Spark session start {spark[0]['start_seconds']:.1f} s (once per run, not counted);"
            f" first comparison in a fresh JVM {spark[0]['cold_seconds']:.1f} s (not counted)"
        )
    elif why:
        print(f"Spark: {why}")
    print(
        f"{'partitions':>10} {'sample rows':>12} {'pandas s':>9} {'pandas peak':>12} "
        f"{'spark s':>8} {'spark JVM peak':>15} {'faster':>7} {'agree':>6}"
    )
    pandas_t, spark_t, pandas_mb = [], [], []
    for i, size in enumerate(sizes):
        p, p_why = pandas[i]
        s = spark[i] if spark else None
        p_cell = f"{p['seconds']:>9.2f} {p['peak_mb'] / 1024:>9.2f} GiB" if p else f"{p_why:>22}"
        s_cell = (
            (
                f"{s['seconds']:>8.2f} {s['jvm_peak_mb'] / 1024:>11.2f} GiB"
                + ("" if s["peak_reset"] else "*")
            )
            if s
            else f"{'-':>8} {'-':>15}"
        )
        faster = "-" if not (p and s) else ("spark" if s["seconds"] < p["seconds"] else "pandas")
        agree = (
            "-"
            if not (p and s)
            else ("yes" if (p["mismatch"], p["rows"]) == (s["mismatch"], s["rows"]) else "NO")
        )
        print(
            f"{size:>10,} {size * samples * METRICS:>12,} {p_cell} {s_cell} {faster:>7} {agree:>6}"
        )
        if p:
            pandas_t.append(p["seconds"])
            pandas_mb.append(p["peak_mb"])
        if s:
            spark_t.append(s["seconds"])
    print(
        f"growth per x10 partitions: pandas time {grow(pandas_t)}, Spark time {grow(spark_t)}, "
        f"pandas peak RSS {grow(pandas_mb)}"
    )
    print(f"data generation: {', '.join(f'{g:.1f} s' for g in generated)}")
    extrapolate(sizes, samples, pandas_t, spark_t, pandas_mb)


def extrapolate(
    sizes: list[int],
    samples: int,
    pandas_t: list[float],
    spark_t: list[float],
    pandas_mb: list[float],
) -> None:
    """Straight lines through the last two measured sizes: each engine's marginal cost per
    sample row (both are linear in the rows once Spark's fixed cost is paid), where the lines
    cross, and where pandas' memory line reaches the machine's RAM. Printed as extrapolation."""
    n = min(len(pandas_t), len(spark_t))
    if n < 2 or len(pandas_mb) < 2:
        return
    per = samples * METRICS
    r0, r1 = sizes[n - 2] * per, sizes[n - 1] * per
    pandas_cost = (pandas_t[n - 1] - pandas_t[n - 2]) / (r1 - r0)
    spark_cost = (spark_t[n - 1] - spark_t[n - 2]) / (r1 - r0)
    print(
        f"marginal cost per million sample rows ({sizes[n - 2]:,} -> {sizes[n - 1]:,}): "
        f"pandas {pandas_cost * 1e6:.2f} s, Spark local[2] {spark_cost * 1e6:.2f} s"
    )
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    per_row = (pandas_mb[-1] - pandas_mb[-2]) / (r1 - r0) * 2**20
    out_of_memory = (total_mb - pandas_mb[-1]) * 2**20 / per_row + r1 if per_row > 0 else math.inf
    if spark_t[n - 1] < pandas_t[n - 1]:
        first = next(s for s, p, q in zip(sizes, pandas_t, spark_t, strict=False) if q < p)
        print(f"measured: Spark is faster from {first:,} partitions on")
    elif spark_cost < pandas_cost:
        cross = r1 + (spark_t[n - 1] - pandas_t[n - 1]) / (pandas_cost - spark_cost)
        print(
            f"extrapolated (not measured): Spark overtakes pandas near {cross / per:,.0f} "
            f"partitions ({cross / 1e6:,.0f} million sample rows)"
        )
    else:
        print(
            "extrapolated (not measured): Spark's marginal cost is not below pandas' here, so its "
            "fixed cost is never won back on this machine; it overtakes only where pandas can "
            "no longer run"
        )
    if math.isfinite(out_of_memory):
        print(
            f"extrapolated (not measured): pandas' peak grows {per_row:.0f} bytes per sample row;"
            f" {total_mb / 1024:.0f} GiB would be used up near {out_of_memory / 1e6:,.0f} million"
            f" rows = {out_of_memory / per:,.0f} partitions at {samples} samples x {METRICS} "
            "metrics; Spark's JVM stays within its heap (aggregations spill to disk)"
        )


if __name__ == "__main__":
    main()
