"""Run a command while CPU burners keep every core busy: verdicts must not depend on the load.

Issue 41 (Deliver 4): the main job on a loaded machine ended `error` where a quiet one passed.
CI runs the main job through this wrapper (Makefile `test-harness`), so every CI run is also the
"under load" run and the committed baselines (0 `error`) hold for it; no second run is needed.

    python benchmarks/under_load.py [--burners N] -- kconform run ...

N busy-looping processes (default: one per core) run for exactly as long as the command. They
die with this wrapper however it ends, even on SIGKILL (Linux parent-death signal, and each
burner also exits once its parent is gone); SIGINT and SIGTERM are passed on to the command.
The exit status is the command's (128 + n when a signal n ended it). The load averages before
and after are printed, so a report can say what load the verdicts held under.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

PR_SET_PDEATHSIG = 1
BURNER = """
import os, sys
parent = int(sys.argv[1])
while os.getppid() == parent:  # an orphan (the wrapper was killed) stops
    for _ in range(200_000):
        pass
"""
"""A burner: pure CPU, checking every few milliseconds that the wrapper still lives."""


def _die_with_parent() -> None:
    """In the burner, before exec: the kernel sends SIGKILL when the wrapper dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def start_burners(count: int) -> list[subprocess.Popen[bytes]]:
    me = str(os.getpid())
    command = [sys.executable, "-c", BURNER, me]
    return [
        subprocess.Popen(command, preexec_fn=_die_with_parent, stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]


def stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
    for process in processes:
        process.wait()


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def run_under_load(command: Sequence[str], burners: int) -> int:
    """The command's exit status, the burners running from its start to its end."""
    print(f"under_load: {burners} CPU burners; {load()}", file=sys.stderr, flush=True)
    started = time.monotonic()
    busy = start_burners(burners)
    try:
        child = subprocess.Popen(list(command))
    except OSError as exc:
        stop(busy)
        print(f"under_load: cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 2

    def forward(signum: int, _frame: FrameType | None) -> None:
        child.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        stop(busy)
    print(f"under_load: done in {time.monotonic() - started:.0f} s; {load()}", file=sys.stderr)
    return 128 - code if code < 0 else code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 1,
                        help="busy processes (default: one per core)")  # fmt: skip
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("no command given (under_load.py [--burners N] -- COMMAND ...)")
    if options.burners < 0:
        parser.error(f"--burners {options.burners}: must be 0 or more")
    return run_under_load(command, options.burners)


if __name__ == "__main__":
    sys.exit(main())
