"""Where a command writes: checked before any work starts, written with one mode.

Every output a command names (`--out` folders, `--json` and `--junit` files, a baseline to
write) is checked by `output_folder` or `output_file` before the first case runs: a folder that
is a file, a file that is a folder, or a place that cannot be written is a UsageError (one line,
exit 2) instead of a traceback after the work is done. The check writes a probe file, so it
holds for root on a read-only file system too, where permission bits say nothing.

`atomic_write` is how results files are written (a temporary file renamed over the target):
with the mode every other report file gets (0666 less the umask), not the 0600 of `mkstemp`,
so a CI artifact server can read `results.json` as it reads `index.html`.

This module sits below every layer: it imports nothing of the harness but its errors.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from kconform.errors import UsageError

__all__ = ["atomic_write", "file_mode", "output_file", "output_folder", "writable_reason"]


def file_mode() -> int:
    """The mode a plain `open(path, "w")` gives a new file: 0666 less the process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def writable_reason(folder: Path) -> str | None:
    """Why files cannot be created in `folder` (or in the folder it would be created in), or
    None when they can."""
    base = _existing_ancestor(folder.absolute())
    if not base.is_dir():
        return f"{base} is a file, not a folder"
    try:
        fd, probe = tempfile.mkstemp(prefix=".kconform-probe-", dir=base)
    except OSError as exc:
        return f"{base} is not writable ({exc.strerror or exc})"
    os.close(fd)
    Path(probe).unlink(missing_ok=True)
    return None


def output_folder(path: Path, flag: str) -> Path:
    """`path` can be (or become) a folder files are written in; a UsageError naming `flag` if
    not. Does not create it."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: is a file, not a folder")
    reason = writable_reason(path)
    if reason:
        raise UsageError(f"{flag} {path}: cannot write there: {reason}")
    return path


def output_file(path: Path, flag: str) -> Path:
    """`path` can be written as a file; a UsageError naming `flag` if not."""
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder, not a file")
    reason = writable_reason(path.parent)
    if reason:
        raise UsageError(f"{flag} {path}: cannot write there: {reason}")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{flag} {path}: the file is not writable")
    return path


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Replace `path` with what `write(tmp)` writes to a temporary file beside it, with the
    report files' mode (`file_mode`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        os.chmod(tmp, file_mode())
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
