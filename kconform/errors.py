"""Every exception kconform raises on purpose, under a few bases that say whose fault it is.

The verdict of a case that ends in one follows from its base, never from its message:

- `HarnessError` -> `error`: the harness could not decide (its own defect, a target that died, a
  case that ran out of time). Always something to fix in the harness or its environment.
- `SubjectViolation` -> `fail` (MUST) or `non-strict` (SHOULD): the subject broke the rule the
  case judges.
- `Unmet` -> `unsupported`, `not-applicable` or `skipped`: the subject lacks a capability the case
  needs, did not bring about what the case judges, or cannot run on this machine.
- `ProtocolError`: bytes or values outside the Kafka protocol, OTLP or a config's syntax. A fact
  about data, not yet a verdict: a case that meets one judges it (an expectation); one that
  escapes a case means the harness could not decide (`error`).
- `UsageError`: bad flags or input: one line and exit 2, never a traceback.

Signals that must pass through code that treats every `Exception` as its own (Hypothesis takes
any Exception for a finding) derive from BaseException where they are raised and are not errors.
This module sits below every layer: the codec imports it as readily as the CLI.
"""

from __future__ import annotations

__all__ = [
    "CaseAbort",
    "HarnessDefect",
    "HarnessError",
    "Inconclusive",
    "KconformError",
    "PreconditionUnmet",
    "ProtocolError",
    "SubjectViolation",
    "Unavailable",
    "Unmet",
    "Unsupported",
    "UsageError",
]


class KconformError(Exception):
    """The root of every exception kconform raises on purpose."""


class HarnessError(KconformError):
    """The harness could not decide: the case's verdict is `error`, never the subject's fault."""


class HarnessDefect(HarnessError):
    """Something the harness itself guarantees did not hold (a value its own earlier step must
    have set)."""


class Inconclusive(HarnessError):
    """The target did something the case cannot judge (it stopped answering, the case ran out of
    time); the message says what."""


class SubjectViolation(KconformError):
    """The subject broke the rule the case judges: `fail` at MUST level, `non-strict` at SHOULD."""


class CaseAbort(SubjectViolation):
    """A required expectation failed; the rest of the case cannot run meaningfully."""


class Unmet(KconformError):
    """The case cannot be judged on this subject or machine; neither a fail nor an error."""


class Unsupported(Unmet):
    """The subject lacks what the case needs, found out only once the case ran (a static setting
    it cannot change, say): `unsupported`; the message says what is missing."""


class PreconditionUnmet(Unmet):
    """The subject did not bring about what the case judges (no Terminating push was sent, one
    broker where two are needed): `not-applicable`.

    `needs`: the rule id whose requirement the precondition is (ApiVersions v3+ is what
    `kip511.client.software_identity` asks), so a certificate can show the case as a consequence
    of that rule's failure rather than as something the harness could not judge."""

    def __init__(self, message: str = "", *, needs: str = "") -> None:
        super().__init__(message)
        self.needs = needs


class Unavailable(Unmet):
    """The target or client cannot run on this machine (no library, no JDK, no distribution):
    `skipped`, with the reason."""


class ProtocolError(KconformError, ValueError):
    """Bytes or values outside the Kafka protocol, OTLP or a config's syntax (see the module
    docstring for what it means for a verdict)."""


class UsageError(KconformError, ValueError):
    """Bad flags or input: reported as one line, exit 2.

    Also a ValueError: the parsers that raise it (durations, URLs, results files, client and
    target names) are called from argparse types and from code that turns a ValueError into that
    one line, and kept their ValueError contract when they moved to this hierarchy."""
