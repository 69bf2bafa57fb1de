"""The `kconform` command's exit codes and its one error for bad flags or input."""

from __future__ import annotations

__all__ = ["EXIT_FAILURES", "EXIT_OK", "EXIT_USAGE", "UsageError"]

EXIT_OK, EXIT_FAILURES, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad flags or input: reported as one line, exit 2."""
