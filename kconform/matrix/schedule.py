"""Runs side by side: the longest first, as many at once as `jobs` allows and as fit in the
memory budget and the cores (each run counts the cores it keeps busy, `Run.cores`: a JVM one, a
light client a quarter), so that one subject's waits (a Java client sitting out a 300 s
interval) overlap another's work while no two JVMs' timing share a core. A run larger than a
whole budget still runs, alone.

Every run is a pytest process in a process group of its own (a terminal's Ctrl-C reaches it
once, from here) that gets SIGTERM from the kernel when this process dies (PR_SET_PDEATHSIG); its
own targets and clients die with it. An interrupt (SIGINT, or SIGTERM to this process) starts
nothing more and passes SIGINT to each run still going, which writes what it has as an
interrupted run; the runs already finished keep their results.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from kconform.fixtures.targets.nanny import signal_on_parent_death
from kconform.matrix.plan import Run, cost

POLL = 0.5  # seconds between looks at the runs going
GRACE = 60.0  # an interrupted run's time to tear its targets down and write its results


@dataclass(frozen=True)
class Finished:
    """A run that ended: pytest's exit code, its wall time and its CPU time (its process and
    every descendant it waited for)."""

    run: Run
    code: int
    seconds: float
    cpu: float


def longest_first(runs: Sequence[Run], costs: Mapping[str, float]) -> list[Run]:
    """The runs by cost, longest first; equal costs by name (the same order on any machine)."""
    return sorted(runs, key=lambda r: (-cost(r, costs), r.name))


def default_jobs() -> int:
    """One run per usable core."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def available_mb() -> int:
    """Four fifths of the memory the system says is available (MemAvailable), or 4 GB where
    it says nothing."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 4 // 5 // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 4096


def _die_with_run() -> None:
    """In the run's process, before exec: SIGTERM when this process dies."""
    signal_on_parent_death(signal.SIGTERM)


def start(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """One run's pytest process, its output in `log`."""
    with log.open("wb") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=_die_with_run,
                                process_group=0)  # fmt: skip


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM to this process interrupts it as Ctrl-C does, while the runs go."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def run_all(
    runs: Sequence[Run],
    *,
    costs: Mapping[str, float],
    jobs: int,
    memory_mb: int,
    launch: Callable[[Run], subprocess.Popen[bytes]],
    done: Callable[[Finished], None],
    cores: float | None = None,
) -> None:
    """Run every run, longest first within `jobs`, `memory_mb` and `cores` (default: the usable
    cores), calling `done` as each ends. KeyboardInterrupt (after the runs going have ended)
    when interrupted."""
    budget = cores if cores is not None else float(default_jobs())
    pending = longest_first(runs, costs)
    going: list[tuple[Run, subprocess.Popen[bytes], float]] = []
    with _sigterm_interrupts():
        try:
            while pending or going:
                used = sum(run.memory_mb for run, _, _ in going)
                busy = sum(run.cores for run, _, _ in going)
                for run in list(pending):
                    if len(going) >= jobs:
                        break
                    if going and (used + run.memory_mb > memory_mb or busy + run.cores > budget):
                        continue  # a smaller one further down may fit
                    going.append((run, launch(run), time.monotonic()))
                    pending.remove(run)
                    used += run.memory_mb
                    busy += run.cores
                time.sleep(POLL)
                for entry in list(going):
                    ended = _reap(*entry)
                    if ended:
                        going.remove(entry)
                        done(ended)
        except KeyboardInterrupt:
            _interrupt([proc for _, proc, _ in going])
            raise


def _reap(run: Run, proc: subprocess.Popen[bytes], started: float) -> Finished | None:
    """The run's end, if it has ended (reaped here for its resource usage)."""
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid == 0:
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - started
    return Finished(run, proc.returncode, took, usage.ru_utime + usage.ru_stime)


def _interrupt(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGINT to each run still going; SIGKILL to its group after GRACE seconds."""
    running = [p for p in procs if p.poll() is None]
    for proc in running:
        proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + GRACE
    for proc in running:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
