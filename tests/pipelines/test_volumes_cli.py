"""`kconform volumes` (kconform.cli.volumes): one-line usage errors, and a whole small run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kconform.cli.volumes import main
from kconform.engine.volumes.model import SUMMARY_FILE
from kconform.engine.volumes.run import LEDGER_FILE, RUN_FILE, SAMPLES_FILE


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--value-bytes", "big"], "--value-bytes: 'big': expected MIN:MAX or N"),
        (["--partitions", "0"], "--partitions: 0 is out of range: expected a number of"),
        (["--target", "nonsense"], "unknown target"),
        (["--target", "reference,librdkafka_mock"], "exactly one target"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_target_without_sources_is_not_a_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "--target",
            "librdkafka_mock",
            "--brokers",
            "1",
            "--topics",
            "1",
            "--records",
            "20",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    captured = capsys.readouterr()
    assert "offered no source" in captured.err
    assert "reports no partition metrics" in captured.out
    assert (tmp_path / LEDGER_FILE).exists()


@pytest.mark.spark
def test_a_small_run_on_the_reference(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "--brokers",
            "2",
            "--topics",
            "1",
            "--partitions",
            "3",
            "--records",
            "150",
            "--out",
            str(tmp_path),
        ],
        spark=spark,
    )
    out = capsys.readouterr().out
    assert code == 0, out
    for name in (LEDGER_FILE, SAMPLES_FILE, RUN_FILE, SUMMARY_FILE):
        assert (tmp_path / name).exists(), name
    summary = json.loads((tmp_path / SUMMARY_FILE).read_text())
    assert summary["totals"]["records"] == 150 and summary["totals"]["mismatch"] == 0
    judged = {(s["source"], s["metric"]) for s in summary["sources"]}
    assert judged == {
        ("list_offsets", "end_offset"),
        ("kip977", "MessagesInPerSec"),
        ("kip977", "BytesInPerSec"),
        ("kip977", "BytesOutPerSec"),
    }
    assert summary["run"]["records_read_back"] == 150
    assert "source/metric" in out and "client_telemetry" in out
    assert spark.sparkContext._jsc is not None  # a lent session is not stopped


def test_a_log_the_target_trimmed_leaves_bytes_out_unjudged_not_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """16 MB spread evenly over 2 partitions: the librdkafka mock keeps about 5 MiB of each, so
    the records cannot all be read back and BytesOutPerSec cannot reach the ledger's bytes.
    Before, the read-back stopped the run with "Fetch ...: error 1"; now that meter alone is
    left out, and the note says why."""
    argv = ["--brokers", "1", "--topics", "1", "--partitions", "2", "--records", "30000",
            "--value-bytes", "512:576", "--zipf", "0", "--no-spark",
            "--out", str(tmp_path)]  # fmt: skip
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    run = json.loads((tmp_path / RUN_FILE).read_text())
    assert run["records_delivered"] == 30000
    trimmed = run["logs_trimmed"]
    assert len(trimmed) == 2 and all(start > 0 for start in trimmed.values()), trimmed
    note = run["sources"]["partition_metrics"]
    assert "BytesOutPerSec not judged" in note and "2 of 2 partitions" in note, note
    assert "BytesOutPerSec not judged" in captured.out
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    metrics = set(pq.read_table(tmp_path / SAMPLES_FILE).column("metric").to_pylist())
    assert "BytesOutPerSec" not in metrics and "MessagesInPerSec" in metrics, metrics


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_a_volume_run_stopped_midway_undoes_its_work_and_exits_2(stop: str, tmp_path: Path) -> None:
    """A cancelled CI job (SIGTERM) or Ctrl-C while the producer is busy: before, SIGTERM left
    the target's settings changed (the cleanups never ran), and after either signal the process
    never exited, its producer thread still waiting for a stopped broker."""
    import signal
    import subprocess
    import sys
    import time

    process = subprocess.Popen(
        [sys.executable, "-m", "kconform.cli", "volumes", "--brokers", "1", "--topics", "1",
         "--records", "500000", "--no-spark", "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    started = process.stderr.readline()
    assert "kconform: producing 1 x 500000 records to reference" in started, started
    time.sleep(1.0)  # the producer is under way (the whole run takes about 10 s)
    children = subprocess.run(
        ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
    ).stdout.split()
    assert children  # the target's storage process
    process.send_signal(getattr(signal, stop))
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 2 and not stdout, stderr
    assert stderr.strip() == "kconform: volumes interrupted: nothing compared", stderr
    assert not any(Path(f"/proc/{pid}").exists() for pid in children)
    assert not tmp_path.exists() or not any(tmp_path.iterdir())  # nothing half-written


def test_spark_that_cannot_start_is_a_usage_error_that_keeps_the_evidence(tmp_path: Path) -> None:
    """A mistyped --master (or no Java) used to end in PySpark's traceback and exit 1, the code
    for "a source disagrees with the ledger". In a process of its own: a session already running
    in this one would be reused whatever the master."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "volumes", "--brokers", "1", "--topics", "1",
         "--records", "20", "--master", "bogus[2]", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("kconform: Spark did not start (--master bogus[2]): "), last
    assert "Traceback" not in done.stderr
    for name in (LEDGER_FILE, SAMPLES_FILE, RUN_FILE):
        assert (tmp_path / name).exists(), name
