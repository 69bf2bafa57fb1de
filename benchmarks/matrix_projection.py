"""The projected wall time of `make matrix` side by side, from measured costs (issue 44).

Reads the Makefile's MATRIX_RELEASES, MATRIX_CLUSTER, MATRIX_TARGETS and MATRIX_CLIENTS, plans
the runs as `kconform matrix run` does, and gives each its cost: the `--costs` file's recorded
wall time, else its kind's estimate (`matrix_seconds`). Each run also gets a CPU share (CPU
seconds over wall seconds, measured: `--cpu-share name-prefix=share`, the longest matching
prefix wins; `--default-share` otherwise). Then:

  - one at a time: the sum of the costs;
  - side by side with `-j N`: the runs scheduled longest first onto N slots (what
    `kconform.matrix.schedule` does), assuming no run slows another: the makespan;
  - the CPU floor: the CPU the runs need, over the cores;
  - projected: the larger of the last two. Runs that share the cores do slow each other when
    their CPU exceeds the cores, which the floor bounds; the rest is waiting, which overlaps.

Run: `python benchmarks/matrix_projection.py --jobs 2 --cpu-share apache-=0.9 ...`.
"""

from __future__ import annotations

import argparse
import heapq
import os
import re
from pathlib import Path

from kconform.matrix.plan import Run, cost, plan_runs, read_costs

ROOT = Path(__file__).resolve().parents[1]


def make_list(name: str) -> list[str]:
    """A `NAME ?= a b c` list of the Makefile (continued lines joined)."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    match = re.search(rf"^{name}\s*\?=(.*)$", text, re.MULTILINE)
    return match.group(1).split() if match else []


def makespan(costs: list[float], jobs: int) -> float:
    """Longest first onto the slot free soonest."""
    slots = [0.0] * jobs
    for seconds in sorted(costs, reverse=True):
        heapq.heappush(slots, heapq.heappop(slots) + seconds)
    return max(slots)


def share(run: Run, shares: dict[str, float], default: float) -> float:
    matches = [p for p in shares if run.name.startswith(p)]
    return shares[max(matches, key=len)] if matches else default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--costs", type=Path, default=ROOT / "benchmarks" / "matrix-costs.json")
    parser.add_argument("--cpu-share", action="append", default=[], metavar="PREFIX=SHARE")
    parser.add_argument("--default-share", type=float, default=0.5)
    args = parser.parse_args()
    shares = {k: float(v) for k, v in (s.split("=", 1) for s in args.cpu_share)}
    runs = plan_runs(make_list("MATRIX_RELEASES"), cluster=" ".join(make_list("MATRIX_CLUSTER")),
                     release_clients=True, targets=make_list("MATRIX_TARGETS"),
                     clients=make_list("MATRIX_CLIENTS"))  # fmt: skip
    costs = read_costs(args.costs)
    seconds = [cost(r, costs) for r in runs]
    recorded = sum(1 for r in runs if r.name in costs)
    cpu = sum(cost(r, costs) * share(r, shares, args.default_share) for r in runs)
    span = makespan(seconds, args.jobs)
    floor = cpu / args.cores
    print(f"{len(runs)} runs ({recorded} with a recorded cost, the rest estimated from their kind)")
    print(f"one at a time: {sum(seconds) / 3600:.2f} h")
    print(f"-j {args.jobs}, longest first, no slowdown: {span / 60:.0f} min")
    print(f"CPU: {cpu / 3600:.2f} h, over {args.cores} cores at least {floor / 60:.0f} min")
    print(f"projected: {max(span, floor) / 60:.0f} min")


if __name__ == "__main__":
    main()
