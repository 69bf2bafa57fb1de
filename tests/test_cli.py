"""The kconform command as a person uses it: output, exit codes, one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest
from spawned import spawn, stderr_of

from kconform.cli import main
from kconform.codecs.framing import encode_request, encode_response
from kconform.codecs.messages import GetTelemetrySubscriptionsResponse, PushTelemetryRequest
from kconform.engine.results import CaseResult
from kconform.exit_codes import EXIT_ERRORS, EXIT_FAILURES, EXIT_OK, EXIT_USAGE
from kconform.reports.model import SCHEMA_PATH, RunResults
from kconform.runner import output_dir


def test_messages_lists_the_telemetry_apis(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["messages", "--format", "json"]) == EXIT_OK
    rows = {(r["name"], r["api_key"]) for r in json.loads(capsys.readouterr().out)}
    assert ("GetTelemetrySubscriptionsRequest", 71) in rows
    assert ("PushTelemetryRequest", 72) in rows
    assert ("ListConfigResourcesResponse", 74) in rows


def test_decode_request_frame(capsys: pytest.CaptureFixture[str]) -> None:
    frame = encode_request(PushTelemetryRequest(subscription_id=5, metrics=b"\x01\x02"), 0, 42)
    assert main(["decode", frame.hex(), "--json"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("correlation_id=42 client_id='kconform' PushTelemetryRequest v0")
    assert '"Metrics": "0102"' in out


def test_decode_response_frame_needs_api(capsys: pytest.CaptureFixture[str]) -> None:
    frame = encode_response(GetTelemetrySubscriptionsResponse(push_interval_ms=500), 0, 3)
    assert main(["decode", frame.hex(), "--response"]) == EXIT_USAGE
    assert main(["decode", frame.hex(), "--response", "--api-key", "71", "--api-version", "0"]) == 0
    assert "PushIntervalMs=500" in capsys.readouterr().out


def test_undecodable_frame_exits_1_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    frame = encode_request(PushTelemetryRequest(), 0, 1)
    assert main(["decode", frame[4:-6].hex()]) == EXIT_FAILURES
    captured = capsys.readouterr()
    assert "PushTelemetryRequest" in captured.out
    assert "body not decoded" in captured.out


def test_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "not-hex"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'not-hex' is not a file here nor hex" in err
    assert main(["no-such-command"]) == EXIT_USAGE  # argparse's error: returned, not raised
    assert "Traceback" not in capsys.readouterr().err


def test_run_writes_results_junit_html_and_latest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the default folder is reports/out/<time> under the cwd
    args = ["run", "--target", "reference", "--cases", "kip511.apiversions.valid*"]
    assert main(args) == EXIT_OK
    out = capsys.readouterr().out
    assert "[   1/1] pass" in out and "report:" in out
    base = tmp_path / "reports" / "out"
    run_dir = next(p for p in base.iterdir() if p.name != "latest")
    assert (base / "latest").resolve() == run_dir.resolve()
    results = RunResults.read(run_dir / "results.json")
    assert [(r.case_id, r.verdict) for r in results.results] == [
        ("kip511.apiversions.valid_software_accepted", "pass")
    ]
    assert ET.parse(run_dir / "junit.xml").getroot().iter("testcase")
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(json.loads((run_dir / "results.json").read_text()), schema)
    assert "kip511.apiversions.valid_software_accepted" in (run_dir / "index.html").read_text()


def test_run_against_a_mutant_exits_1_and_reports_the_evidence(tmp_path: Path) -> None:
    target, case = "reference:software_name_unchecked", "kip511.apiversions.invalid.space"
    assert main(["run", "--target", target, "--cases", case, "--out", str(tmp_path)]) == 1
    run_dir = tmp_path
    (result,) = RunResults.read(run_dir / "results.json").results
    assert result.verdict == "fail"
    page = (run_dir / "cases" / "kip511.apiversions.invalid.space.html").read_text()
    assert "ApiVersionsRequest v3" in page  # the decoded wire log is on the case page


def test_no_push_throttle_mutant_exits_1_with_the_failed_case_and_wire_log(tmp_path: Path) -> None:
    args = [
        "run",
        "--target",
        "reference:no_push_throttle",
        "--cases",
        "kip714.push.throttle.early",
    ]
    assert main([*args, "--out", str(tmp_path)]) == EXIT_FAILURES
    (result,) = RunResults.read(tmp_path / "results.json").results
    assert (result.verdict, result.level) == ("fail", "MUST")
    page = (tmp_path / "cases" / "kip714.push.throttle.early.html").read_text()
    assert "PushTelemetryRequest v0" in page and "THROTTLING_QUOTA_EXCEEDED" in page


def test_run_rejects_bad_flags_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--target", "nope"]) == EXIT_USAGE
    assert main(["run", "--baseline", "/no/such/file.json"]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "unknown target 'nope'" in err[0] and "does not exist" in err[1]


def test_list_names_every_case_with_level_and_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--format", "json"]) == EXIT_OK
    cases = json.loads(capsys.readouterr().out)
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)) and "kip511.apiversions.valid_software_accepted" in ids
    assert all(c["level"] in ("MUST", "SHOULD", "INFO") and c["spec"] for c in cases)


def test_targets_says_why_kraft_is_unavailable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["targets"]) == EXIT_OK
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "available" in lines["reference"]
    assert "kraft" in lines  # available with Docker, else the reason why not
    if " unavailable " in lines["kraft"]:
        assert "Docker" in lines["kraft"] or "docker" in lines["kraft"]


def test_baseline_and_report_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    args = ["run", "--target", "reference", "--cases", "kip511.apiversions.valid*"]
    assert main([*args, "--out", str(run_dir)]) == EXIT_OK
    baseline = tmp_path / "reference.json"
    assert main(["baseline", str(run_dir), "--subject", "reference", "--out", str(baseline)]) == 0
    # a pass nothing contradicts is no entry: the file lists only exceptions (issue 44)
    assert json.loads(baseline.read_text()) == {"subject": "reference", "verdicts": {}}
    merged = tmp_path / "merged"
    assert main(["report", str(run_dir), "--out", str(merged)]) == 0
    assert len(RunResults.read(merged / "results.json").results) == 1
    assert (merged / "index.html").exists()
    # one run given twice (its folder and its results file) would count every verdict twice
    assert main(["report", str(run_dir), str(run_dir / "results.json")]) == EXIT_USAGE
    assert main(["report", str(tmp_path / "nothing-here")]) == EXIT_USAGE


def _result(case_id: str, verdict: str) -> CaseResult:
    return CaseResult(case_id, "t", "KIP-714", "MUST", "KIP-714", "reference", "broker", "ref",
                      "1", verdict)  # fmt: skip


@pytest.mark.parametrize(
    ("verdicts", "interrupted", "code", "words"),
    [
        (["pass", "pass"], False, EXIT_OK, "overall: PASS"),
        (["pass", "fail"], False, EXIT_FAILURES, "overall: FAIL"),
        (["pass", "pass"], True, EXIT_ERRORS, "INTERRUPTED"),
        (["skipped", "unsupported"], False, EXIT_ERRORS, "NOT RUN"),
        (["pass", "error"], False, EXIT_ERRORS, "overall: FAIL"),
    ],
)
def test_report_exits_as_the_run_it_renders_would_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
    verdicts: list[str], interrupted: bool, code: int, words: str,
) -> None:  # fmt: skip
    """The README merges CI's results with `report`: "overall: FAIL ... CI fails" must fail CI."""
    results = [_result(f"kip714.case{i}", v) for i, v in enumerate(verdicts)]
    RunResults("0", 0.0, results=results, interrupted=interrupted).write(tmp_path / "results.json")
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "out")]) == code
    assert words in capsys.readouterr().out


def test_pytest_rejects_unknown_target(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "kconform.plugin", "--target", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown target 'nope'*"])


def test_pytest_external_needs_bootstrap(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "kconform.plugin", "--target", "external")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*needs --bootstrap-server*"])


def test_serve_prints_bootstrap_first_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    import signal
    import sys

    from confluent_kafka.admin import AdminClient

    process = spawn(
        [sys.executable, "-m", "kconform.cli", "serve", "reference", "--brokers", "2",
         "--subscription", "metrics=org.apache.kafka.;interval.ms=1000"],
        tmp_path / "stderr",
    )  # fmt: skip
    try:
        assert process.stdout is not None
        bootstrap = process.stdout.readline().strip()
        assert bootstrap.count("127.0.0.1:") == 2
        header = [process.stdout.readline() for _ in range(3)]
        assert header[-1].startswith("# Ctrl-C"), header  # no "# sink:": the harness holds it
        brokers = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).brokers
        assert sorted(brokers) == [1, 2]
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=15)
    assert process.returncode == 0, stderr_of(tmp_path / "stderr")


def test_certify_prints_a_certificate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["certify", "--client", "kafka-python", "--cases", "kip511.client.software_identity"]
    assert main([*args, "--out", str(tmp_path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "kafka-python 3." in out and "certificate: kafka-python" in out, out
    assert ": CONFORMS" in out and "overall:" not in out, out
    assert main(["certify", "--client", "no-such-driver"]) == EXIT_USAGE


@pytest.mark.parametrize(
    ("jobs", "stop"),
    [("1", "SIGINT"), ("3", "SIGINT"), ("1", "SIGTERM"), ("3", "SIGTERM")],
)
def test_an_interrupted_run_keeps_the_results_gathered_so_far(
    tmp_path: Path, jobs: str, stop: str
) -> None:
    """Ctrl-C, or SIGINT or SIGTERM sent to the run alone (a CI job cancelled): the workers get
    it too, and the results so far are written, merged and reported as an interrupted run.
    Before, SIGINT to a run in workers let them run to the end, and SIGTERM lost the report."""
    import signal
    import sys

    out = tmp_path / "out"
    process = spawn(
        [sys.executable, "-m", "kconform.cli", "run", "--target", "reference", "-j", jobs,
         "--out", str(out)],
        tmp_path / "stderr",
    )  # fmt: skip
    assert process.stdout is not None
    progress = [process.stdout.readline() for _ in range(8)]  # a few cases have finished
    stdout = _stopped_with_its_results(process, getattr(signal, stop), out, progress)
    done = len(RunResults.read(out / "results.json").results)
    (planned,) = re.findall(rf"run INTERRUPTED after {done} of (\d+) planned case runs", stdout)
    assert int(planned) > done, stdout
    stderr = stderr_of(tmp_path / "stderr")  # the workers' too: nothing but kconform's own
    assert "Warning" not in stderr and "Traceback" not in stderr, stderr[-3000:]


def _stopped_with_its_results(
    process: subprocess.Popen[str], signum: int, out: Path, seen: list[str]
) -> str:
    """Send `signum`; the run must end as interrupted (exit 2) with its results and report;
    its stdout."""
    process.send_signal(signum)
    stdout, _ = process.communicate(timeout=90)
    assert process.returncode == EXIT_USAGE, [*seen, stdout]
    results = RunResults.read(out / "results.json")
    assert results.interrupted and results.results
    assert (out / "index.html").exists()
    assert "INTERRUPTED" in stdout
    return stdout


def test_a_fuzz_night_stopped_by_sigterm_keeps_what_it_found_so_far(tmp_path: Path) -> None:
    """A scheduler ending `kconform fuzz` with SIGTERM: the cases done are written and reported
    as an interrupted run (before, the process vanished without its report)."""
    import signal
    import sys

    out = tmp_path / "out"
    process = spawn(
        [sys.executable, "-m", "kconform.cli", "fuzz", "--target", "reference", "--brokers", "1",
         "--budget", "90s", "--seed", "1", "--out", str(out)],
        tmp_path / "stderr",
    )  # fmt: skip
    assert process.stdout is not None
    seen = []
    for line in process.stdout:  # the first case has a verdict (each gets about a tenth)
        seen.append(line)
        if line.startswith("[   1/"):
            break
    _stopped_with_its_results(process, signal.SIGTERM, out, seen)


def _describing_client(tmp_path: Path, capabilities: list[str]) -> Path:
    """A `command:` client whose `--describe` lists `capabilities` (it never runs a scenario)."""
    script = tmp_path / "describing_client.py"
    script.write_text(
        "import json, sys\n"
        "if sys.argv[1:] == ['--describe']:\n"
        "    print(json.dumps({'implementation': 'x', 'version': '1', "
        f"'capabilities': {capabilities!r}}}))\n"
        "sys.exit(0)\n"
    )
    return script


def test_unknown_client_capability_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _describing_client(tmp_path, ["telemetry", "quantum_metrics"])
    for command in ("certify", "run"):
        out = tmp_path / command
        args = [command, "--client", f"command:{script}", "--out", str(out)]
        assert main([*args, *(["--target", "reference"] if command == "run" else [])]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert "'quantum_metrics'" in err[0] and str(script) in err[0], err[0]
        assert "telemetry" in err[0] and "topic_admin" in err[0], err[0]  # the known ones
        assert not (out / "results.json").exists()


def test_a_run_that_judged_nothing_never_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # kafka-python lacks telemetry: the only case selected is unsupported
    case = "kip714.client.terminating.final_push"
    args = ["certify", "--client", "kafka-python", "--cases", case]
    assert main([*args, "--out", str(tmp_path / "certify")]) == 2
    captured = capsys.readouterr()
    assert "CONFORMS" not in captured.out
    assert "kafka-python 3." in captured.out and "INCOMPLETE" in captured.out
    assert "nothing judged: 1 unsupported" in captured.out, captured.out
    (line,) = [x for x in captured.err.splitlines() if "no case was judged" in x]
    assert "1 unsupported" in line and "lacks telemetry" in line, line
    # no result at all: a -k that selects nothing (a --cases that matches nothing is refused
    # before the run: test_cases_that_match_nothing_are_refused_with_near_matches)
    args = ["run", "--target", "reference", "--cases", "kip511", "-k", "no_such_test"]
    assert main([*args, "--out", str(tmp_path / "run")]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "no case was judged" in x]
    assert "no case produced a result" in line, line


def test_exit_code_judges_nothing_as_not_ok() -> None:
    from kconform.engine.results import CaseResult
    from kconform.runner import exit_code

    def result(verdict: str, case: str) -> CaseResult:
        return CaseResult(case, "t", "s", "MUST", "KIP-714", "c", "client", "i", "1", verdict,
                          message=f"why {case}")  # fmt: skip

    results = RunResults("0", 0.0, results=[result("not-applicable", "a"), result("skipped", "b")])
    assert exit_code(results, 0) == EXIT_ERRORS
    from kconform.reports.common import nothing_judged

    reason = nothing_judged(results) or ""
    assert "1 not-applicable" in reason and "1 skipped" in reason and "why a" in reason
    results.results.append(result("pass", "c"))
    assert exit_code(results, 0) == EXIT_OK and nothing_judged(results) is None


def test_a_subject_none_of_whose_cases_ran_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--target reference,apache:9.9.9` where 9.9.9 is nowhere: reference's verdicts must not
    make the run pass (it exited 0 before), and the report says which subject was not judged."""
    monkeypatch.setenv("KCONFORM_KAFKA_DISTS", str(tmp_path / "none"))
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("KCONFORM_KAFKA_DOWNLOAD", raising=False)
    monkeypatch.setenv("KCONFORM_KAFKA_MAVEN", "0")
    out = tmp_path / "run"
    args = ["run", "--target", "reference,apache:9.9.9", "--brokers", "1",
            "--cases", "kip511.apiversions.valid_software_accepted", "--out", str(out)]  # fmt: skip
    assert main(args) == 2
    captured = capsys.readouterr()
    (line,) = [x for x in captured.err.splitlines() if "not judged at all" in x]
    assert "apache:9.9.9 (1 skipped" in line and "9.9.9 not found" in line, line
    assert "reference" not in line.split("(")[0]
    assert (
        "not judged at all (every case unsupported, not applicable or skipped): "
        "apache:9.9.9: CI fails" in captured.out
    )
    verdicts = {r.subject: r.verdict for r in RunResults.read(out / "results.json").results}
    assert verdicts == {"reference": "pass", "apache:9.9.9": "skipped"}
    page = (out / "index.html").read_text()
    assert "CI would FAIL" in page and "NOT RUN" in page and "not judged at all" in page


def test_exit_code_fails_a_run_that_left_a_subject_unjudged() -> None:
    from kconform.engine.results import CaseResult
    from kconform.runner import exit_code

    def result(verdict: str, subject: str) -> CaseResult:
        return CaseResult("c", "t", "s", "MUST", "KIP-714", subject, "broker", "i", "1", verdict,
                          message=f"why {subject}")  # fmt: skip

    judged = [result("pass", "a"), result("unsupported", "b"), result("informational", "b")]
    assert exit_code(RunResults("0", 0.0, results=judged), 0) == EXIT_OK  # b was judged
    # nothing judged about b: every case unsupported or not applicable (issue 33)
    unjudged = [result("pass", "a"), result("unsupported", "b"), result("not-applicable", "b")]
    assert exit_code(RunResults("0", 0.0, results=unjudged), 0) == EXIT_ERRORS
    lost = [*judged, result("skipped", "c"), result("skipped", "c")]
    assert exit_code(RunResults("0", 0.0, results=lost), 0) == EXIT_ERRORS


def test_a_case_may_ask_for_a_longer_bound_than_case_timeout(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        "import asyncio, pytest\n"
        "async def test_short():\n    await asyncio.sleep(1.5)\n"
        "@pytest.mark.kconform_timeout(30)\n"
        "async def test_long():\n    await asyncio.sleep(1.5)\n"
    )
    result = pytester.runpytest("-p", "kconform.plugin", "--case-timeout", "1")
    result.assert_outcomes(passed=1, failed=1)
    # and what it was stuck on: the loop idle in select, the case suspended in its own line
    result.stdout.fnmatch_lines(
        ["*did not finish within 1s; then: loop thread in*select*1 tasks*test_short*"]
    )


def test_runs_started_in_one_second_each_get_their_own_report_folder(tmp_path: Path) -> None:
    """Creating the folder claims its name: sixteen threads at once get sixteen folders."""
    with ThreadPoolExecutor(max_workers=16) as pool:
        folders = list(pool.map(lambda _: output_dir(tmp_path), range(16)))
    assert len(set(folders)) == 16
    assert all(f.is_dir() and f.parent == tmp_path for f in folders)
