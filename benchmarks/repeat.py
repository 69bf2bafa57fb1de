"""Repeat counts: does a client case give one verdict every run?

Issue 43: a certificate that changes from run to run is worthless. This runs the chosen client
cases `--runs` times against the reference target (`kconform run`, every client in each run,
`-j` workers: the clients mostly wait) and records, per case and client, the verdicts over the
runs and the case's time (median and max), so a case whose verdict varies shows how often.

Run: `python benchmarks/repeat.py --runs 10 -j 4 --client kafka-go@v0.4.51 --cases 'kip511.client.*'
--table benchmarks/results/repeat.md` (the table also goes to stdout; the file starts with the
command that produced it).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from kconform.reports.model import RunResults

Key = tuple[str, str]  # (case id, client)


def run_once(cases: str, clients: str, jobs: int, out: Path) -> tuple[float, RunResults]:
    """One `kconform run` of `cases` on `clients`; its wall time and results."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "kconform.cli", "run", "--target", "reference", "--client", clients,
         "--cases", cases, "-j", str(jobs), "--no-default-baselines", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    return time.perf_counter() - started, RunResults.read(out / "results.json")


def table(verdicts: dict[Key, list[str]], seconds: dict[Key, list[float]], runs: int) -> str:
    """The markdown table: one row per (case, client), varying ones marked."""
    rows = ["| case | client | verdicts over the runs | one verdict | median s | max s |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for key in sorted(verdicts):
        found = Counter(verdicts[key])
        text = ", ".join(f"{v} {n}/{runs}" for v, n in found.most_common())
        missing = runs - len(verdicts[key])
        if missing:
            text += f", not run {missing}/{runs}"
        one = "yes" if len(found) == 1 and not missing else "**NO**"
        times = seconds[key]
        rows.append(f"| {key[0]} | {key[1]} | {text} | {one} | {statistics.median(times):.1f} | "
                    f"{max(times):.1f} |")  # fmt: skip
    return "\n".join(rows)


def causes(verdicts: dict[Key, list[str]], messages: dict[Key, list[str]]) -> str:
    """For each pair that varied: every run whose verdict was not the most common one, with its
    message, so the table says why, not only how often."""
    out = []
    for key in sorted(verdicts):
        found = Counter(verdicts[key])
        if len(found) < 2:
            continue
        usual = found.most_common(1)[0][0]
        out.append(f"\n**{key[0]} on {key[1]}**, runs that did not give {usual}:\n")
        out += [f"- {m}" for m in messages[key] if m.split(": ", 2)[1] != usual]
    return "\n".join(out) + ("\n" if out else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--client", required=True, help="--client of kconform run (a,b,...)")
    parser.add_argument("--cases", default="kip511.client.*,kip714.client.*")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("-j", "--jobs", type=int, default=4)
    parser.add_argument("--table", type=Path, help="also write the table here (markdown)")
    opts = parser.parse_args()
    verdicts: dict[Key, list[str]] = {}
    seconds: dict[Key, list[float]] = {}
    messages: dict[Key, list[str]] = {}  # each run's verdict and message, to say why one varied
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(opts.runs):
            wall, results = run_once(opts.cases, opts.client, opts.jobs, Path(tmp) / f"r{number}")
            walls.append(wall)
            for r in results.results:
                verdicts.setdefault((r.case_id, r.subject), []).append(r.verdict)
                seconds.setdefault((r.case_id, r.subject), []).append(r.duration)
                messages.setdefault((r.case_id, r.subject), []).append(
                    f"run {number + 1}: {r.verdict}: {r.message[:400]}"
                )
            print(f"run {number + 1}/{opts.runs}: {wall:.0f} s, {len(results.results)} results",
                  file=sys.stderr)  # fmt: skip
    varying = sum(1 for v in verdicts.values() if len(set(v)) > 1 or len(v) < opts.runs)
    command = shlex.join(["python", "benchmarks/repeat.py", *sys.argv[1:]])
    text = (f"`{command}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}): "
            f"{opts.runs} runs of `kconform run -j {opts.jobs}`, wall {sum(walls):.0f} s "
            f"(median {statistics.median(walls):.0f} s a run); {len(verdicts)} case/client "
            f"pairs, {varying} with more than one verdict.\n\n"
            f"{table(verdicts, seconds, opts.runs)}\n{causes(verdicts, messages)}")  # fmt: skip
    print(text)
    if opts.table is not None:
        opts.table.parent.mkdir(parents=True, exist_ok=True)
        opts.table.write_text(text)


if __name__ == "__main__":
    main()
