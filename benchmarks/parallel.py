"""Cases in worker processes (`-j N`) against one process, measured in the same run.

Issue 16 asks for certification at least 4x faster in wall time with the same verdicts, and for
evidence that running cases side by side does not bend the timing statistics the cadence cases
judge. Each round runs the same cases once with `-j 1` and once with `-j N` (alternating which
goes first) and compares:

  - wall time (the ratio is the goal) and the verdict of every case (they must be equal);
  - the raw timing samples the cadence cases record: first-push delays after a Get
    (`first_push_jitter`) and gaps between later pushes (`push_interval`), each in units of
    PushIntervalMs, pooled over the rounds. The two pools are compared with the two-sample
    Kolmogorov-Smirnov test (asymptotic p-value); p > 0.05 means no detectable difference.

`--broker` runs the broker suites on `reference` instead (cases independent of each other:
each worker has its own target), comparing wall time and verdicts. `--main` runs the main job
(`kconform run` with no arguments: every suite on both embedded targets, every installed
client), whose default is the workers `kconform.plugin.workers.default_run_jobs` gives it.

Run: `python benchmarks/parallel.py --rounds 5` (client: confluent-kafka by default).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kconform.plugin.workers import default_jobs, default_run_jobs
from kconform.reports.model import RunResults
from kconform.runner import client_names

GOAL = 4.0
BROKER_CASES = (
    "kip511.apiversions.,kip714.apiversions.,kip714.push.,kip714.subscriptions.,kip714.configs."
)
SAMPLED = {  # case id suffix -> the observation holding its raw samples
    "cadence.first_push_jitter": "samples",
    "cadence.push_interval": "samples",
}


def ks_two_sample(a: list[float], b: list[float]) -> tuple[float, float]:
    """(D, p): the largest gap between the two empirical distributions and its asymptotic
    p-value (Kolmogorov's series with Stephens' small-sample correction)."""
    xs, ys = sorted(a), sorted(b)
    n, m = len(xs), len(ys)
    i = j = 0
    d = 0.0
    while i < n and j < m:
        value = min(xs[i], ys[j])
        while i < n and xs[i] == value:
            i += 1
        while j < m and ys[j] == value:
            j += 1
        d = max(d, abs(i / n - j / m))
    effective = math.sqrt(n * m / (n + m))
    lam = (effective + 0.12 + 0.11 / effective) * d
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return d, min(1.0, max(0.0, p))


def run_once(args: list[str], out: Path) -> tuple[float, RunResults]:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "kconform.cli", *args, "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    return time.perf_counter() - started, RunResults.read(out / "results.json")


def samples(results: RunResults) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {key: [] for key in SAMPLED}
    for result in results.results:
        for suffix, what in SAMPLED.items():
            if result.case_id.endswith(suffix):
                for e in result.expectations:
                    if e.what == what and isinstance(e.observed, list):
                        found[suffix] += [float(x) for x in e.observed]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--client", default="confluent-kafka")
    parser.add_argument("--jobs", type=int, default=None, help="default: what certify uses")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--broker", action="store_true", help="broker suites on reference")
    parser.add_argument("--main", action="store_true", help="the main job (make run)")
    opts = parser.parse_args()
    if opts.jobs is None and opts.main:
        opts.jobs = default_run_jobs(
            "reference,librdkafka_mock", ",".join(client_names(None)), whole=True
        )
    if opts.jobs is None:
        opts.jobs = default_jobs("" if opts.broker else opts.client)
    if opts.main:
        base = ["run"]
        what = "the main job (kconform run)"
    elif opts.broker:
        base = ["run", "--target", "reference", "--cases", BROKER_CASES, "--no-default-baselines"]
        what = f"broker suites on reference ({BROKER_CASES})"
    else:
        base = ["certify", "--client", opts.client]
        what = f"kconform certify --client {opts.client}"
    print(f"{what}: -j 1 against -j {opts.jobs}, {opts.rounds} round(s)")
    walls: dict[int, list[float]] = {1: [], opts.jobs: []}
    pools: dict[int, dict[str, list[float]]] = {1: {}, opts.jobs: {}}
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        for round_no in range(opts.rounds):
            order = [1, opts.jobs] if round_no % 2 == 0 else [opts.jobs, 1]
            verdicts: dict[int, dict[tuple[str, str], str]] = {}
            for jobs in order:
                out = Path(tmp) / f"r{round_no}-j{jobs}"
                wall, results = run_once([*base, "-j", str(jobs)], out)
                walls[jobs].append(wall)
                verdicts[jobs] = {r.key: r.verdict for r in results.results}
                for key, values in samples(results).items():
                    pools[jobs].setdefault(key, []).extend(values)
            differ = sorted(
                k for k in verdicts[1].keys() | verdicts[opts.jobs].keys()
                if verdicts[1].get(k) != verdicts[opts.jobs].get(k)
            )  # fmt: skip
            same = same and not differ and bool(verdicts[1])
            print(
                f"round {round_no + 1}: -j 1 {walls[1][-1]:6.1f} s, -j {opts.jobs} "
                f"{walls[opts.jobs][-1]:6.1f} s, {len(verdicts[1])} verdicts, "
                + ("all equal" if not differ else f"DIFFER: {differ}")
            )
    one, many = sorted(walls[1])[len(walls[1]) // 2], sorted(walls[opts.jobs])[len(walls[1]) // 2]
    ratio = one / many
    print(f"median wall: -j 1 {one:.1f} s, -j {opts.jobs} {many:.1f} s: {ratio:.2f}x "
          f"({'meets' if ratio >= GOAL else 'below'} the {GOAL:g}x goal); "
          f"verdicts {'equal in every round' if same else 'NOT equal'}")  # fmt: skip
    for key in SAMPLED:
        a, b = pools[1].get(key, []), pools[opts.jobs].get(key, [])
        if len(a) < 2 or len(b) < 2:
            continue
        d, p = ks_two_sample(a, b)
        print(
            f"{key}: n={len(a)} / {len(b)}, median {sorted(a)[len(a) // 2]:.3f} / "
            f"{sorted(b)[len(b) // 2]:.3f} x PushIntervalMs, KS D={d:.3f} p={p:.3f} "
            + ("(indistinguishable at 0.05)" if p > 0.05 else "(DIFFERENT at 0.05)")
        )


if __name__ == "__main__":
    main()
