"""How a conformance case's outcome becomes its verdict, and the verdict a pytest outcome.

After each case the verdict is computed from what it raised (typed: `Unsupported`,
`PreconditionUnmet`, `CaseAbort`, harness errors; kconform.engine.check) or, for a case that
ended in setup, from the outcome `skip_unjudged` kept on its item; the result is recorded in
the results file (kconform.plugin.state) and mapped to a pytest outcome: a run fails on
fail/error verdicts, or with `--baseline` on any verdict that differs.
"""

from __future__ import annotations

import time
from typing import Any, NoReturn, TypeAlias

import pytest

from kconform.engine.check import PRECONDITION_NOTE, Check
from kconform.engine.model import CaseInfo, Level, Verdict, verdict_for
from kconform.engine.results import CaseResult
from kconform.errors import HarnessError, PreconditionUnmet, SubjectViolation, Unsupported
from kconform.fixtures.targets.base import BrokerTarget
from kconform.plugin.items import case_info
from kconform.plugin.state import CHECK, STATE, RunState, evidence, format_failure

__all__ = ["HARNESS_ERRORS", "NOT_RUN", "Unjudged", "skip_unjudged"]

Unjudged: TypeAlias = Unsupported | PreconditionUnmet
"""Why a case was not judged: the subject lacks what it needs, or did not bring about what it
judges."""

NOT_RUN = pytest.StashKey[Unjudged]()
"""On a case's item: the outcome of a case that ended in setup without running."""

HARNESS_ERRORS: tuple[type[BaseException], ...] = (HarnessError, ConnectionError, TimeoutError)
"""What the harness could not decide (kconform.errors.HarnessError), and the transport's own
errors where no case caught them: `error`, named by type."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    info = case_info(item)
    if info is None:
        return report
    if report.when == "setup" and report.skipped:
        _finish(item, info, report, _setup_verdict(item), _skip_message(report))
    elif report.when == "setup" and report.failed:  # its subject could not be set up
        _finish(item, info, report, Verdict.ERROR, _setup_failure(call))
    elif report.when == "call":
        verdict, message = _call_verdict(item, info, call)
        _finish(item, info, report, verdict, message)
    return report


def skip_unjudged(item: pytest.Item, outcome: Unjudged) -> NoReturn:
    """End a case in setup, before it runs, as `unsupported` (Unsupported) or `not-applicable`
    (PreconditionUnmet): the outcome is kept on the item for the verdict, the skip says why."""
    item.stash[NOT_RUN] = outcome
    pytest.skip(f"{_unjudged_verdict(outcome)}: {outcome}")


def _unjudged_verdict(outcome: Unjudged) -> Verdict:
    return Verdict.UNSUPPORTED if isinstance(outcome, Unsupported) else Verdict.NOT_APPLICABLE


def _setup_verdict(item: pytest.Item) -> Verdict:
    """A case skipped in setup: as skip_unjudged said, else `skipped` (a target or client that
    is unavailable here, --stop-target-on-fail)."""
    outcome = item.stash.get(NOT_RUN, None)
    return Verdict.SKIPPED if outcome is None else _unjudged_verdict(outcome)


def _skip_message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)


def _setup_failure(call: pytest.CallInfo[None]) -> str:
    """Why a case's setup raised (a target or client that could not be created or built), kept
    as its `error` message: without a result the run only said that nothing ran."""
    error = call.excinfo.value if call.excinfo is not None else None
    if error is None:
        return "setup failed"
    text = " ".join(str(error).split())
    return f"could not be set up: {type(error).__name__}: {text}" if text else type(error).__name__


def _call_verdict(
    item: pytest.Item, info: CaseInfo, call: pytest.CallInfo[None]
) -> tuple[Verdict, str]:
    from kconform.codecs.wire import DecodeError

    check = item.stash.get(CHECK, None)
    excinfo = call.excinfo
    if excinfo is None:
        return verdict_for(info.level, violated=bool(check and check.violated)), ""
    error = excinfo.value
    if isinstance(error, Unsupported):
        return Verdict.UNSUPPORTED, str(error)
    if isinstance(error, PreconditionUnmet):
        if check is not None and error.needs:  # raised directly, not through check.precondition
            check.needs = error.needs
        if check is not None and check.violated:  # a deviation seen before it still counts
            return verdict_for(info.level, violated=True), ""
        noted = check is not None and any(n.startswith(PRECONDITION_NOTE) for n in check.notes)
        # check.precondition noted what was not met; raised directly, the exception says it
        return Verdict.NOT_APPLICABLE, "" if noted else str(error)
    if isinstance(error, SubjectViolation | AssertionError):
        return verdict_for(info.level, violated=True), str(error)
    if isinstance(error, pytest.skip.Exception):
        return Verdict.SKIPPED, str(error)
    if isinstance(error, (*HARNESS_ERRORS, DecodeError)):
        return Verdict.ERROR, f"{type(error).__name__}: {error}"
    return Verdict.ERROR, f"harness error: {type(error).__name__}: {error}"


def _finish(
    item: pytest.Item, info: CaseInfo, report: pytest.TestReport, verdict: Verdict, message: str
) -> None:
    state: RunState = item.config.stash[STATE]
    check = item.stash.get(CHECK, None)
    target: Any = check.target if check else _param_target(item, state)
    if check is not None and check.subject is not None:
        target = check.subject  # client cases: the client is what is judged
    subject = target.name if target is not None else _param_label(item)
    if check is not None and check.notes:
        message = "; ".join(filter(None, [message, *check.notes]))
    baseline = state.baselines.get(subject, {}).get(info.id)
    result = CaseResult(
        case_id=info.id, title=info.title, spec_ref=info.spec_ref, level=str(info.level),
        kip=info.kip, subject=subject, subject_kind=info.kind,
        implementation=target.implementation if target else "",
        version=target.version if target else "",
        verdict=str(verdict), message=message,
        expectations=list(check.expectations) if check else [],
        wire_log=evidence(check), started=check.started if check else time.time(),
        duration=report.duration, waited=check.waited if check else 0.0, baseline=baseline,
        baseline_why=state.baseline_why.get(subject, {}).get(info.id),
        nodeid=item.nodeid, rules=list(info.rules),
        needs=check.needs if check and verdict is Verdict.NOT_APPLICABLE else "",
        api_keys=_sent_keys(check) if info.kind == "client" else [],
    )  # fmt: skip
    state.record(result)
    if verdict is Verdict.FAIL and info.level is Level.MUST:
        state.failed_must.add(subject)
    _set_outcome(report, result)


def _sent_keys(check: Check | None) -> list[int]:
    """The API keys the client sent in the whole case (the results' wire log keeps only the
    newest entries): what `--describe`'s claims are checked against (reports.claims)."""
    if check is None:
        return []
    sent = {e.api_key for e in check.evidence() if e.direction == "client->broker"}
    return sorted(k for k in sent if k is not None)


def _param_target(item: pytest.Item, state: RunState) -> BrokerTarget | None:
    spec = getattr(item, "callspec", None)
    label = spec.params.get("target").label if spec and "target" in spec.params else None
    return state.targets.get(label) if label else None


def _param_label(item: pytest.Item) -> str:
    spec = getattr(item, "callspec", None)
    for name in ("client", "target"):
        if spec and name in spec.params:
            return str(spec.params[name].label)
    return "harness"


def _set_outcome(report: pytest.TestReport, result: CaseResult) -> None:
    """Pass/fail as CI should see it: baseline differences, or fail/error without a baseline."""
    from kconform.reports.common import fails_run, failure_reason

    if fails_run(result):
        report.outcome = "failed"
        report.longrepr = format_failure(result, failure_reason(result))
    elif report.when == "call" and report.failed:
        report.outcome = "passed"  # an expected violation (baseline, non-strict, informational)
        report.longrepr = None
    report.user_properties.append(("kconform_verdict", result.verdict))
