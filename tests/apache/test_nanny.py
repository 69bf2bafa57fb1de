"""The nanny stops its child when the harness goes, however the harness goes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kconform.fixtures.targets import nanny

NANNY = Path(nanny.__file__)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def start(
    tmp_path: Path, *child: str, grace: str = "1"
) -> tuple[subprocess.Popen[bytes], int, int]:
    """A nanny over `child` (a shell writing its pid first): nanny, keepalive fd, child pid."""
    pidfile = tmp_path / "child.pid"
    read_end, write_end = os.pipe()
    script = f"echo $$ > {pidfile}; exec {' '.join(child)}"
    proc = subprocess.Popen(
        [sys.executable, "-S", str(NANNY), "--grace", grace, "--", "sh", "-c", script],
        stdin=read_end,
    )
    os.close(read_end)
    deadline = time.monotonic() + 10
    while not (pidfile.is_file() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, "child never started"
        time.sleep(0.02)
    return proc, write_end, int(pidfile.read_text())


def test_closing_the_pipe_stops_the_child(tmp_path: Path) -> None:
    proc, keepalive, child = start(tmp_path, "sleep", "300")
    assert alive(child)
    os.close(keepalive)  # what the kernel does when the harness dies, SIGKILL included
    assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    assert wait_gone(child)


def test_a_child_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    trapped = tmp_path / "trapped"  # the child ignores SIGTERM from here on (a slow shell may
    # not have got there when the pipe closes, and then SIGTERM rightly ends it)
    script = f"'trap \"\" TERM; : > {trapped}; sleep 300 & wait'"
    proc, keepalive, child = start(tmp_path, "sh", "-c", script)
    deadline = time.monotonic() + 10
    while not trapped.exists():
        assert time.monotonic() < deadline, "the child never set its trap"
        time.sleep(0.02)
    os.close(keepalive)
    assert proc.wait(timeout=15) == 128 + signal.SIGKILL
    assert wait_gone(child)


def test_sigkill_of_the_nanny_kills_the_child(tmp_path: Path) -> None:
    proc, keepalive, child = start(tmp_path, "sleep", "300")
    proc.kill()
    proc.wait(timeout=5)
    assert wait_gone(child)  # PR_SET_PDEATHSIG
    os.close(keepalive)


def test_sigterm_is_passed_on_and_the_exit_code_kept(tmp_path: Path) -> None:
    proc, keepalive, child = start(tmp_path, "sleep", "300")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    assert wait_gone(child)
    os.close(keepalive)
    proc, keepalive, _ = start(tmp_path, "sh", "-c", "'exit 7'")
    assert proc.wait(timeout=10) == 7
    os.close(keepalive)


def test_usage_without_a_command() -> None:
    done = subprocess.run([sys.executable, "-S", str(NANNY)], capture_output=True, text=True)
    assert done.returncode == 2 and "usage" in done.stderr
