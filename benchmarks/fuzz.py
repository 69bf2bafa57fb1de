"""Request-fuzzer throughput: examples per second, the old way against the pipelined way.

Issue 16 asks for ten times the examples per second on `reference`. Each request case of
`suites/fuzz/test_requests.py` runs twice in this one invocation, on the same target kind and
with the same seed: the old way (`KCONFORM_FUZZ_PIPELINE=1`: one request per example, on its own
connection, liveness after each) and the new way (up to 64 requests per example, pipelined on
kept connections, liveness after every close and every example; `kconform.engine.fuzz.stream`).
Each case gets the same search time (a `KCONFORM_FUZZ_BUDGET`) and reports its own examples/s,
so target start-up is not counted. Findings go to a temporary corpus.

Two more columns are ceilings, each measured in this process. "drawing only": Hypothesis
drawing the new way's examples (families of related requests, `stream.examples`) with no I/O.
"I/O only": the batches it drew, replayed through `stream.run_batch` against the target
started here, with nothing drawn. Drawing, the target's own work (the reference runs in the
pytest process) and the harness share one interpreter lock on a machine this small, so the new
way stays below the lower of the two; where "I/O only" is under ten times the old rate, no
faster drawing can reach the goal.

Run: `python benchmarks/fuzz.py` (reference), or with a real broker:
`KCONFORM_KAFKA_DISTS=/work/shared/kafka python benchmarks/fuzz.py --target apache:4.1.0`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, settings

from kconform.engine.fuzz import inputs, stream
from kconform.engine.fuzz.budget import (
    BUDGET_ENV,
    CORPUS_ENV,
    PIPELINE_DEPTH,
    PIPELINE_ENV,
    SEED_ENV,
)
from kconform.engine.fuzz.oracle import Patience
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.targets.registry import create_target, parse_targets
from kconform.fixtures.wirelog import WireLog

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "suites" / "fuzz" / "test_requests.py"
REQUEST_CASES = 8
SEARCH_SHARE = 0.75  # of a case's budget share (`budget.limits`): the rest is for shrinking
GOAL = 10.0
IO_SECONDS = 5.0
PATIENCE = Patience()


def run(target: str, depth: int, seconds: float, select: str) -> dict[str, tuple[float, str]]:
    """examples/s and verdict per case id, for one way of running the request cases."""
    with tempfile.TemporaryDirectory(prefix="kconform-bench-fuzz-") as tmp:
        results = Path(tmp) / "results.json"
        env = dict(os.environ)
        env.update(
            {
                PIPELINE_ENV: str(depth),
                BUDGET_ENV: f"{seconds / SEARCH_SHARE * REQUEST_CASES:.1f}s",
                SEED_ENV: "16",
                CORPUS_ENV: str(Path(tmp) / "corpus"),
            }
        )
        command = [
            sys.executable, "-m", "pytest", str(SUITE), "-q", "-p", "no:cacheprovider",
            "--target", target, "--brokers", "1", "--kconform-results", str(results),
        ]  # fmt: skip
        if select:
            command += ["-k", select]
        process = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
        if not results.exists():
            sys.exit(f"no results from pytest:\n{process.stdout[-3000:]}{process.stderr[-3000:]}")
        rates: dict[str, tuple[float, str]] = {}
        for result in json.loads(results.read_text())["results"]:
            seen = {e["what"]: e["observed"] for e in result["expectations"]}
            rates[result["case_id"]] = (float(seen.get("examples/s") or 0.0), result["verdict"])
        return rates


class _TimeUp(BaseException):
    pass


def drawing_only(
    case_id: str, depth: int, seconds: float, keep: list[list[inputs.FuzzRequest]]
) -> float:
    """Requests per second Hypothesis draws for a case's strategy, batched as the new way; the
    batches drawn go to `keep`."""
    _, _, group, kind = case_id.split(".")
    drawn = 0
    until = time.perf_counter() + seconds

    @settings(
        max_examples=10**6, deadline=None, database=None, phases=[Phase.generate],
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
    )  # fmt: skip
    @given(stream.examples(group, kind == "malformed", stream.Pipelining(depth)))
    def draw(batch: list[inputs.FuzzRequest]) -> None:
        nonlocal drawn
        drawn += len(batch)
        keep.append(batch)
        if time.perf_counter() > until:
            raise _TimeUp  # a BaseException: Hypothesis stops at once, shrinks nothing

    started = time.perf_counter()
    with contextlib.suppress(_TimeUp):
        draw()
    return drawn / (time.perf_counter() - started)


def io_only(target: BrokerTarget | None, drawn: list[list[inputs.FuzzRequest]]) -> float:
    """Requests per second the new way judges when nothing is drawn: the batches `drawing_only`
    drew, replayed through `stream.run_batch` (what the target and the harness's I/O allow)."""
    if target is None or not drawn:
        return float("nan")
    address, log = target.brokers[0], WireLog()
    started, judged = time.perf_counter(), 0
    for batch in drawn:
        run = stream.run_batch(address, batch, PATIENCE, log, "io", stream.LANES)
        judged += len(asyncio.run(run).outcomes)
        if time.perf_counter() - started > IO_SECONDS:
            break
    return judged / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="reference")
    parser.add_argument("--seconds", type=float, default=6.0, help="search time per case")
    parser.add_argument("--depth", type=int, default=PIPELINE_DEPTH, help="requests/example")
    parser.add_argument("-k", dest="select", default="", help="pytest -k expression")
    args = parser.parse_args()
    old = run(args.target, 1, args.seconds, args.select)
    new = run(args.target, args.depth, args.seconds, args.select)
    print(f"request fuzzing on {args.target}, {args.seconds:.0f}s of search per case")
    print(
        f"{'workload':<42} {'old ex/s':>9} {'new ex/s':>9} {'ratio':>7} {'drawing only':>13}"
        f" {'I/O only':>9}  verdicts (old, new)"
    )
    ratios = []
    with _started(args.target) as target:
        for case_id in sorted(set(old) & set(new)):
            (before, v_old), (after, v_new) = old[case_id], new[case_id]
            ratio = after / before if before else float("inf")
            ratios.append(ratio)
            drawn: list[list[inputs.FuzzRequest]] = []
            ceiling = drawing_only(case_id, args.depth, min(args.seconds, 3.0), drawn)
            io = io_only(target if v_new != "unsupported" else None, drawn)
            print(
                f"{case_id:<42} {before:>9.1f} {after:>9.1f} {ratio:>6.1f}x {ceiling:>13.1f}"
                f" {io:>9.1f}  {v_old}, {v_new}"
            )
    if ratios:
        met = "met" if min(ratios) >= GOAL else "NOT met"
        print(f"goal {GOAL:.0f}x on every workload: {met} (lowest {min(ratios):.1f}x)")


@contextlib.contextmanager
def _started(name: str) -> Iterator[BrokerTarget | None]:
    """The target, started in this process for the I/O-only column (one node)."""
    specs = parse_targets(name, brokers=1)
    target = create_target(specs[0])
    target.start()
    try:
        yield target
    finally:
        target.stop()


if __name__ == "__main__":
    main()
