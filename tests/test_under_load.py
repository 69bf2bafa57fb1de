"""benchmarks/under_load.py: burners run exactly as long as the command, and die with the wrapper.

Costs about 1 s (two wrappers with two burners each, for a fraction of a second).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

WRAPPER = Path(__file__).resolve().parents[1] / "benchmarks" / "under_load.py"
SIBLINGS = """
import os
me, parent = os.getpid(), os.getppid()
found = []
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != me:
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            found.append(entry)
print(" ".join(found))
raise SystemExit(3)
"""


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_burners_run_beside_the_command_and_stop_with_it() -> None:
    done = subprocess.run(
        [sys.executable, str(WRAPPER), "--burners", "2", "--", sys.executable, "-c", SIBLINGS],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr  # the command's own exit status
    burners = [int(p) for p in done.stdout.split()]
    assert len(burners) == 2, done.stdout
    assert not any(alive(p) for p in burners)
    assert "2 CPU burners; load average" in done.stderr


def test_burners_die_when_the_wrapper_is_killed() -> None:
    wrapper = subprocess.Popen(
        [sys.executable, str(WRAPPER), "--burners", "2", "--", "sleep", "30"],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while len(children(wrapper.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    spawned = children(wrapper.pid)
    assert len(spawned) == 3, spawned  # two burners and the command
    wrapper.send_signal(signal.SIGKILL)
    wrapper.wait()
    deadline = time.monotonic() + 5
    while any(alive(p) for p in spawned) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = {p: Path(f"/proc/{p}/comm").read_text().strip() for p in spawned if alive(p)}
    for pid in left:  # the command (sleep) is not the wrapper's to end once it is dead
        os.kill(pid, signal.SIGKILL)
    assert list(left.values()) == ["sleep"], left
