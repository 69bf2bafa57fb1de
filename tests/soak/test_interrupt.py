"""A soak that ends early keeps what it measured and still writes its report (issue 15: "Ctrl-C
or a crash keeps what was measured and still writes the report"), and nothing it started
outlives it, not even when the harness itself is killed with SIGKILL.

The Ctrl-C and SIGKILL cases run `kconform soak` as a process with a worker process
(`--workers 1`), as a user does; the crash case runs the coordinator in-process with one of its
loops made to fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kconform.pipelines.soak_outputs import write_outputs
from kconform.soak.broker_stats import descendants
from kconform.soak.options import SoakOptions
from kconform.soak.run import Coordinator

FAULTS_OFF = dict.fromkeys(("subscription", "client_churn", "restart", "rolling_restart"), "none")


def start_soak(out: Path, *extra: str) -> subprocess.Popen[str]:
    command = [
        sys.executable, "-m", "kconform.cli", "soak", "--target", "reference",
        "--duration", "10m", "--clients", "40", "--push-interval-ms", "1000",
        "--sample-seconds", "2", "--no-spark", "--out", str(out), *extra,
    ]  # fmt: skip
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=Path.cwd()
    )


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


def measuring(out: Path) -> bool:
    """True once the samples on disk count accepted pushes from most of the fleet."""
    accepted = 0
    for part in (out / "samples").glob("part-*.parquet"):
        with contextlib.suppress(OSError, ValueError):  # a part being written
            accepted += sum(pq.read_table(part, columns=["pushes_accepted"]).column(0).to_pylist())
    return accepted >= 60


@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_keeps_the_measurements_and_writes_the_report(tmp_path: Path, presses: int) -> None:
    soak = start_soak(tmp_path, "--workers", "1")
    try:
        wait_for(lambda: measuring(tmp_path), 90, "the first samples")
        started = descendants(soak.pid)[1:]
        assert started, "the soak started no process (a worker, the target's)"
        for _ in range(presses):
            soak.send_signal(signal.SIGINT)
            time.sleep(0.3)
        output, _ = soak.communicate(timeout=90)
    finally:
        soak.kill()
    results = json.loads((tmp_path / "results.json").read_text())
    verdicts = {r["case_id"]: r["verdict"] for r in results["results"]}
    assert len(verdicts) == 10, output
    assert verdicts["soak.errors.kip_table"] == "pass", output
    assert verdicts["soak.lockout.none"] == "pass", output
    # one press: a clean stop, the sink read to the end; two: stopped hard, and the pushes
    # acknowledged after the last sink read cannot be checked (an error, never a silent pass)
    assert verdicts["soak.delivery.no_loss"] == ("pass" if presses == 1 else "error"), output
    run = json.loads((tmp_path / "run.json").read_text())
    assert any("interrupted" in note for note in run["notes"]), run["notes"]
    assert ("stopped hard" in (run.get("crash") or "")) == (presses == 2), run
    summary = json.loads((tmp_path / "soak-summary.json").read_text())
    assert summary["totals"]["pushes_accepted"] > 40, summary["totals"]
    assert (tmp_path / "soak.html").is_file() and (tmp_path / "junit.xml").is_file()
    wait_for(lambda: not any(map(alive, started)), 10, "the soak's processes to end")


@pytest.mark.slow
def test_sigkill_of_the_harness_takes_its_workers_and_target_down(tmp_path: Path) -> None:
    soak = start_soak(tmp_path, "--workers", "2")
    try:
        wait_for(lambda: measuring(tmp_path), 90, "the first samples")
        started = descendants(soak.pid)[1:]
        assert len(started) >= 2, started
        os.kill(soak.pid, signal.SIGKILL)
        soak.wait(10)
        wait_for(lambda: not any(map(alive, started)), 15, f"orphans {started} to end")
    finally:
        soak.kill()


@pytest.mark.slow
def test_a_crash_keeps_what_was_measured_and_still_writes_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing_heap_loop(self: Coordinator, stats: object) -> None:
        await asyncio.sleep(6.0)
        raise RuntimeError("the heap reader broke")

    monkeypatch.setattr(Coordinator, "_heap_loop", failing_heap_loop)
    options = SoakOptions(
        target="reference", duration=600.0, clients=40, out=tmp_path, push_interval_ms=1000,
        cadences=dict(FAULTS_OFF), sample_seconds=2.0, progress=False,
    )  # fmt: skip
    began = time.monotonic()
    run = asyncio.run(Coordinator(options).run_soak())
    assert time.monotonic() - began < 60  # stopped at the crash, not after 10 minutes
    assert run.crash == "RuntimeError: the heap reader broke" and run.interrupted
    assert run.ledger is not None and run.writer is not None and run.writer.rows
    results = write_outputs(run, spark=False)
    verdicts = {r.case_id: r.verdict for r in results.results}
    assert verdicts["soak.delivery.no_loss"] == "pass"
    assert verdicts["soak.lockout.none"] == "pass"
    summary = json.loads((tmp_path / "soak-summary.json").read_text())
    assert summary["totals"]["pushes_accepted"] > 40
    assert "the heap reader broke" in (tmp_path / "soak.html").read_text()
