"""How a case's outcome becomes its verdict (`kconform.plugin.verdicts._call_verdict`)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from kconform.engine.check import Check, present
from kconform.engine.model import CaseInfo, Level, Verdict
from kconform.errors import HarnessDefect, PreconditionUnmet, Unsupported
from kconform.plugin import verdicts
from kconform.plugin.state import CHECK

MUST_CASE = CaseInfo(
    "kip714.example.must", "an example MUST case", "none", Level.MUST, "KIP-714", frozenset(),
    "broker",
)  # fmt: skip


def _verdict(check: Check, fail_precondition: bool) -> Verdict:
    def case() -> None:
        if fail_precondition:
            check.precondition("something the case needs", "present", "absent", ok=False)

    item = SimpleNamespace(stash=pytest.Stash())
    item.stash[CHECK] = check
    call = pytest.CallInfo.from_call(case, when="call", reraise=None)
    return verdicts._call_verdict(item, MUST_CASE, call)[0]  # type: ignore[arg-type]


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


def test_an_unmet_precondition_says_why_however_it_was_raised() -> None:
    def outcome(case: object) -> tuple[Verdict, str, str]:
        check = Check(MUST_CASE, None)
        item = SimpleNamespace(stash=pytest.Stash())
        item.stash[CHECK] = check
        call = pytest.CallInfo.from_call(case, when="call", reraise=None)  # type: ignore[arg-type]
        verdict, message = verdicts._call_verdict(item, MUST_CASE, call)  # type: ignore[arg-type]
        return verdict, message, "; ".join(check.notes)

    def direct() -> None:  # a helper shared by many cases raises it with the reason
        raise PreconditionUnmet("the broker never applies subscriptions", needs="kip714.x")

    verdict, message, notes = outcome(direct)
    assert verdict is Verdict.NOT_APPLICABLE and "never applies" in message and not notes

    def noted() -> None:  # check.precondition notes it; the message would only repeat it
        raise PreconditionUnmet("x")

    check = Check(MUST_CASE, None)
    with pytest.raises(PreconditionUnmet):
        check.precondition("a", 1, 2)
    item = SimpleNamespace(stash=pytest.Stash())
    item.stash[CHECK] = check
    call = pytest.CallInfo.from_call(noted, when="call", reraise=None)
    assert verdicts._call_verdict(item, MUST_CASE, call) == (Verdict.NOT_APPLICABLE, "")  # type: ignore[arg-type]


def test_a_value_the_harness_guarantees_but_lacks_is_an_error_never_a_fail() -> None:
    """A bare `assert x is not None` in a suite would be a `fail` of the subject."""
    check = Check(MUST_CASE, None)
    assert present(0, "a falsy value that is there") == 0

    def case() -> None:
        present(None, "the answer time a precondition required")

    item = SimpleNamespace(stash=pytest.Stash())
    item.stash[CHECK] = check
    call = pytest.CallInfo.from_call(case, when="call", reraise=None)
    verdict, message = verdicts._call_verdict(item, MUST_CASE, call)  # type: ignore[arg-type]
    assert verdict is Verdict.ERROR
    assert "the answer time a precondition required" in message
    with pytest.raises(HarnessDefect):
        present(None, "x")


def test_a_case_ended_in_setup_is_judged_by_its_typed_outcome_not_its_message() -> None:
    """`unsupported` and `not-applicable` travel as types on the item (they were a prefix the
    verdict hook searched skip messages for); a skip that only reads like one is `skipped`."""
    lookalike = SimpleNamespace(stash=pytest.Stash())
    assert verdicts._setup_verdict(lookalike) is Verdict.SKIPPED  # type: ignore[arg-type]

    unsupported = SimpleNamespace(stash=pytest.Stash())
    with pytest.raises(pytest.skip.Exception, match=r"^unsupported: reference lacks sink$"):
        verdicts.skip_unjudged(unsupported, Unsupported("reference lacks sink"))  # type: ignore[arg-type]
    assert verdicts._setup_verdict(unsupported) is Verdict.UNSUPPORTED  # type: ignore[arg-type]

    unmet = SimpleNamespace(stash=pytest.Stash())
    with pytest.raises(pytest.skip.Exception, match=r"^not-applicable: one broker$"):
        verdicts.skip_unjudged(unmet, PreconditionUnmet("one broker"))  # type: ignore[arg-type]
    assert verdicts._setup_verdict(unmet) is Verdict.NOT_APPLICABLE  # type: ignore[arg-type]


def test_an_interrupted_session_writes_its_results_as_interrupted(
    pytester: pytest.Pytester,
) -> None:
    """The interrupt is kept on the session's RunState (it went through a private attribute of
    pytest's config, beside a `pytest_keyboard_interrupt` hook with no body)."""
    pytester.makepyfile(
        "import pytest\ndef test_stops():\n    pytest.exit('stopped')\n"
        "def test_never_runs():\n    pass\n"
    )
    results = pytester.path / "results.json"
    result = pytester.runpytest("-p", "kconform.plugin", "--kconform-results", str(results))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert json.loads(results.read_text(encoding="utf-8"))["interrupted"] is True

    pytester.makepyfile("def test_runs():\n    pass\n")
    result = pytester.runpytest("-p", "kconform.plugin", "--kconform-results", str(results))
    assert result.ret == pytest.ExitCode.OK
    assert json.loads(results.read_text(encoding="utf-8"))["interrupted"] is False


def test_the_suites_hold_no_bare_assert() -> None:
    """Suites judge with `check.expect`/`require` and narrow types with `present`: an `assert`
    that fires is a `fail` verdict with no expectation behind it."""
    suites = Path(__file__).resolve().parents[1] / "suites"
    found = [
        f"{path.relative_to(suites)}:{node.lineno}"
        for path in sorted(suites.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assert)
    ]
    assert found == []
