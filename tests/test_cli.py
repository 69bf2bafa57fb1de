"""The kconform command as a person uses it: output, exit codes, one-line errors."""

from __future__ import annotations

import json

import pytest

from kconform.cli import EXIT_FAILURES, EXIT_OK, EXIT_USAGE, main
from kconform.codecs.framing import encode_request, encode_response
from kconform.codecs.messages import GetTelemetrySubscriptionsResponse, PushTelemetryRequest


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
    assert err.count("\n") == 1 and "not a hex string" in err
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err


def test_run_prints_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "reference" in out and "librdkafka_mock" in out


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


def test_serve_prints_bootstrap_first_and_stops_cleanly_on_sigterm() -> None:
    import signal
    import subprocess
    import sys

    from confluent_kafka.admin import AdminClient

    process = subprocess.Popen(
        [sys.executable, "-m", "kconform.cli", "serve", "reference", "--brokers", "2",
         "--subscription", "metrics=org.apache.kafka.;interval.ms=1000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        bootstrap = process.stdout.readline().strip()
        assert bootstrap.count("127.0.0.1:") == 2
        brokers = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).brokers
        assert sorted(brokers) == [1, 2]
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
    assert process.returncode == 0, stderr
