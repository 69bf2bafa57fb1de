"""Spark's own log stays out of kconform's console (issue 33): the JVM's start-up lines went
to the terminal of `kconform soak` and `kconform volumes`; they go to a file unless asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

START = (
    "from kconform.fixtures.spark import local_spark\n"
    "spark = local_spark()\n"
    "print('rows', spark.range(3).count())\n"
    "spark.stop()\n"
)


def _start_spark(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", START], env={**os.environ, **env}, capture_output=True,
        text=True, timeout=180, check=True,
    )  # fmt: skip


def test_sparks_log_goes_to_a_file_unless_asked(tmp_path: Path) -> None:
    log = tmp_path / "spark.log"
    quiet = _start_spark({"KCONFORM_SPARK_LOG": str(log)})
    assert quiet.stdout.strip() == "rows 3"
    assert quiet.stderr.strip() == "", quiet.stderr
    assert "log4j" in log.read_text(encoding="utf-8")
    asked = _start_spark({"KCONFORM_SPARK_LOG": "-"})
    assert "log4j" in asked.stderr
