"""`kconform fuzz --target apache:4.4.0 --coverage-guided` for real, for 30 s on one request
case: the probes are read, the corpus keeps what set new ones, the branches reached are mapped
by jacococli, and the run's `--coverage` report still holds what the fuzzer's dumps read (the
fuzzer hands the counters back to the agent). Skips with the reason when Java, mvn or the
release (or JaCoCo from Maven Central) cannot be had. 29 s on the development machine
(the budget counts from the command's start, the broker's start-up included): `slow` like
test_apache_coverage.py, and in `make test`'s harness run as that one is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kconform.engine.fuzz.budget import CORPUS_ENV
from tests.coverage.real_release import require_release_and_jacoco

VERSION = "4.4.0"
CASE = "fuzz.request.get_telemetry.malformed"

pytestmark = pytest.mark.slow


def test_guided_fuzz_for_thirty_seconds(tmp_path: Path) -> None:
    require_release_and_jacoco(VERSION)
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "fuzz", "--target", f"apache:{VERSION}",
         "--coverage-guided", "--budget", "30s", "--seed", "7", "--cases", CASE,
         "--out", str(out)],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, CORPUS_ENV: str(tmp_path / "corpus")},
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())["results"]
    if results[0]["verdict"] == "skipped" and "unavailable" in (results[0].get("message") or ""):
        pytest.skip(results[0]["message"])
    assert results[0]["verdict"] in ("pass", "fail"), done.stdout + done.stderr
    assert "coverage-guided reach on apache:4.4.0" in done.stdout
    reach = json.loads((out / "coverage" / "guided" / "reach.json").read_text())
    (case,) = reach["cases"]
    assert case["case"] == CASE and case["mode"] == "guided"
    assert case["probes"] > 0 and 0 < case["corpus"] <= case["dumps"]
    covered, total = reach["points"][-1]["branches"]
    assert 0 < covered <= total
    assert [p["probes"] for p in reach["points"]] == sorted(p["probes"] for p in reach["points"])
    # the --coverage report of the same run counts at least what the fuzzer's dumps read
    model = json.loads((out / "coverage" / f"apache-{VERSION}" / "coverage.json").read_text())
    assert model["totals"]["BRANCH"][1] >= covered
    assert CASE in model["cases"]
