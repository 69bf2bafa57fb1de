"""`kconform driver check`: a driver that keeps the contract is clean (exit 0); one that breaks
it gets each problem in plain words with its fix (exit 1); bad input is one line and exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.exit_codes import EXIT_FAILURES, EXIT_OK, EXIT_USAGE
from tests.support.one_line_error import one_line

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "tests" / "clients" / "broken"
KAFKA_PYTHON = ROOT / "fixtures" / "clients" / "kafka_python_driver.py"
CONFLUENT = ROOT / "fixtures" / "clients" / "confluent_driver.py"


def _check(driver: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "driver", "check", str(driver)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def test_a_driver_that_keeps_the_contract_is_clean() -> None:
    code, out = _check(KAFKA_PYTHON)
    assert code == EXIT_OK, out
    for step in ("describe: ok", "idle: ok (first request", "produce: ok", "consume: ok"):
        assert step in out, out
    assert "kconform certify --client command:" in out


def test_a_listed_admin_scenario_is_checked_and_an_unlisted_one_is_not() -> None:
    """confluent-kafka's driver lists `admin` in --describe; kafka-python's lists nothing."""
    code, out = _check(CONFLUENT)
    assert code == EXIT_OK, out
    assert "admin: ok (" in out and " described)" in out, out
    assert "share-consume" not in out, out
    assert "admin:" not in _check(KAFKA_PYTHON)[1]


def test_a_lazily_connecting_idle_is_named_with_its_fix() -> None:
    code, out = _check(BROKEN / "lazy_idle.py")
    assert code == EXIT_FAILURES, out
    assert "idle: no request within" in out and "must connect during idle" in out, out
    assert "produce: no `delivered` event" in out, out


def test_output_outside_the_contract_is_named() -> None:
    code, out = _check(BROKEN / "garbage.py")
    assert code == EXIT_FAILURES, out
    assert "printed no contract event; its stdout began 'Starting producer...'" in out, out


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["driver", "check", str(tmp_path / "nope")]) == EXIT_USAGE
    one_line(capsys, "nope does not exist")
    plain = tmp_path / "driver"
    plain.write_text("#!/bin/sh\n")
    assert main(["driver", "check", str(plain)]) == EXIT_USAGE
    one_line(capsys, "is not executable", "chmod +x")
    assert main(["driver", "check", str(tmp_path)]) == EXIT_USAGE
    one_line(capsys, "is a folder")
    assert main(["driver", "check", str(BROKEN / "describe_garbage.py")]) == EXIT_USAGE
    one_line(capsys, "--describe exited 0 but its last line is not one JSON object")
    assert main(["driver", "check"]) == EXIT_USAGE
    one_line(capsys, "required: command")
    assert main(["driver", "check", "x", "--client-timeout", "0"]) == EXIT_USAGE
    one_line(capsys, "--client-timeout")


def test_a_silent_driver_is_told_to_print_events_first(tmp_path: Path) -> None:
    silent = tmp_path / "driver"
    silent.write_text("#!/bin/sh\nexit 3\n")
    silent.chmod(0o755)
    code, out = _check(silent)
    assert code == EXIT_FAILURES, out
    assert "`--describe` printed nothing" in out and "printed nothing on stdout" in out, out
    assert "exited with status 3" in out and "produce: - (not run" in out, out


def test_a_first_request_only_at_close_is_not_an_idle_connection() -> None:
    code, out = _check(BROKEN / "connects_at_close.py")
    assert code == EXIT_FAILURES, out
    assert "idle: its first request came only as it closed" in out, out
