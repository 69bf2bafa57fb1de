"""How a case's outcome becomes its verdict (`kconform.plugin._call_verdict`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kconform import plugin
from kconform.engine.check import Check, PreconditionUnmet
from kconform.engine.model import CaseInfo, Level, Verdict

MUST_CASE = CaseInfo(
    "kip714.example.must", "an example MUST case", "none", Level.MUST, "KIP-714", frozenset(),
    "broker",
)  # fmt: skip


def _verdict(check: Check, fail_precondition: bool) -> Verdict:
    def case() -> None:
        if fail_precondition:
            check.precondition("something the case needs", "present", "absent", ok=False)

    item = SimpleNamespace(stash=pytest.Stash())
    item.stash[plugin._CHECK] = check
    call = pytest.CallInfo.from_call(case, when="call", reraise=None)
    return plugin._call_verdict(item, MUST_CASE, call)[0]  # type: ignore[arg-type]


def test_an_unmet_precondition_alone_is_not_applicable() -> None:
    check = Check(MUST_CASE, None)
    check.expect("seen before", 1, 1)
    assert _verdict(check, fail_precondition=True) is Verdict.NOT_APPLICABLE


def test_a_deviation_seen_before_an_unmet_precondition_still_fails() -> None:
    check = Check(MUST_CASE, None)
    check.expect("seen before", 1, 2)
    assert _verdict(check, fail_precondition=True) is Verdict.FAIL
    assert _verdict(check, fail_precondition=False) is Verdict.FAIL

    with pytest.raises(PreconditionUnmet):  # what stopped the case there
        check.precondition("x", 1, 2)
