"""`kconform run --target apache:4.4.0 --coverage` for real, on two cases: the report has its
coverage section and page, and ClientMetricsManager's push handling is attributed to the push
case, not to the ApiVersions one. Skips with the reason when Java, mvn or the release (or
JaCoCo from Maven Central) cannot be had."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.coverage.real_release import require_release_and_jacoco

VERSION = "4.4.0"
PUSH, APIVERSIONS = "kip714.push.terminating.single", "kip511.apiversions.invalid.space"
MANAGER = "org/apache/kafka/server/ClientMetricsManager"

pytestmark = pytest.mark.slow


def test_two_cases_with_coverage(tmp_path: Path) -> None:
    require_release_and_jacoco(VERSION)
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "run", "--target", f"apache:{VERSION}",
         "--coverage", "--cases", f"{PUSH},{APIVERSIONS}", "--no-default-baselines",
         "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    skipped = [r for r in results["results"] if r["verdict"] == "skipped"]
    if skipped and "unavailable" in (skipped[0].get("message") or ""):
        pytest.skip(skipped[0]["message"])
    assert done.returncode == 0, done.stdout + done.stderr
    model = json.loads((out / "coverage" / f"apache-{VERSION}" / "coverage.json").read_text())
    assert {PUSH, APIVERSIONS} <= set(model["cases"])
    manager = next(c for c in model["classes"] if c["name"] == MANAGER)
    push = next(m for m in manager["methods"] if m["name"] == "processPushTelemetryRequest")
    assert push["counters"]["BRANCH"][1] > 0
    lines = model["files"][manager["sourcefile"]]["lines"]
    first, last = push["lines"][0]
    reached = [lines[str(n)] for n in range(first, last + 1) if lines.get(str(n), {}).get("cb")]
    assert reached, "no branch of processPushTelemetryRequest covered"
    by = {case for row in reached for case, _ in row["cases"]}
    assert PUSH in by and APIVERSIONS not in by
    index = (out / "index.html").read_text()
    assert 'id="coverage"' in index and "ClientMetricsManager" in index
    assert (out / f"coverage-apache-{VERSION}.html").is_file()
