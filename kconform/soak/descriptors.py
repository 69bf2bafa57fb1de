"""Running out of file descriptors mid-soak (EMFILE, ENFILE), though the CLI checked the limit
up front: another process took its share, or the estimate was low.

Where connections are made, the first such error is recorded once and the soak stops as on
Ctrl-C (cleanups run, what was measured is judged and written, exit 2). The fleet's own
connects are caught in `fleet.Fleet`; the accepts of servers in this process (the reference
target's proxy) fail inside asyncio, which logs each with a traceback, as many times as its
backlog at once, every second per listener: `quiet_accepts` drops those records and reports
the first instead.
"""

from __future__ import annotations

import contextlib
import errno
import logging
from collections.abc import Callable, Iterator

__all__ = ["out_of_files", "quiet_accepts", "stopped_line"]

OUT_OF_FILES = (errno.EMFILE, errno.ENFILE)


def out_of_files(exc: BaseException | None) -> str:
    """The errno's name (EMFILE, ENFILE) when `exc` or what caused it is running out of file
    descriptors, else an empty string."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in OUT_OF_FILES:
            return errno.errorcode[exc.errno]
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return ""


def stopped_line(name: str, clients: int) -> str:
    """The one line that names the cause."""
    return (
        f"the soak ran out of file descriptors ({name}) at {clients} clients connected; "
        "it stopped and kept what it had"
    )


class _AcceptFilter(logging.Filter):
    def __init__(self, notify: Callable[[str], None]) -> None:
        super().__init__()
        self.notify = notify

    def filter(self, record: logging.LogRecord) -> bool:
        name = out_of_files(record.exc_info[1] if record.exc_info else None)
        if not name:
            return True
        self.notify(name)
        return False


@contextlib.contextmanager
def quiet_accepts(notify: Callable[[str], None]) -> Iterator[None]:
    """While inside: asyncio's records of descriptors running out (any loop, any thread) go to
    `notify(name)` (called from the logging thread: make it thread-safe), not to the console."""
    logger = logging.getLogger("asyncio")
    accept_filter = _AcceptFilter(notify)
    logger.addFilter(accept_filter)
    try:
        yield
    finally:
        logger.removeFilter(accept_filter)
