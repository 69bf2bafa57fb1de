"""An unmet precondition never yields `fail` or `error`.

Every broker case runs against the reference target with 1 and 3 brokers, with and without a
telemetry sink, with and without config admin (`--without` withholds capabilities as a target
that lacks them would). Whatever a case cannot judge there must come out `unsupported` or
`not-applicable`, saying why; the reference itself conforms, so any fail or error is a case
that mistook a missing precondition for a violation or a harness fault.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from itertools import product
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SINK = "telemetry_sink"
CONFIG_ADMIN = "client_metrics_admin,broker_config,static_broker_config"
COMBINATIONS = list(product((1, 3), (True, False), (True, False)))


def run(brokers: int, sink: bool, admin: bool, out: Path) -> list[dict[str, object]]:
    withheld = ",".join(name for name, kept in ((SINK, sink), (CONFIG_ADMIN, admin)) if not kept)
    results = out / f"b{brokers}-{'sink' if sink else 'nosink'}-{'admin' if admin else 'noadmin'}"
    without = ["--without", withheld] if withheld else []  # an empty --without is refused
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/broker", "-p", "no:cacheprovider", "-q",
         "--target", "reference", "--brokers", str(brokers), *without,
         "--kconform-results", str(results)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert results.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    found: list[dict[str, object]] = json.loads(results.read_text())["results"]
    return found


@pytest.mark.slow
def test_unmet_preconditions_never_fail_or_error(tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = dict(
            zip(COMBINATIONS, pool.map(lambda c: run(*c, tmp_path), COMBINATIONS), strict=True)
        )
    bad = [
        f"brokers={b} sink={s} admin={a}: {r['case_id']} {r['verdict']}: {r['message']}"
        for (b, s, a), results in runs.items()
        for r in results
        if r["verdict"] in ("fail", "error")
    ]
    assert bad == []
    full, bare = runs[(3, True, True)], runs[(1, False, False)]
    judged = {r["case_id"] for r in full if r["verdict"] not in ("unsupported", "not-applicable")}
    unjudged = {r["case_id"] for r in bare if r["verdict"] in ("unsupported", "not-applicable")}
    assert len(full) == len(bare) > 100  # every case ran in every combination
    assert unjudged and unjudged <= judged  # what the bare target cannot judge, the full one did
