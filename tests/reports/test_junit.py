"""JUnit XML: parses, counts add up, failures carry the evidence, CI sees what kconform decides."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from kconform.reports.common import SKIP_VERDICTS, fails_run
from kconform.reports.junit import write_junit
from kconform.reports.model import RunResults


def _write(results: RunResults, tmp_path: Path) -> ET.Element:
    path = tmp_path / "out" / "junit.xml"
    write_junit(results, path)
    return ET.parse(path).getroot()


def _case(root: ET.Element, subject: str, case_id: str) -> ET.Element:
    found = root.findall(f"testsuite/testcase[@classname='{subject}'][@name='{case_id}']")
    assert len(found) == 1, (subject, case_id)
    return found[0]


def _props(element: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in element.findall("properties/property")}


def test_one_testsuite_per_subject_and_one_testcase_per_result(run, tmp_path):
    root = _write(run, tmp_path)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["reference", "librdkafka_mock", "confluent-kafka"]
    assert sum(len(s.findall("testcase")) for s in suites) == len(run.results)
    for suite in suites:
        for attr in ("tests", "failures", "errors", "skipped", "time", "timestamp"):
            assert suite.get(attr) is not None, attr
        cases = suite.findall("testcase")
        assert int(suite.get("tests", "")) == len(cases)
        assert int(suite.get("failures", "")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors", "")) == sum(c.find("error") is not None for c in cases)
        assert int(suite.get("skipped", "")) == sum(c.find("skipped") is not None for c in cases)
        assert abs(float(suite.get("time", "")) - 0.25 * len(cases)) < 0.01
    for attr in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(attr, "")) == sum(int(s.get(attr, "")) for s in suites)


def test_failures_are_exactly_the_results_that_fail_the_run(run, tmp_path):
    root = _write(run, tmp_path)
    for r in run.results:
        case = _case(root, r.subject, r.case_id)
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        assert (bad is not None) == fails_run(r), r.key
        assert (case.find("skipped") is not None) == (r.verdict in SKIP_VERDICTS), r.key


def test_a_failure_shows_expected_vs_observed_and_the_wire_log(run, tmp_path):
    root = _write(run, tmp_path)
    failure = _case(root, "librdkafka_mock", "kip511.apiversions.valid").find("failure")
    assert failure is not None
    assert failure.get("type") == "fail"
    assert "[MUST] verdict fail" in failure.get("message", "")
    assert "ErrorCode: expected 0, observed 42" in failure.get("message", "")
    body = failure.text or ""
    assert "BAD ErrorCode: expected 0, observed 42" in body
    assert "spec: KIP-714 Broker behaviour" in body
    assert "wire log:" in body and "ApiVersionsRequest v3 {}" in body
    assert "+0.000ms" in body and "+3.000ms" in body and "[throttled]" in body


def test_an_error_verdict_is_a_junit_error_with_the_message(run, nasty, tmp_path):
    root = _write(run, tmp_path)
    case = _case(root, "librdkafka_mock", "kip714.push.terminating")
    error = case.find("error")
    assert error is not None and case.find("failure") is None
    assert nasty in error.get("message", "")  # escaped by the writer, intact after parsing


def test_a_baseline_difference_fails_and_an_expected_fail_does_not(run, tmp_path):
    root = _write(run, tmp_path)
    expected = _case(root, "librdkafka_mock", "kip714.configs.invalid")
    assert expected.find("failure") is None and expected.find("error") is None
    assert _props(expected)["baseline"] == "fail"
    changed = _case(root, "librdkafka_mock", "kip714.configs.changed")
    failure = changed.find("failure")
    assert failure is not None
    assert "verdict non-strict, baseline says pass" in failure.get("message", "")


def test_skipped_says_which_kind_of_skip(run, tmp_path):
    root = _write(run, tmp_path)
    unsupported = _case(root, "librdkafka_mock", "kip714.push.cadence").find("skipped")
    skipped = _case(root, "librdkafka_mock", "kip977.meters.bytes_in").find("skipped")
    assert unsupported is not None and skipped is not None
    assert unsupported.get("message", "").startswith("unsupported: needs capability")
    assert skipped.get("message", "").startswith("skipped: target librdkafka_mock unavailable")


def test_properties_carry_level_verdict_and_spec(run, tmp_path):
    root = _write(run, tmp_path)
    props = _props(_case(root, "reference", "kip714.push.cadence"))
    assert props["level"] == "SHOULD"
    assert props["verdict"] == "non-strict"
    assert props["spec"] == "KIP-714 Broker behaviour"
    suite = root.find("testsuite[@name='reference']")
    assert suite is not None
    assert _props(suite)["capabilities"] == "client_metrics_admin,kip977,telemetry"
    assert _props(suite)["version"] == "0.1.0"


def test_non_strict_results_pass_but_keep_their_evidence(run, tmp_path):
    root = _write(run, tmp_path)
    case = _case(root, "reference", "kip714.push.cadence")
    assert case.find("failure") is None
    out = case.find("system-out")
    assert out is not None and "BAD ErrorCode" in (out.text or "")


def test_control_characters_never_make_the_xml_invalid(run, tmp_path):
    run.results[1].message = "broker sent \x00\x07 in ClientSoftwareName \ud800"
    run.results[1].wire_log[0]["summary"] = "name='\x1b[31m'"
    root = _write(run, tmp_path)
    failure = _case(root, "librdkafka_mock", "kip511.apiversions.valid").find("failure")
    assert failure is not None
    assert "\\x00\\x07" in failure.get("message", "")
    assert "\\x1b[31m" in (failure.text or "")


def test_empty_run_is_valid_junit(tmp_path):
    root = _write(RunResults(kconform_version="0.1.0", started=1.0, finished=2.0), tmp_path)
    assert root.get("tests") == "0" and root.findall("testsuite") == []


def test_interrupted_run_adds_an_error_so_ci_notices(run, tmp_path):
    run.results = [r for r in run.results if not fails_run(r)]
    run.interrupted = True
    root = _write(run, tmp_path)
    assert int(root.get("errors", "")) == 1
    marker = root.find("testsuite[@name='kconform.run']/testcase/error")
    assert marker is not None and "interrupted" in marker.get("message", "")


def test_sample_run_counts_match_its_verdicts(sample_run, tmp_path):
    root = _write(sample_run, tmp_path)
    failing = [r for r in sample_run.results if fails_run(r)]
    assert int(root.get("tests", "")) == len(sample_run.results)
    assert int(root.get("failures", "")) + int(root.get("errors", "")) == len(failing)
    skipped = sum(r.verdict in SKIP_VERDICTS and not fails_run(r) for r in sample_run.results)
    assert int(root.get("skipped", "")) == skipped
