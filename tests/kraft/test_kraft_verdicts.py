"""Same truth through both doors: kraft:<v> gives, case by case, the verdicts apache:<v> gives.

The CI provisioning (tests/docker/provision.py) runs the broker suites on kraft:<v> and names the
results files in KCONFORM_KRAFT_RESULTS; every case's verdict is compared with the committed
apache:<v> baselines, the yardstick `make test` holds the apache target to (for the cluster size
of the run, as the plugin layers them). Without results the comparison is skipped with the
reason; the comparison's own logic is tested always.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.docker.truth import (
    REPO,
    apache_baselines,
    case_ids,
    differences,
    expected_verdicts,
    kraft_runs,
    write_kraft_baselines,
)

RESULTS = [Path(p) for p in os.environ.get("KCONFORM_KRAFT_RESULTS", "").split(",") if p]
VERSIONS = [v for v in os.environ.get("KCONFORM_KRAFT_VERSIONS", "").split(",") if v]
# cases make test does not gate on real brokers (APACHE_UNGATED): not run, so not compared
UNGATED = {c for c in os.environ.get("KCONFORM_KRAFT_UNGATED", "").split(",") if c}


def load_runs() -> dict[tuple[str, int], dict[str, str]]:
    runs: dict[tuple[str, int], dict[str, str]] = {}
    for path in RESULTS:
        if path.is_file():
            runs.update(kraft_runs(json.loads(path.read_text())))
    return runs


RUNS = load_runs()
NO_RESULTS = "no kraft results (KCONFORM_KRAFT_RESULTS): tests/docker/provision.py sets them in CI"


@pytest.mark.skipif(not RESULTS, reason=NO_RESULTS)
def test_every_release_ran_on_kraft() -> None:
    missing = [str(p) for p in RESULTS if not p.is_file()]
    assert not missing, f"results not written: {missing}"
    assert {v for v, _ in RUNS} >= set(VERSIONS), sorted(RUNS)
    assert all(brokers == 1 or (v, 1) in RUNS for v, brokers in RUNS)


@pytest.mark.skipif(not RESULTS, reason=NO_RESULTS)
@pytest.mark.parametrize("run", sorted(RUNS), ids=lambda r: f"kraft:{r[0]}-{r[1]}brokers")
def test_kraft_verdicts_are_the_apache_verdicts(run: tuple[str, int]) -> None:
    version, brokers = run
    expected = {c: v for c, v in expected_verdicts(version, brokers).items() if c not in UNGATED}
    assert expected, f"no apache:{version} baseline to compare with"
    assert differences(expected, RUNS[run]) == []
    broker_cases = {c for c in expected if c.startswith(("kip511.", "kip714.", "kip977."))}
    assert broker_cases <= set(RUNS[run])  # the broker and volume suites ran in full


# --- the comparison itself -------------------------------------------------------------------


def results_doc(subject: str, brokers: int, verdicts: dict[str, str]) -> dict[str, Any]:
    return {
        "subjects": [{"name": subject, "brokers": brokers}],
        "results": [{"subject": subject, "case_id": c, "verdict": v} for c, v in verdicts.items()],
    }


def test_kraft_runs_group_by_release_and_size() -> None:
    doc = results_doc("kraft:4.1.0", 3, {"a": "pass", "b": "fail"})
    doc["results"].append({"subject": "apache:4.1.0", "case_id": "a", "verdict": "error"})
    assert kraft_runs(doc) == {("4.1.0", 3): {"a": "pass", "b": "fail"}}


def test_differences_name_each_case() -> None:
    expected = {"k.a": "pass", "k.b": "fail", "k.c": "unsupported", "soak.d": "fail"}
    actual = {"k.a": "pass", "k.b": "pass", "fuzz.x": "error", "fuzz.y": "pass"}
    assert differences(expected, actual) == [
        "k.b: kraft pass, apache fail",
        "k.c: kraft did not run, apache unsupported",
        "fuzz.x: kraft error (no apache baseline: must not fail)",
    ]  # the soak did not run at all: not compared
    fixed = {**actual, "k.b": "fail", "k.c": "unsupported", "fuzz.x": "pass"}
    assert differences(expected, fixed) == []


def test_the_size_specific_baseline_is_layered_on_the_general_one() -> None:
    case = "kip714.subscriptions.subscription_id.other_broker"
    assert expected_verdicts("4.4.0", 1)[case] == "not-applicable"
    assert expected_verdicts("4.4.0", 3)[case] == "pass"
    assert expected_verdicts("9.9.9", 1) == {}


def test_ungated_node_ids_name_their_cases() -> None:
    ungated = re.search(r"^APACHE_UNGATED := (.*)$", (REPO / "Makefile").read_text(), re.M)
    assert ungated is not None
    nodeids = re.findall(r"--deselect '([^']+)'", ungated.group(1))
    assert case_ids(nodeids) == {"kip714.security.bomb.not_exported"}
    with pytest.raises(ValueError, match="no @case"):
        case_ids(["tests/docker/truth.py::case_ids"])


def test_kraft_baselines_are_the_apache_ones_renamed(tmp_path: Path) -> None:
    written = write_kraft_baselines(tmp_path)
    apache = {p.stem: d for p, d in apache_baselines()}
    assert sorted(p.stem for p in written) == sorted(apache)
    assert (tmp_path / "whys.json").is_file()  # the whys they cite, beside them
    for path in written:
        doc = json.loads(path.read_text())
        original = apache[path.stem]
        assert doc["subject"] == original["subject"].replace("apache:", "kraft:")
        assert {k: v for k, v in doc.items() if k != "subject"} == {
            k: v for k, v in original.items() if k != "subject"
        }
