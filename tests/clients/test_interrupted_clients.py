"""Ctrl-C while a client runs: the case's task is cancelled, and what it started is stopped and
reaped before the loop closes (issue 41: "Event loop is closed" tracebacks after Ctrl-C)."""

from __future__ import annotations

import asyncio
import gc
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kconform.exit_codes import EXIT_ERRORS
from kconform.fixtures.clients.driver import ClientRun
from kconform.fixtures.runtime import LoopThread
from kconform.reports.model import RunResults

NOISE = ("Traceback", "Event loop is closed", "never retrieved", "is closed")


def test_a_cancelled_client_run_is_reaped_before_its_loop_closes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A case cancelled while its client runs (LoopThread.run cancels it on Ctrl-C) and cancelled
    again as the loop stops: its process is killed and reaped, its pipes closed, and nothing
    is left for a closed loop to complain about."""
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    runtime = LoopThread("test-interrupted")

    async def start() -> ClientRun:
        process = await asyncio.create_subprocess_exec(
            "sh", "-c", "trap '' TERM; sleep 30", stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        return ClientRun(process, ["sh"])

    run = runtime.run(start())

    async def case(client: ClientRun) -> None:
        try:
            await client.wait(60)
        finally:
            await client.stop(grace=1.0)  # it ignores SIGTERM: the stop is still under way...

    future = asyncio.run_coroutine_threadsafe(case(run), runtime.loop)
    time.sleep(0.3)
    future.cancel()  # ...when the loop stops and cancels what is left
    time.sleep(0.1)
    runtime.stop()
    assert run.returncode is not None  # killed and reaped, not left to the child watcher
    del run, future
    gc.collect()
    assert unraisable == [], [u.exc_value for u in unraisable]


def _descendants(root: int) -> list[str]:
    """The command lines of `root`'s descendants (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], {root}
    while frontier:
        children = {pid for pid, parent in parents.items() if parent in frontier}
        for pid in children:
            try:
                found.append((Path("/proc") / str(pid) / "cmdline").read_text().replace("\0", " "))
            except OSError:
                continue
        frontier = children
    return found


def test_ctrl_c_during_certify_prints_no_traceback(tmp_path: Path) -> None:
    """SIGINT (Ctrl-C) to `certify` while a worker's client runs (in workers: `-j 1` did not
    show it): an interrupted run with its results, and on stderr no traceback from a closed
    loop or a dropped future."""
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "kconform.cli", "certify", "--client", "confluent-kafka",
         "--cases", "kip714.client.cadence", "-j", "2", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not any("confluent_driver" in c for c in _descendants(process.pid)):
        assert time.monotonic() < deadline and process.poll() is None, "no client ever ran"
        time.sleep(0.1)
    time.sleep(0.5)  # its case is under way
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == EXIT_ERRORS, [stdout, stderr]
    assert RunResults.read(out / "results.json").interrupted
    assert not [n for n in NOISE if n in stderr], stderr
