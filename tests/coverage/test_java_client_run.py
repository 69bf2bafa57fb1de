"""`kconform certify --client java@4.4.0 --coverage` for real, on two cases: the report has the
client's coverage section and page, and the telemetry sender's push building is attributed to
the case whose client pushed, not to the one that opted out. Skips with the reason when Java,
mvn or the release (or JaCoCo from Maven Central) cannot be had."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kconform.fixtures.coverage.client_selection import INTERNALS
from tests.coverage.real_release import require_release_and_jacoco

VERSION = "4.4.0"
PUSHES, OPT_OUT = "kip714.client.handshake.instance_id", "kip714.client.handshake.opt_out"
SENDER = f"{INTERNALS}/ClientTelemetryReporter$DefaultClientTelemetrySender"

pytestmark = pytest.mark.slow


def _reached_by(model: dict[str, object], cls_name: str, method: str) -> set[str]:
    classes, files = model["classes"], model["files"]
    assert isinstance(classes, list) and isinstance(files, dict)
    cls = next(c for c in classes if c["name"] == cls_name)
    m = next(m for m in cls["methods"] if m["name"] == method)
    lines = files[cls["sourcefile"]]["lines"]
    return {case for first, last in m["lines"] for nr in range(first, last + 1)
            for case, _ in lines.get(str(nr), {}).get("cases", [])}  # fmt: skip


def test_two_client_cases_with_coverage(tmp_path: Path) -> None:
    require_release_and_jacoco(VERSION)
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "certify", "--client", f"java@{VERSION}",
         "--coverage", "--cases", f"{PUSHES},{OPT_OUT}", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    skipped = [r for r in results["results"] if r["verdict"] == "skipped"]
    if skipped and "unavailable" in (skipped[0].get("message") or ""):
        pytest.skip(skipped[0]["message"])
    assert done.returncode == 0, done.stdout + done.stderr
    model = json.loads((out / "coverage" / f"java-{VERSION}" / "coverage.json").read_text())
    assert model["cases"] == sorted([PUSHES, OPT_OUT]) and model["units"] == "2 client JVM(s)"
    assert _reached_by(model, SENDER, "createPushRequest") == {PUSHES}
    index = (out / "index.html").read_text()
    assert 'id="coverage"' in index and "DefaultClientTelemetrySender" in index
    assert (out / f"coverage-java-{VERSION}.html").is_file()
