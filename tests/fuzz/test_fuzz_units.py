"""The fuzz suites' parts, without a target: budgets, corpus, inputs, oracle, model, CLI."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from kconform.cli.fuzz import add_arguments, fuzz_table, run_fuzz
from kconform.codecs.compression import CompressionError, decompress
from kconform.codecs.framing import decode_request
from kconform.codecs.messages import (
    GetTelemetrySubscriptionsRequest,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    PushTelemetryRequest,
    RequestHeader,
)
from kconform.engine.fuzz import actions, budget, corpus, inputs, mutations, oracle, stream
from kconform.engine.fuzz.inputs import FuzzRequest
from kconform.engine.fuzz.model import TimedModel, signature
from kconform.engine.results import CaseResult, Expectation
from kconform.fixtures.reference import RequestContext
from kconform.reports.model import RunResults

FEW = settings(
    max_examples=20, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


# --- budgets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"), [("60s", 60), ("10m", 600), ("2h", 7200), ("1.5m", 90), ("45", 45)]
)
def test_budgets_parse(text: str, seconds: float) -> None:
    assert budget.parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "0s", "-1m", "10d", "m"])
def test_bad_budgets_are_refused(text: str) -> None:
    with pytest.raises(budget.BudgetError):
        budget.parse_budget(text)


def test_a_run_budget_is_shared_by_the_fuzz_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budget.BUDGET_ENV, "90")
    monkeypatch.delenv(budget.DEADLINE_ENV, raising=False)
    limits = budget.limits("request", "quick", fuzz_cases=9)
    assert limits.timed and limits.max_examples == budget.UNBOUNDED_EXAMPLES
    assert (limits.seconds, limits.shrink_seconds) == (7.5, 2.5)


def test_time_a_case_did_not_use_goes_to_the_cases_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(budget.BUDGET_ENV, "90")
    monkeypatch.setenv(budget.DEADLINE_ENV, str(time.time() + 60))  # 60 s left, 3 cases left
    limits = budget.limits("stateful", "quick", fuzz_cases=9, remaining=3)
    assert 14 < limits.seconds <= 15 and 4.5 < limits.shrink_seconds <= 5


def test_without_a_budget_the_profile_caps_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(budget.BUDGET_ENV, raising=False)
    quick, deep = budget.limits("stateful", "quick", 9), budget.limits("stateful", "deep", 9)
    assert not quick.timed and quick.max_examples <= deep.max_examples
    assert quick.steps < deep.steps and quick.seconds < deep.seconds


# --- corpus ------------------------------------------------------------------------------------


def test_selftest_findings_never_reach_the_committed_corpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(budget.CORPUS_ENV, raising=False)
    assert corpus.corpus_root("reference") == corpus.COMMITTED
    assert corpus.corpus_root("librdkafka_mock") == corpus.COMMITTED
    assert corpus.corpus_root("reference:no_push_throttle") != corpus.COMMITTED
    monkeypatch.setenv(budget.CORPUS_ENV, "/elsewhere")
    assert corpus.corpus_root("reference") == Path("/elsewhere")


def test_a_finding_is_saved_once_and_replayed(tmp_path: Path) -> None:
    request = FuzzRequest("ApiVersionsRequest v0 {} | truncated to 2 of 10 bytes", b"\x00\x12")
    for port in (40001, 40002):  # the same finding, seen by two runs
        text = f"case on target: hang\n  liveness: cannot connect to 127.0.0.1:{port}"
        path = corpus.save_trace(tmp_path, "fuzz.x", "reference", text, request.to_replay())
    assert [p.name for p in tmp_path.glob("*.txt")] == [path.name]
    assert path.name.startswith("fuzz.x-reference-")
    assert "127.0.0.1:40001" in path.read_text()  # the first record kept: reruns dirty nothing
    (replayed,) = corpus.replays(tmp_path, "fuzz.x")
    assert FuzzRequest.from_replay(replayed) == request
    assert corpus.replays(tmp_path, "fuzz.other") == []


STATEFUL_TRACE = """fuzz.stateful.telemetry on apache:4.1.0: {n} steps
  1. connect c1
  2. +{ms} ms     Push(#1(RBfDEA…), SubscriptionId=S1, terminating={term}, {codec}, 151 B OTLP)
              -> {answer}   MISMATCH: the model expects THROTTLING_QUOTA_EXCEEDED
              rule: known deviation apache-terminating-flag-kafka-20898 ({prose})
"""


def test_stateful_traces_ending_in_one_deviation_are_one_file(tmp_path: Path) -> None:
    def save(**fields: str) -> Path:
        defaults = {"n": "2", "ms": "3", "term": "false", "codec": "zstd",
                    "answer": "INVALID_REQUEST", "prose": "MUST; §C.4"}  # fmt: skip
        text = STATEFUL_TRACE.format(**{**defaults, **fields})
        return corpus.save_trace(tmp_path, "fuzz.stateful.x", "apache:4.1.0", text)

    first = save()
    assert save(n="9", ms="303", term="true", codec="snappy") == first  # other steps, same end
    assert save(prose="MUST; §C.4, reworded") == first  # the deviation's name is what counts
    other = save(answer="NONE")  # the broker answered differently: another finding
    assert other != first
    assert sorted(tmp_path.glob("*.txt")) == sorted([first, other])
    assert "zstd" in first.read_text()  # the first record kept


# --- inputs and mutations -----------------------------------------------------------------------


def test_a_fuzz_request_prints_as_values_then_bytes() -> None:
    request = FuzzRequest("GetTelemetrySubscriptionsRequest v0 {…}", b"\x00\x47\x00\x00", size=9)
    assert request.frame() == b"\x00\x00\x00\x09\x00\x47\x00\x00"
    assert repr(request).startswith("<GetTelemetrySubscriptionsRequest v0 {…}; 8 bytes 00000009")
    assert request.readable_api() == "GetTelemetrySubscriptions v0"
    assert FuzzRequest("x", b"\x00").claimed() is None


@pytest.mark.parametrize("group", list(inputs.GROUPS))
@FEW
@given(data=st.data())
def test_well_formed_requests_decode_as_what_they_claim(group: str, data: st.DataObject) -> None:
    request = data.draw(inputs.well_formed(group))
    frame = decode_request(request.payload, strict=False)
    assert frame.body is not None, (request.description, frame.body_error)
    assert frame.api_key in {c.api_key for c in inputs.GROUPS[group]}
    assert request.description.startswith(type(frame.body).struct_name)
    if frame.api_key in inputs.STATE_CHANGING:
        assert frame.body.validate_only


@FEW
@given(request=mutations.malformed("configs"))
def test_malformed_config_requests_never_change_the_target(request: FuzzRequest) -> None:
    assert " | " in request.description  # says what was broken
    assert not mutations.changes_state(request)


@pytest.mark.parametrize("group", list(inputs.GROUPS))
@FEW
@given(data=st.data())
def test_a_well_formed_family_shares_one_body_across_headers_and_versions(
    group: str, data: st.DataObject
) -> None:
    family = data.draw(inputs.well_formed_families(group))
    assert 1 <= len(family) <= inputs.FAMILY_MAX
    frames = [decode_request(r.payload, strict=False) for r in family]
    assert len({f.api_key for f in frames}) == 1  # one body, one api
    for request, frame in zip(family, frames, strict=True):
        assert frame.body is not None, (request.description, frame.body_error)
        assert request.description.startswith(type(frame.body).struct_name)
        if frame.api_key in inputs.STATE_CHANGING:
            assert frame.body.validate_only


@FEW
@given(family=mutations.malformed_families("configs"))
def test_a_malformed_family_breaks_one_request_in_several_ways(
    family: list[FuzzRequest],
) -> None:
    assert 1 <= len(family) <= inputs.FAMILY_MAX
    for request in family:
        assert " | " in request.description  # says what was broken
        assert not mutations.changes_state(request)
    bases = {r.description.split(" | ")[0] for r in family}
    assert len(bases) == 1


def test_a_pipelined_example_shrinks_to_the_one_request_that_fails() -> None:
    examples = stream.examples("api_versions", True, stream.Pipelining(64))
    shrunk = find(examples, lambda batch: any(r.size == 0 for r in batch))
    assert len(shrunk) == 1 and shrunk[0].size == 0


def test_a_real_alter_is_recognised_as_a_state_change() -> None:
    req = IncrementalAlterConfigsRequest
    body = req(resources=[req.AlterConfigsResource(resource_type=16, resource_name="s")])
    header = RequestHeader(request_api_key=44, request_api_version=1, correlation_id=1)
    for validate_only, changes in ((False, True), (True, False)):
        body.validate_only = validate_only
        payload = header.encode(2) + body.encode(1)
        assert mutations.changes_state(FuzzRequest("alter", payload)) is changes


@pytest.mark.parametrize("codec", sorted(actions.CORRUPT))
def test_corrupt_payloads_do_not_decompress(codec: int) -> None:
    with pytest.raises(CompressionError):
        decompress(actions.CORRUPT[codec], codec, max_size=1 << 20)


# --- oracle ------------------------------------------------------------------------------------


def test_nested_error_codes_are_all_judged() -> None:
    resp = IncrementalAlterConfigsResponse
    body = resp(responses=[resp.AlterConfigsResourceResponse(error_code=c) for c in (0, 40, 9999)])
    assert oracle.error_codes(body) == [0, 40, 9999]
    answered = oracle.Outcome("IncrementalAlterConfigs v1", "answered", (0, 40, 9999))
    assert answered.problem is not None and "9999" in answered.problem
    assert oracle.Outcome("x", "closed").problem is None
    assert oracle.Outcome("x", "hang", detail="no answer").problem == "no answer"
    assert answered.shape == ("IncrementalAlterConfigs v1", "INVALID_CONFIG+NONE+UNKNOWN(9999)")


# --- the model's clock ---------------------------------------------------------------------------


def _frame(body: object, key: int) -> object:
    header = RequestHeader(
        request_api_key=key, request_api_version=0, correlation_id=0, client_id="c"
    )
    assert hasattr(body, "encode")
    return decode_request(header.encode(2) + body.encode(0, strict=False), strict=False)


def test_near_an_interval_boundary_both_answers_are_acceptable() -> None:
    model, ctx = TimedModel(1_048_576), RequestContext("c1")
    (get,) = model.candidates(ctx, _frame(GetTelemetrySubscriptionsRequest(), 71), 0, 0)
    model.commit(get)
    reply = get.outcome.response_body
    assert reply is not None and reply.push_interval_ms == 300_000

    def push() -> object:
        body = PushTelemetryRequest(
            client_instance_id=reply.client_instance_id,
            subscription_id=reply.subscription_id,
            metrics=b"",
        )
        return _frame(body, 72)

    (first,) = model.candidates(ctx, push(), 1, 1)  # the first push after a Get
    model.commit(first)
    assert signature(first.outcome) == ("NONE",)
    early = model.candidates(ctx, push(), 10, 12)
    assert [signature(c.outcome) for c in early] == [("THROTTLING_QUOTA_EXCEEDED",)]
    boundary = model.candidates(ctx, push(), 299_999, 300_002)
    assert {signature(c.outcome) for c in boundary} == {("THROTTLING_QUOTA_EXCEEDED",), ("NONE",)}
    assert model.ambiguous_steps == 1


# --- the command ---------------------------------------------------------------------------------


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_fuzz_command_refuses_a_bad_budget_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_fuzz(_args("--budget", "ten minutes")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "budget 'ten minutes'" in err


def test_fuzz_table_shows_rate_and_shapes() -> None:
    result = CaseResult(
        case_id="fuzz.request.api_versions.well_formed",
        title="t",
        spec_ref="s",
        level="MUST",
        kip="fuzz",
        subject="reference",
        subject_kind="broker",
        implementation="i",
        version="v",
        verdict="pass",
        expectations=[
            Expectation("examples run", "(recorded)", 120, True),
            Expectation("examples/s", "(recorded)", 240.5, True),
            Expectation("distinct response shapes", "(recorded)", 6, True),
        ],
    )
    table = fuzz_table(RunResults(kconform_version="0", started=0, results=[result]))
    assert table.splitlines()[1].split()[-4:] == ["pass", "120", "240.5", "6"]
    assert json.dumps(table)  # printable


def test_the_stateful_oracle_names_the_rule_the_reference_enforces_for_each_error() -> None:
    """The oracle's push rules are the reference's check rows' (issue 28: derived from the
    table, not a second map beside it): the first Apache row per error, then the export's."""
    from kconform.codecs.errors import ErrorCode
    from kconform.engine.fuzz import model
    from kconform.fixtures.reference import validation

    first_row: dict[ErrorCode, str] = {}
    for row in validation.PUSH_VALIDATION:
        if not row.adds:
            first_row.setdefault(row.error, row.rule)
    for error, rule_id in validation.EXPORT_RULES.items():
        first_row.setdefault(error, rule_id)
    named = {code: ids[0] for code, ids in model.PUSH_RULE_IDS.items() if code != ErrorCode.NONE}
    assert named == first_row
    assert model.GET_RULE_IDS[ErrorCode.THROTTLING_QUOTA_EXCEEDED] == (
        validation.GET_THROTTLE_RULES[False],
    )
    assert model.OTHER_RULE_IDS["reserved"] == (validation.RESERVED.rule,)


def test_a_mismatch_cites_the_push_rule_never_the_get_rule() -> None:
    """An unmapped push error used to fall back to the Get rule (issue 28)."""
    from kconform.codecs.errors import ErrorCode
    from kconform.engine.fuzz import model
    from kconform.errors import HarnessDefect

    accepted = model.PUSH_RULES[ErrorCode.NONE]
    # the target refuses with an error no rule names a push the reference accepts
    assert model.rule_for(72, ("NONE",), ("UNKNOWN_SERVER_ERROR",), False) == accepted
    assert (
        model.rule_for(72, ("NONE",), ("INVALID_RECORD",), False)
        == (model.PUSH_RULES[ErrorCode.INVALID_RECORD])
    )
    assert (
        model.rule_for(71, ("NONE",), ("UNKNOWN_SERVER_ERROR",), False)
        == (model.GET_RULES[ErrorCode.NONE])
    )
    # the model itself answering an error its table does not name is the harness's defect
    with pytest.raises(HarnessDefect, match="UNKNOWN_SERVER_ERROR"):
        model.rule_for(72, ("UNKNOWN_SERVER_ERROR",), ("NONE",), False)
