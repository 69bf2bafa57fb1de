"""Processes a test reads line by line while they run.

A test that reads a child's stdout must not leave its stderr in an unread pipe: once the child
has written 64 KiB there it blocks, and the test waits on stdout forever (the harness hung in CI
on `kconform run -j 3`, whose workers printed 200 KiB of library deprecation warnings).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def spawn(command: Sequence[str], stderr_file: Path, **kwargs: Any) -> subprocess.Popen[str]:
    """`command` with stdout in a pipe and stderr in `stderr_file` (read it with `stderr_of`)."""
    with stderr_file.open("w", encoding="utf-8") as stderr:
        return subprocess.Popen(
            list(command), stdout=subprocess.PIPE, stderr=stderr, text=True, **kwargs
        )


def stderr_of(stderr_file: Path) -> str:
    """What the spawned process wrote on stderr so far."""
    return stderr_file.read_text("utf-8", errors="replace")
