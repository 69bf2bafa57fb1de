"""Bad values the user gives (issue 41, "unclear" items): one line naming the value and what is
accepted, exit 2, never a traceback or a library's own wording. Each test costs milliseconds."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from one_line_error import one_line

from kconform.cli import main
from kconform.exit_codes import EXIT_USAGE


@pytest.mark.parametrize(
    ("argument", "texts"),
    [
        ("abc", ["'abc'", "odd number of hex digits (3)", "a file, or - for stdin"]),
        ("zz00", ["'zz00' is not a file here nor hex", "'z' at position 0"]),
        ("no-such-frame.bin", ["'no-such-frame.bin' is not a file here nor hex"]),
    ],
)
def test_decode_names_a_frame_that_is_not_hex(
    argument: str, texts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["decode", argument]) == EXIT_USAGE
    err = one_line(capsys, *texts)
    assert "fromhex" not in err


@pytest.mark.parametrize(
    ("key", "version", "texts"),
    [
        ("999", "0", ["--api-key 999", "accepted: 0 (Produce)", "72 (PushTelemetry)"]),
        ("71", "5", ["--api-version 5", "GetTelemetrySubscriptionsResponse has versions 0"]),
        ("18", "-1", ["--api-version -1", "ApiVersionsResponse has versions 0-"]),
    ],
)
def test_decode_response_names_an_unknown_key_or_version(
    key: str, version: str, texts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["decode", "--response", "--api-key", key, "--api-version", version, "0000000100000000"]
    assert main(args) == EXIT_USAGE
    one_line(capsys, *texts)


@pytest.fixture
def http_port() -> Iterator[int]:
    """A port that answers whatever it is sent as an HTTP server would, at once."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.recv(1024)
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


@pytest.mark.parametrize(
    "command",
    [["fuzz", "--budget", "2s"], ["soak", "--duration", "5s", "--clients", "2", "--no-spark"]],
    ids=lambda c: c[0],
)
def test_fuzz_and_soak_say_a_port_is_not_kafka(
    command: list[str], http_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """They printed "Task was destroyed but it is pending!" or a LoopTimeout; `run` said it."""
    args = [*command, "--target", "external", "--bootstrap-server", f"127.0.0.1:{http_port}",
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(args) == EXIT_USAGE
    one_line(capsys, f"127.0.0.1:{http_port} is not Kafka: it answered as an HTTP server")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda p: p.mkdir(), "is a folder, not an executable"),
        (lambda p: None, "does not exist"),
    ],
    ids=["folder", "missing"],
)
def test_a_command_client_that_is_no_program_is_a_usage_error(
    make: Callable[[Path], None], text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder was reported as a path that does not exist, and only once cases were skipped."""
    driver = tmp_path / "driver"
    make(driver)
    args = ["run", "--target", "reference", "--cases", "kip511.client.software_identity",
            "--client", f"command:{driver}", "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(args) == EXIT_USAGE
    one_line(capsys, f"client command:{driver}: {driver} {text}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["certify", "--client", "confluent-kafka@9.9.9"],
        ["clients", "lock", "confluent-kafka@9.9.9"],
    ],
    ids=["certify", "lock"],
)
def test_a_release_pypi_does_not_list_is_one_line(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """It was buried in a 1,500-character pip line after 10 "skipped" rows."""
    from kconform.fixtures.clients import versions

    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(versions, "pip_versions", lambda package, python: ["2.5.0", "2.16.1"])
    if command[0] == "certify":
        assert main([*command, "--out", str(tmp_path / "out")]) == EXIT_USAGE
        text = one_line(capsys)
    else:  # `clients lock` reports each subject on standard output
        assert main(command) == EXIT_USAGE
        text = capsys.readouterr().out
        assert text.count("\n") == 1, text
    assert "confluent-kafka 9.9.9: no such release on PyPI; locked versions: 2.5.0, 2.5.3" in text
    assert "2.16.1" in text and len(text) < 400 and "pip" not in text.replace("PyPI", ""), text
    assert not (tmp_path / "out").exists()


def test_a_cache_that_is_no_folder_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """certify --client aiokafka@0.14.0 with it ended "no case produced a result", no reason."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "file" / "cache"))
    args = ["certify", "--client", "aiokafka@0.14.0", "--out", str(tmp_path / "out")]
    assert main(args) == EXIT_USAGE
    one_line(capsys, f"$KCONFORM_CACHE={tmp_path}/file/cache: {tmp_path}/file is not a folder")
    assert not (tmp_path / "out").exists()


def test_an_unwritable_cache_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Simulated (os.access): the tests may run as root, who can write anywhere."""
    from kconform import locations

    real_access = os.access
    monkeypatch.setattr(
        locations.os, "access", lambda p, mode: p != tmp_path and real_access(p, mode)
    )
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    assert main(["list"]) == EXIT_USAGE
    one_line(capsys, f"{tmp_path} is not writable", "name a folder it can write")


@pytest.mark.parametrize("value", ["false", "off", "", "2"])
def test_maven_switch_takes_0_or_1(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Anything but "0" quietly meant "on"."""
    monkeypatch.setenv("KCONFORM_KAFKA_MAVEN", value)
    assert main(["list"]) == EXIT_USAGE
    one_line(capsys, f"$KCONFORM_KAFKA_MAVEN={value!r}: expected 1", "or 0 (never ask)")


def test_dists_entries_that_are_no_folder_are_warned_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kconform.fixtures.targets import kafka_dist

    (tmp_path / "kafka_2.13-4.4.0.tgz").write_text("")
    missing, tarball = tmp_path / "nowhere", tmp_path / "kafka_2.13-4.4.0.tgz"
    monkeypatch.setenv("KCONFORM_KAFKA_DISTS", f"{missing}:{tarball}:{tmp_path}")
    assert kafka_dist.search_folders() == [tmp_path]
    err = capsys.readouterr().err
    assert f"names {missing}, nothing that exists: ignored" in err, err
    assert f"names {tarball}, a file: ignored" in err and "apache:<file.tgz>" in err, err


# --- issue 41, the option table: an empty value, a bound, a flag a subcommand cannot honour ---

CASE_IDS = "expected case ids, prefixes, wildcards or rule ids"
TARGETS = "expected target names as `kconform targets` lists them"
CLIENTS = "expected client names as `kconform clients` lists them"


@pytest.mark.parametrize(
    ("argv", "texts"),
    [
        (["run", "--cases="], ["argument --cases: '' is empty", CASE_IDS]),
        (["run", "--cases=,,,"], ["argument --cases: ',,,' is empty", CASE_IDS]),
        (["run", "--cases=kip511.*,,kip714.*"], ["'kip511.*,,kip714.*' has an empty entry"]),
        (["run", "--target="], ["argument --target: '' is empty", TARGETS]),
        (["run", "--target=reference,"], ["'reference,' has an empty entry", TARGETS]),
        (["run", "--client="], ["argument --client: '' is empty", CLIENTS]),
        (["certify", "--client="], ["argument --client: '' is empty", CLIENTS]),
        (["certify", "--client=kafka-python", "--cases="], ["argument --cases: '' is empty"]),
        (["run", "-k="], ["argument -k: '' is empty", "expected a pytest -k expression"]),
        (["run", "-k= "], ["argument -k: ' ' is empty"]),
        (["fuzz", "--target="], ["argument --target: '' is empty", TARGETS]),
        (["soak", "--target="], ["argument --target: '' is empty"]),
        (["volumes", "--target="], ["argument --target: '' is empty"]),
        (["fuzz", "--cases="], ["argument --cases: '' is empty"]),
        (["run", "--bootstrap-server="], ["argument --bootstrap-server: '' is empty"]),
        (["run", "--brokers", "0"], ["argument --brokers: 0 is out of range", "at least 1"]),
        (["run", "--case", "kip511.apiversions.schema"], ["unrecognized arguments: --case "]),
        (["run", "--level", "info"], ["invalid choice: 'info'", "'must', 'should', 'all'"]),
        (["list", "--level", "info"], ["invalid choice: 'info'", "'must', 'should', 'all'"]),
        (["volumes", "--topics", "0"], ["argument --topics: 0 is out of range", "[1, 100]"]),
        (["volumes", "--partitions", "x"], ["argument --partitions: 'x': expected a number of",
                                            "partitions [1, 1000]"]),
        (["volumes", "--value-bytes", "10:5"], ["--value-bytes: 10:5 is out of range",
                                                "0 <= MIN <= MAX <= 1000000"]),
        (["volumes", "--value-bytes", "2000000"], ["--value-bytes: 2000000 is out of range"]),
        (["volumes", "--zipf=-1"], ["argument --zipf: -1 is out of range", "[0, 10]"]),
        (["volumes", "--zipf=nan"], ["argument --zipf: nan is out of range"]),
        (["serve", "external"], ["serve starts a target; 'external' is a cluster already",
                                 "kconform run --bootstrap-server"]),
        (["serve", "reference,librdkafka_mock"], ["serve takes exactly one target"]),
        (["run", "--json"], ["argument --json: expected one argument"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) and v and v[0].isalpha() else None,
)  # fmt: skip
def test_an_empty_or_out_of_range_value_is_one_line_naming_it(
    argv: list[str], texts: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """`certify --client ''` certified every installed client and exited 0; `run --cases ''`
    ran everything; `volumes --topics 0` listed every value without naming the wrong one."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_USAGE
    one_line(capsys, *texts)
    assert not (tmp_path / "reports").exists()


def test_real_clients_are_checked_before_the_soak_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "the soak crashed: UsageError" once the fleet ran, then a MUST error."""
    from kconform.cli import soak

    monkeypatch.setattr(soak, "soak", lambda *a, **k: pytest.fail("the soak started"))
    args = ["soak", "--real-clients", "bogus:3", "--duration", "5s", "--clients", "2",
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(args) == EXIT_USAGE
    one_line(capsys, "--real-clients bogus:3: unknown client 'bogus' (known: confluent-kafka")
    assert main([*args[:2], "kafka-python:0", *args[3:]]) == EXIT_USAGE
    one_line(capsys, "--real-clients kafka-python:0: expected a count of at least 1")
