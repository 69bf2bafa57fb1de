"""The worker processes of a run split N ways (`kconform run -j N`): how many, starting them,
and each one's pytest session (`python -m kconform.plugin.workers`). What each worker runs is
decided in its own session (kconform.plugin.scheduling).

A worker dies with the run: SIGTERM from the kernel when the process that started it dies
(PR_SET_PDEATHSIG). An interrupted run (Ctrl-C, or SIGINT or SIGTERM to the run alone) passes
one SIGINT to each worker still running, in a process group of its own so that a terminal's
Ctrl-C does not reach it twice, and each writes what it has as an interrupted run. Their own
children (targets, clients) already die with them.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from kconform.fixtures.targets.nanny import signal_on_parent_death

WORKER_MODULE = "kconform.plugin.workers"


def default_jobs(clients: str = "") -> int:
    """Four workers per usable core when every client is a light one (a waiting case uses
    almost no CPU); one worker otherwise, since verdicts come before speed. A JVM per case is
    not light: on two cores, java:4.1.0 with 8 workers pushed at 1.31 x PushIntervalMs instead
    of 1.04 and changed three verdicts in two rounds, and with 2 workers still changed one
    (benchmarks/parallel.py). A `command:` driver is unknown, so it is not trusted to be light
    either; `-j N` still asks for workers. Which kinds are light, each kind says
    (`ClientKind.light`)."""
    from kconform.fixtures.clients.registry import light_kinds

    kinds = {re.split(r"[:@]", name.strip())[0] for name in clients.split(",") if name.strip()}
    if not kinds <= set(light_kinds()):
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, 4 * cores)


def default_run_jobs(targets: str, clients: str, *, whole: bool) -> int:
    """`kconform run`'s workers when `-j` is not given: `default_jobs` for a whole run (no case
    filter) on embedded targets only, else one. The main job on two cores took 154 s in one
    process and 34-41 s (60 s once) in eight, same 334 verdicts. A filtered run is small: eight
    workers each importing and collecting the suites turned a 1.4 s run into 6.6 s. Embedded
    kinds (`TargetKind.embedded`) start in a second per worker; a real broker per worker (a JVM,
    a container) is not that cheap."""
    from kconform.fixtures.targets.kind import split_entry
    from kconform.fixtures.targets.registry import embedded_kinds

    kinds = {split_entry(name.strip())[0] for name in targets.split(",") if name.strip()}
    if not whole or not kinds or not kinds <= set(embedded_kinds()):
        return 1
    return default_jobs(clients)


def _die_with_run() -> None:
    """In the worker, before exec: SIGTERM when the run that started it dies (Linux;
    elsewhere Ctrl-C and a normal exit still reach it)."""
    signal_on_parent_death(signal.SIGTERM)


def run_workers(worker_args: Sequence[Sequence[str]], *, verbose: bool) -> list[int]:
    """Start one worker per argument list (pytest arguments), wait for all; their exit codes.

    A worker that cannot start is reported as pytest's internal-error code, so the run fails
    with what the others found still written.
    """
    procs: list[subprocess.Popen[bytes] | None] = []
    for index, args in enumerate(worker_args, start=1):
        command = [
            sys.executable,
            "-m",
            "kconform.plugin.workers",
            str(index),
            str(int(verbose)),
            *args,
        ]
        try:
            # a process group of its own: the run's interrupt reaches it exactly once, from here
            proc = subprocess.Popen(command, preexec_fn=_die_with_run, process_group=0)
        except OSError as exc:
            print(f"kconform: worker {index} did not start: {exc}", file=sys.stderr)
            proc = None
        procs.append(proc)
    codes: list[int] = []
    try:
        for proc in procs:
            codes.append(3 if proc is None else proc.wait())
    except KeyboardInterrupt:  # each worker writes the results it has as an interrupted run
        running = [proc for proc in procs if proc is not None and proc.poll() is None]
        for proc in running:
            proc.send_signal(signal.SIGINT)
        for proc in running:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        raise
    return codes


def count_groups(args: Sequence[str], folder: Path) -> int | None:
    """How many case groups (what workers can split) the pytest arguments select, from a
    collect-only session in a process of its own (collecting imports every suite module, which
    this process must not do twice); None if it could not tell. `folder` takes its files."""
    groups = folder / "groups"
    command = [sys.executable, "-m", "kconform.plugin.workers", "0", "0", *args,
               "--collect-only", "--kconform-groups", str(groups)]  # fmt: skip
    try:
        subprocess.run(command, capture_output=True, timeout=300, check=False)
        return int(groups.read_text("utf-8"))
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def worker_main(argv: list[str]) -> int:
    """`python -m kconform.plugin.workers INDEX VERBOSE PYTEST_ARGS...`: one worker's pytest
    session."""
    import pytest

    from kconform.plugin.progress import Progress

    index, verbose, args = argv[0], argv[1] == "1", argv[2:]
    return int(pytest.main(args, plugins=[Progress(verbose, label=f"j{index}")]))


def shards_folder(results_path: Path) -> Path:
    """The workers' own folder, named after the run's results file: two runs writing their
    results into one folder (`--json a/x.json`, `--json a/y.json`) must not share claims."""
    return results_path.parent / f"{results_path.stem}-shards"


def claims_folder(results_path: Path) -> Path:
    """Where the workers of one run claim their groups, next to their results files."""
    return shards_folder(results_path) / "claims"


def shard_results_path(results_path: Path, index: int) -> Path:
    """Where worker `index` writes its results."""
    return shards_folder(results_path) / f"results-{index}.json"


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
