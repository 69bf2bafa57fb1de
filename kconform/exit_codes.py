"""The exit codes of every kconform command (bad flags or input: kconform.errors.UsageError).

0: every verdict as it should be (or matching its baseline). 1: conformance failures (a SLO
failed, a volume mismatch). 2: harness errors, bad usage, an interrupted run, or a run that
judged nothing; bad usage is reported as one line on stderr, never a traceback.

`kconform certify` exits with its certificate's headline (kconform.reports.certificate), the
same three numbers: 0 CONFORMS, 1 DOES NOT CONFORM (a MUST rule failed), 2 INCOMPLETE (the
harness could not judge: interrupted, a driver fault, nothing judged). A baseline never
changes it: whether the verdicts match one is a separate line of the certificate.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "EXIT_CONFORMS",
    "EXIT_DOES_NOT_CONFORM",
    "EXIT_ERRORS",
    "EXIT_FAILURES",
    "EXIT_INCOMPLETE",
    "EXIT_OK",
    "EXIT_USAGE",
    "ExitCode",
]


class ExitCode(IntEnum):
    OK = 0
    FAILURES = 1
    ERRORS = 2
    USAGE = 2  # an alias of ERRORS: bad usage is the run's own trouble, not the subject's


EXIT_OK = ExitCode.OK
EXIT_FAILURES = ExitCode.FAILURES
EXIT_ERRORS = ExitCode.ERRORS
EXIT_USAGE = ExitCode.USAGE

EXIT_CONFORMS = ExitCode.OK  # `kconform certify`: every MUST case judged passed
EXIT_DOES_NOT_CONFORM = ExitCode.FAILURES  # a MUST rule failed
EXIT_INCOMPLETE = ExitCode.ERRORS  # the harness could not judge enough to certify
