"""Run a suite's cases in N worker processes (`kconform run -j N`, `kconform certify -j N`).

Most client cases spend their time waiting on the client's own intervals, one after another;
the waits overlap when the cases run side by side. Each worker is a pytest process of its own
with its own targets (a reference target, its proxy and mock), its own client processes and its
own results file; nothing is shared, so a case cannot see another's traffic or subscriptions.

The split keeps together only what should stay together: the cases that judge one recorded
client run (`suites.client.helpers.shared_run`; each says which with `case(shares=...)`) form
one group per subject and recipe, so the run is recorded once; every other case is a group of
its own (each worker has its own targets, so a disruptive case ends only its own worker's).

`kconform run -j N` shares the groups out as the workers become free: every worker collects the
same cases, orders the groups the same way (longest expected first, from the durations of the
previous run when there is one) and claims the next unclaimed group by creating its file in a
folder the workers share (`try_claim`: O_EXCL, so exactly one worker wins). A fixed split cannot
know that one case waits 7 s on a client and the next 0.1 s; claiming balances whatever happens.
`--kconform-shard i/N` alone is the fixed split (`share`): largest group first to the least
loaded worker, the same answer in every worker, for splitting a run over machines.

A worker dies with the run: SIGTERM from the kernel when the process that started it dies
(PR_SET_PDEATHSIG). An interrupted run (Ctrl-C, or SIGINT or SIGTERM to the run alone) passes
one SIGINT to each worker still running, in a process group of its own so that a terminal's
Ctrl-C does not reach it twice, and each writes what it has as an interrupted run. Their own
children (targets, clients) already die with them.
"""

from __future__ import annotations

import hashlib
import os
import signal
import statistics
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kconform.fixtures.targets.nanny import signal_on_parent_death

SHARD_OPTION = "--kconform-shard"


@dataclass(frozen=True)
class Shard:
    """Worker `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """`i/N` with 1 <= i <= N; ValueError otherwise."""
    left, sep, right = text.partition("/")
    if not sep or not left.isdigit() or not right.isdigit():
        raise ValueError(f"{SHARD_OPTION} expects i/N (e.g. 2/4), not {text!r}")
    shard = Shard(int(left), int(right))
    if not 1 <= shard.index <= shard.count:
        raise ValueError(f"{SHARD_OPTION} {text}: i must be between 1 and N")
    return shard


def assign(groups: Iterable[tuple[str, int]], count: int) -> dict[str, int]:
    """{group: worker index (1-based)}: largest group first to the least loaded worker (ties to
    the lowest index), so every worker computes the same answer from the same groups."""
    load = [0] * count
    placed: dict[str, int] = {}
    for key, size in sorted(groups, key=lambda g: (-g[1], g[0])):
        worker = min(range(count), key=lambda w: (load[w], w))
        load[worker] += size
        placed[key] = worker + 1
    return placed


def share(keys: Sequence[str], shard: Shard) -> list[bool]:
    """For each item's group key, in order: does it belong to `shard`?"""
    sizes: dict[str, int] = {}
    for key in keys:
        sizes[key] = sizes.get(key, 0) + 1
    placed = assign(sizes.items(), shard.count)
    return [placed[key] == shard.index for key in keys]


@dataclass(frozen=True)
class Group:
    """Cases that run in one worker, one after another, in collection order."""

    key: str
    phase: tuple[int, bool]  # (position of its subject, disruptive): earlier phases go first
    nodeids: tuple[str, ...]


def claim_order(groups: Sequence[Group], expected: Mapping[str, float]) -> list[Group]:
    """The order workers claim groups in: phase by phase (so a disruptive case still comes after
    its subject's other cases), and within a phase the longest expected first, so the last
    groups claimed are short and no worker is left with a long one at the end. A case without a
    duration from the previous run counts as the median of those with one (1 s when none has)."""
    known = [expected[n] for g in groups for n in g.nodeids if n in expected]
    typical = statistics.median(known) if known else 1.0

    def seconds(group: Group) -> float:
        return sum(expected.get(n, typical) for n in group.nodeids)

    return sorted(groups, key=lambda g: (g.phase, -seconds(g)))  # stable: ties keep their order


def try_claim(folder: Path, key: str) -> bool:
    """Claim group `key` for this worker; False when another worker already has it."""
    name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    try:
        fd = os.open(folder / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as claimed:
        claimed.write(key + "\n")  # which group, for a person reading the folder
    return True


def count_done(folder: Path) -> int:
    """Record one more finished case run in `folder`; the run's count so far (all workers)."""
    fd = os.open(folder / "done", os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
    try:
        os.write(fd, b".")  # one byte, appended atomically: the file's size is the count
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def default_jobs(clients: str = "") -> int:
    """Four workers per usable core when every client is a light one (a waiting case uses
    almost no CPU); one worker otherwise, since verdicts come before speed. A JVM per case is
    not light: on two cores, java:4.1.0 with 8 workers pushed at 1.31 x PushIntervalMs instead
    of 1.04 and changed three verdicts in two rounds, and with 2 workers still changed one
    (benchmarks/parallel.py). A `command:` driver is unknown, so it is not trusted to be light
    either; `-j N` still asks for workers. Which kinds are light, each kind says
    (`ClientKind.light`)."""
    from kconform.fixtures.clients.registry import light_kinds

    kinds = {name.strip().partition(":")[0] for name in clients.split(",") if name.strip()}
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
    from kconform.fixtures.targets.registry import embedded_kinds

    kinds = {name.strip().partition(":")[0] for name in targets.split(",") if name.strip()}
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
        command = [sys.executable, "-m", "kconform.shards", str(index), str(int(verbose)), *args]
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


def worker_main(argv: list[str]) -> int:
    """`python -m kconform.shards INDEX VERBOSE PYTEST_ARGS...`: one worker's pytest session."""
    import pytest

    from kconform.runner import Progress

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
