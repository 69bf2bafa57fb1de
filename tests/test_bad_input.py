"""Bad input and the machine's bounds (issue 33): one line and exit 2 before work starts, never a
traceback, a flood or a silent or misleading outcome."""

from __future__ import annotations

import http.server
import io
import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from one_line_error import one_line as _one_line

from kconform.cli import main
from kconform.engine.results import CaseResult
from kconform.exit_codes import EXIT_OK, EXIT_USAGE
from kconform.reports.model import RunResults

SAMPLE = Path(__file__).parent / "reports" / "data" / "sample-results.json"
ONE_CASE = ["--target", "reference", "--cases", "kip511.apiversions.valid_software_accepted"]


# --- 3. bounded by the machine -------------------------------------------------------------------


def test_jobs_are_capped_at_the_case_groups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *ONE_CASE, "-j", "1000", "--out", str(tmp_path)]) == EXIT_OK
    assert "-j 1000 lowered to 1" in capsys.readouterr().out
    assert len(RunResults.read(tmp_path / "results.json").results) == 1


def test_a_soak_fleet_beyond_the_descriptor_limit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _: (1024, 20000))
    args = ["soak", "--duration", "1s", "--clients", "30000", "--out", str(tmp_path)]
    assert main(args) == EXIT_USAGE
    _one_line(capsys, "--clients 30000", "needs about 90512 open files", "20000")


def test_a_soak_raises_its_soft_descriptor_limit_where_the_hard_one_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import argparse
    import resource

    from kconform.cli import soak

    raised: list[tuple[int, int]] = []
    monkeypatch.setattr(resource, "getrlimit", lambda _: (1024, 20000))
    monkeypatch.setattr(resource, "setrlimit", lambda _, limits: raised.append(limits))
    parser = argparse.ArgumentParser()
    soak.add_arguments(parser)
    options = soak.options_from(parser.parse_args(["--clients", "2000", "--duration", "1s"]))
    soak._check_descriptors(options)
    assert raised == [(512 + 3 * 2000, 20000)]
    raised.clear()
    soak._check_descriptors(replace(options, clients=100))
    assert raised == []


@pytest.mark.parametrize("command", ["run", "soak"])
def test_brokers_beyond_what_the_target_can_start_is_a_usage_error(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [command, "--target", "reference", "--brokers", "100000", "--out", str(tmp_path)]
    assert main(args) == EXIT_USAGE
    _one_line(capsys, "--brokers 100000", "at most 32")


# --- 4. no silent or misleading outcome ----------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "text"),
    [
        (["--sample-seconds", "0"], "--sample-seconds must be positive"),
        (["--compare", "/nonexistent"], "--compare /nonexistent: not a folder"),
    ],
)
def test_soak_flags_that_would_be_ignored_or_fail_late_are_refused(
    flags: list[str], text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["soak", "--duration", "1s", "--out", str(tmp_path), *flags]) == EXIT_USAGE
    _one_line(capsys, text)


def test_report_refuses_the_same_run_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "same" / ".." / SAMPLE.name
    (tmp_path / "same").mkdir()
    copy.resolve().write_bytes(SAMPLE.read_bytes())
    args = ["report", str(copy.resolve()), str(copy), "--out", str(tmp_path / "out")]
    assert main(args) == EXIT_USAGE
    _one_line(capsys, "given twice")


@pytest.mark.parametrize(
    ("frame", "text"),
    [
        ("0000001e0047000000000000000275", "truncated frame: its size prefix says 30 bytes"),
        ("ffffffff" * 8, "not a request frame: api key -1"),
        ("00", "truncated frame"),
    ],
)
def test_decode_says_what_is_wrong_with_a_frame(
    frame: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["decode", frame]) == EXIT_USAGE
    _one_line(capsys, text)


def test_decode_reads_stdin_and_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kconform.codecs.framing import encode_request
    from kconform.codecs.messages import PushTelemetryRequest

    frame = encode_request(PushTelemetryRequest(subscription_id=5), 0, 42)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(frame.hex().encode())))
    assert main(["decode"]) == EXIT_OK
    assert "correlation_id=42" in capsys.readouterr().out
    (tmp_path / "frame.bin").write_bytes(frame)
    (tmp_path / "frame.hex").write_text(frame.hex() + "\n")
    for name in ("frame.bin", "frame.hex"):
        assert main(["decode", str(tmp_path / name)]) == EXIT_OK
        assert "PushTelemetryRequest v0" in capsys.readouterr().out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[int]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


def test_a_server_that_is_not_kafka_is_named_as_such(
    http_server: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--bootstrap-server", f"127.0.0.1:{http_server}", "--out", str(tmp_path)]
    assert main(args) == EXIT_USAGE
    _one_line(capsys, "is not Kafka: it answered as an HTTP server")


def _baseline(path: Path, subject: str, verdicts: dict[str, str]) -> Path:
    path.write_text(json.dumps({"subject": subject, "verdicts": verdicts}))
    return path


def test_baselines_naming_unknown_cases_or_subjects_warn_and_prune_removes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = "kip511.apiversions.valid_software_accepted"
    stale = _baseline(tmp_path / "stale.json", "reference", {real: "pass", "kip0.gone": "pass"})
    other = _baseline(tmp_path / "other.json", "no-such-subject", {real: "pass"})
    args = ["run", *ONE_CASE, "--client", "kafka-python", "--out", str(tmp_path / "out")]
    main([*args, "--baseline", str(stale), "--baseline", str(other)])
    err = capsys.readouterr().err
    assert "names 1 case(s) that do not exist (kip0.gone)" in err, err
    assert "'no-such-subject', which is not in this run" in err, err
    assert main(["baseline", "--prune", str(stale)]) == EXIT_OK
    assert json.loads(stale.read_text())["verdicts"] == {real: "pass"}


def _result(case_id: str, verdict: str, message: str = "") -> CaseResult:
    return CaseResult(
        case_id=case_id, title="", spec_ref="", level="MUST", kip="KIP-714", subject="c",
        subject_kind="client", implementation="", version="1", verdict=verdict, message=message,
    )  # fmt: skip


def test_a_certification_that_judged_too_little_says_incomplete() -> None:
    from kconform.reports.certificate import certify, render_text

    results = RunResults(kconform_version="0", started=0.0)
    results.results = [_result(f"k.{i}", "pass") for i in range(7)] + [
        _result(f"k.n{i}", "not-applicable", "no request reached the proxy") for i in range(39)
    ]
    text = render_text(certify(results))
    assert "c 1: INCOMPLETE\n  39 of the 46 cases its capabilities cover were not judged" in text
    assert "no request reached the proxy" in text and "CONFORMS" not in text
    results.results = results.results[:7] + [_result("k.u", "unsupported")] * 39
    assert "c 1: CONFORMS" in render_text(certify(results))


def test_a_fuzz_run_records_its_seed_and_says_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["fuzz", "--budget", "2s", "--cases", "fuzz.request.api_versions.well_formed",
            "--out", str(tmp_path)]  # fmt: skip
    main(args)
    out = capsys.readouterr().out
    seed = int(out.split("seed ", 1)[1].split()[0])
    results = RunResults.read(tmp_path / "results.json").results
    assert results and all(
        any(e.what == "Hypothesis seed" and e.observed == seed for e in r.expectations)
        for r in results
    )


def test_the_replay_command_names_the_seed() -> None:
    import argparse

    from kconform.cli import fuzz

    parser = argparse.ArgumentParser()
    fuzz.add_arguments(parser)
    command = fuzz._replay_command(parser.parse_args(["--target", "reference:x"]), "7")
    assert command == "kconform fuzz --target reference:x --budget 60s --seed 7 --profile deep"
