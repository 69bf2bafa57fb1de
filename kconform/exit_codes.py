"""The exit codes of every kconform command (bad flags or input: kconform.errors.UsageError).

0: every verdict as it should be (or matching its baseline). 1: conformance failures (a SLO
failed, a volume mismatch). 2: harness errors, bad usage, an interrupted run, or a run that
judged nothing; bad usage is reported as one line on stderr, never a traceback.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["EXIT_ERRORS", "EXIT_FAILURES", "EXIT_OK", "EXIT_USAGE", "ExitCode"]


class ExitCode(IntEnum):
    OK = 0
    FAILURES = 1
    ERRORS = 2
    USAGE = 2  # an alias of ERRORS: bad usage is the run's own trouble, not the subject's


EXIT_OK = ExitCode.OK
EXIT_FAILURES = ExitCode.FAILURES
EXIT_ERRORS = ExitCode.ERRORS
EXIT_USAGE = ExitCode.USAGE
