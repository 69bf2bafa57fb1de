"""Coverage-guided request fuzzing against the same fuzzer unguided: branches reached over time.

Issue 32 item 4. Both arms are `kconform fuzz --target apache:<v> --cases fuzz.request.` with
the same seed and budget, in this one invocation, one after the other (`--side-by-side`: at
once, each on its own node, so both meet the same load; on 2 cores each slows the other's
broker, equally): `--coverage-unguided` (JaCoCo on the
nodes, probes read after every batch, nothing kept: what the plain fuzzer sends) and
`--coverage-guided` (batches that set a new probe kept, three examples in four led by requests
derived from them). Each arm prints the branches of the chosen methods (docs/coverage.md)
that its requests reached, counted by `jacococli report` from the probes first set before
each moment; this prints them side by side after 5 and 30 minutes (those the budget reaches)
and at the end, with each arm's examples, corpus and verdicts. Findings go to a temporary
corpus.

The nodes get `--heap` (default -Xmx2g, through `KCONFORM_APACHE_HEAP`): with 512 MB the push
cases' 1 MiB pushes, 64 pipelined on 4 connections, ran 4.4.0 out of heap in both arms of a
30-minute run, and every later case met a dead node.

Run: `python benchmarks/fuzz_coverage.py` (30 minutes per arm), or shorter:
`python benchmarks/fuzz_coverage.py --minutes 5`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kconform.engine.fuzz.budget import CORPUS_ENV
from kconform.fixtures.targets.kraft_config import HEAP_ENV

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("unguided", "guided")
MOMENTS = (5, 30)  # minutes
RUN_MARGIN = 1800.0  # seconds beyond the budget for start-up, reports and the reach mapping


def start_arm(arm: str, args: argparse.Namespace, tmp: Path) -> subprocess.Popen[str]:
    """One `kconform fuzz` run, started (its output to a file in `tmp`)."""
    command = [
        sys.executable, "-m", "kconform.cli", "fuzz", "--target", args.target,
        "--budget", f"{args.minutes}m", "--seed", str(args.seed), "--cases", args.cases,
        f"--coverage-{arm}", "--out", str(tmp / arm),
    ]  # fmt: skip
    env = {**os.environ, CORPUS_ENV: str(tmp / f"corpus-{arm}"), HEAP_ENV: args.heap}
    log = (tmp / f"{arm}.log").open("w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=ROOT)  # fmt: skip


def finish_arm(arm: str, run: subprocess.Popen[str], args: argparse.Namespace,
               tmp: Path, started: float) -> dict[str, Any]:  # fmt: skip
    """Wait for an arm; its reach.json, results and wall time."""
    code = run.wait(timeout=args.minutes * 60 + RUN_MARGIN)
    took = time.monotonic() - started
    reach = tmp / arm / "coverage" / "guided" / "reach.json"
    if not reach.is_file():
        sys.exit(f"{arm}: no reach.json (exit {code}):\n{(tmp / f'{arm}.log').read_text()[-3000:]}")
    results = json.loads((tmp / arm / "results.json").read_text())["results"]
    return {"reach": json.loads(reach.read_text()), "results": results, "seconds": took}


def run_arms(args: argparse.Namespace, tmp: Path) -> dict[str, dict[str, Any]]:
    """Both arms, one after the other or (`--side-by-side`) at once."""
    runs: dict[str, dict[str, Any]] = {}
    if args.side_by_side:
        started = time.monotonic()
        running = {arm: start_arm(arm, args, tmp) for arm in ARMS}
        for arm in ARMS:
            runs[arm] = finish_arm(arm, running[arm], args, tmp, started)
        return runs
    for arm in ARMS:
        started = time.monotonic()
        runs[arm] = finish_arm(arm, start_arm(arm, args, tmp), args, tmp, started)
    return runs


def at_minute(points: list[dict[str, Any]], minute: float) -> dict[str, Any] | None:
    """The last point at or before `minute` (None when the run's first point is later)."""
    before = [p for p in points if p["seconds"] <= minute * 60 + 1e-6]
    return before[-1] if before else None


def branches(point: dict[str, Any] | None) -> str:
    if point is None:
        return "-"
    covered, total = point["branches"]
    return f"{covered}/{total} ({point['probes']} probes)"


def examples(results: list[dict[str, Any]]) -> int:
    total = 0
    for r in results:
        seen = {e["what"]: e["observed"] for e in r["expectations"]}
        total += int(seen.get("examples run") or 0)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="apache:4.4.0")
    parser.add_argument("--minutes", type=float, default=30.0, help="budget of each arm")
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--cases", default="fuzz.request.")
    parser.add_argument("--heap", default="-Xmx2g", help="the nodes' heap (KCONFORM_APACHE_HEAP)")
    parser.add_argument("--side-by-side", action="store_true", help="both arms at once")
    parser.add_argument(
        "--out", help="keep each arm's report and log here (default: a temporary folder)"
    )
    args = parser.parse_args()
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        runs = run_arms(args, Path(args.out))
    else:
        with tempfile.TemporaryDirectory(prefix="kconform-bench-fuzzcov-") as tmp:
            runs = run_arms(args, Path(tmp))
    order = "side by side" if args.side_by_side else "one after the other (unguided first)"
    print(f"request fuzzing on {args.target}, {args.minutes:g} min per arm, seed {args.seed}, "
          f"nodes {args.heap}, arms {order}")  # fmt: skip
    print(f"{'after':<10} {'unguided branches':>28} {'guided branches':>28} {'ratio':>7}")
    moments = [m for m in MOMENTS if m <= args.minutes]
    ends = {arm: runs[arm]["reach"]["points"][-1] for arm in ARMS}
    rows: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]] = []
    for m in moments:
        first, second = (at_minute(runs[a]["reach"]["points"], m) for a in ARMS)
        rows.append((f"{m} min", first, second))
    rows.append(("end", ends["unguided"], ends["guided"]))
    for label, unguided, guided in rows:
        ratio = "-"
        if unguided and guided and unguided["branches"][0]:
            ratio = f"{guided['branches'][0] / unguided['branches'][0]:.2f}x"
        print(f"{label:<10} {branches(unguided):>28} {branches(guided):>28} {ratio:>7}")
    for arm in ARMS:
        run = runs[arm]
        verdicts = sorted({r["verdict"] for r in run["results"]})
        corpus = sum(c["corpus"] for c in run["reach"]["cases"])
        end = run["reach"]["points"][-1]["seconds"] / 60
        took, shown = run["seconds"] / 60, ", ".join(verdicts)
        print(f"{arm}: {examples(run['results'])} requests, corpus {corpus}, fuzzing "
              f"{end:.1f} min, run {took:.1f} min, verdicts {shown}")  # fmt: skip
        for case in run["reach"]["cases"]:
            print(f"  {case['case']:<42} probes {case['probes']:>4} corpus {case['corpus']:>3} "
                  f"derived {case['derived']:>4} fresh {case['fresh']:>4}")  # fmt: skip


if __name__ == "__main__":
    main()
