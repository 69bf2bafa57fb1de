"""The CI rule shared by every writer, verdict changes, and the terminal summary table."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import jsonschema

from kconform.reports.common import (
    case_groups,
    changes,
    fails_run,
    kip_sort_key,
    printable,
    run_passes,
    slug,
    subjects,
)
from kconform.reports.html import write_html
from kconform.reports.model import SCHEMA_PATH, RunResults
from kconform.reports.summary import summary_table


def test_fixture_and_sample_runs_follow_the_published_schema(run, sample_run):
    schema = json.loads(SCHEMA_PATH.read_text())
    for results in (run, sample_run):
        data = json.loads(json.dumps(results.to_dict()))
        jsonschema.validate(data, schema)


def test_fails_run_follows_the_plugin_rule(make_result):
    assert fails_run(make_result("kip511.a.b", "reference", "fail"))
    assert fails_run(make_result("kip511.a.b", "reference", "error"))
    for verdict in ("pass", "non-strict", "informational", "unsupported", "skipped"):
        assert not fails_run(make_result("kip511.a.b", "reference", verdict))
    assert not fails_run(make_result("kip511.a.b", "reference", "fail", baseline="fail"))
    assert fails_run(make_result("kip511.a.b", "reference", "pass", baseline="fail"))


def test_an_unmet_precondition_never_fails_a_run(make_result):
    """The subject did not do what the case judges: no evidence either way, baseline or not."""
    for baseline in (None, "pass", "fail", "not-applicable"):
        result = make_result("kip714.a.b", "confluent-kafka", "not-applicable", baseline=baseline)
        assert not fails_run(result)


def test_a_run_that_judged_nothing_does_not_pass(run, make_result):
    nothing = replace(run, results=[make_result("kip714.a.b", "reference", "not-applicable")])
    assert not run_passes(nothing)
    assert "overall: FAIL" in summary_table(nothing)


def test_run_passes_needs_no_failing_result_and_a_complete_run(run):
    assert not run_passes(run)
    run.results = [r for r in run.results if not fails_run(r)]
    assert run_passes(run)
    run.interrupted = True
    assert not run_passes(run)


def test_subjects_put_brokers_first_and_count_verdicts(run):
    found = subjects(run)
    assert [s.name for s in found] == ["reference", "librdkafka_mock", "confluent-kafka"]
    assert found[-1].kind == "client"
    mock = found[1]
    assert mock.counts["fail"] == 2 and mock.counts["error"] == 1
    # a fail the baseline expects does not fail the run; a non-strict it does not expect does
    assert {r.case_id for r in mock.failing} == {
        "kip511.apiversions.valid", "kip714.push.terminating", "kip714.configs.changed",
    }  # fmt: skip


def test_results_of_undescribed_subjects_still_get_a_column(run, make_result):
    run.subjects = []
    assert [s.name for s in subjects(run)][:2] == ["reference", "librdkafka_mock"]


def test_a_target_that_served_only_as_the_clients_broker_is_no_subject(run):
    """`--target apache:4.1.0` with clients: the clients' cases run against a reference, which is
    described but judged on nothing. It used to get a row (0 results, CI "ok"), a column and an
    empty JUnit suite."""
    run.results = [r for r in run.results if r.subject != "reference"]
    assert any(s["name"] == "reference" for s in run.subjects)
    assert "reference" not in [s.name for s in subjects(run)]
    rows = [line.split()[0] for line in summary_table(run).splitlines() if line.strip()]
    assert "reference" not in rows and "librdkafka_mock" in rows


def test_groups_sort_kips_numerically_then_other_groups(run):
    groups = case_groups(run.results)
    assert list(groups) == ["KIP-511", "KIP-714", "KIP-977", "fuzz"]
    assert list(groups["KIP-714"]) == sorted(groups["KIP-714"])
    assert kip_sort_key("KIP-98") < kip_sort_key("KIP-511") < kip_sort_key("fuzz")


def test_changes_against_previous_run_and_baselines(run):
    previous = copy.deepcopy(run)
    previous.results[0].verdict = "fail"  # kip511.apiversions.valid on reference
    previous.results.append(replace(previous.results[0], case_id="kip511.gone"))
    run.results = [r for r in run.results if r.case_id != "fuzz.codec.roundtrip"]
    found = {(c.case_id, c.subject, c.old, c.new, c.against) for c in changes(run, previous)}
    assert ("kip511.apiversions.valid", "reference", "fail", "pass", "previous run") in found
    assert ("kip511.gone", "reference", "fail", None, "previous run") in found
    assert ("fuzz.codec.roundtrip", "reference", "pass", None, "previous run") in found
    # the baseline recorded in a result, and one given explicitly
    assert ("kip714.configs.changed", "librdkafka_mock", "pass", "non-strict",
            "baseline") in found  # fmt: skip
    given = changes(run, None, {"reference": {"kip714.push.cadence": "pass"}})
    assert [(c.case_id, c.old, c.new) for c in given if c.subject == "reference"] == [
        ("kip714.push.cadence", "pass", "non-strict")
    ]


def test_an_interrupted_run_does_not_report_unreached_cases_as_dropped(run):
    previous = copy.deepcopy(run)
    run.results = run.results[:2]
    run.interrupted = True
    assert all(c.new is not None for c in changes(run, previous))


def test_slug_and_printable_make_ids_and_text_safe():
    assert slug("reference:no_push_throttle") == "reference-no_push_throttle"
    assert slug("kip714.push.x") == "kip714.push.x"
    assert slug("::") == "_"
    assert printable("a\x00b\x1bc\td") == "a\\x00b\\x1bc\td"


def test_summary_table_counts_subjects_and_names_failing_cases(run):
    text = summary_table(run)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["subject", "kind", "pass"]
    mock = next(line for line in lines if line.startswith("librdkafka_mock"))
    assert mock.split()[-1] == "FAIL"
    assert mock.split()[-2] == "6"  # total
    assert "    kip714.configs.changed [SHOULD]: verdict non-strict, baseline says pass" in lines
    assert "kip714.configs.invalid" not in text  # fail, but the baseline expects it
    assert next(line for line in lines if line.startswith("reference")).endswith("ok")
    assert lines[-1].startswith("overall: FAIL")


def test_summary_table_truncates_long_failure_lists(run, make_result):
    run.results += [make_result(f"kip511.many.c{i}", "reference", "fail") for i in range(9)]
    text = summary_table(run, max_failing=3)
    assert "... and 6 more" in text


def test_summary_table_of_empty_and_interrupted_runs():
    empty = RunResults(kconform_version="0.1.0", started=1.0)
    assert "no cases ran" in summary_table(empty)
    empty.interrupted = True
    assert "interrupted" in summary_table(empty)


def test_an_interrupted_run_says_how_many_case_runs_were_planned(run, tmp_path):
    run.interrupted = True
    run.planned = [{"name": "reference", "kind": "broker", "cases": 150},
                   {"name": "java", "kind": "client", "cases": 50}]  # fmt: skip
    done = len(run.results)
    said = f"INTERRUPTED after {done} of 200 planned case runs"
    assert said in summary_table(run)
    assert f"interrupted {said.split(' ', 1)[1]}" in write_html(run, tmp_path).read_text("utf-8")
    run.planned = []  # a results file from before the count was kept
    assert f"INTERRUPTED after {done} case runs" in summary_table(run)


def test_summary_table_of_a_passing_interrupted_run_says_why_ci_fails(run):
    run.results = [r for r in run.results if not fails_run(r)]
    assert summary_table(run).splitlines()[-1].startswith("overall: PASS")
    run.interrupted = True
    text = summary_table(run)
    assert "INTERRUPTED" in text and text.splitlines()[-1].startswith("overall: FAIL")
