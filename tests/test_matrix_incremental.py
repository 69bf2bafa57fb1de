"""Issue 44: a matrix run into a folder holding an earlier run runs only the (case, subject)
pairs whose key changed or that the folder holds nothing for (a case added since); the others
keep their results, a subject with nothing changed does not run, and `--all` runs everything.

Cheap subjects and cases, as in test_matrix_shards: the reference broker and kafka-python."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kconform.matrix.incremental import plan_redo
from kconform.matrix.plan import plan_runs
from kconform.reports.matrix_keys import KEYS, changed, write_keys
from kconform.reports.model import RunResults

BROKER_CASES = ["kip511.apiversions.all_versions_decode", "kip511.apiversions.response_header_v0"]
CASES = ",".join([*BROKER_CASES, "kip511.client.software_identity"])
SUBJECTS = ["--targets", "reference", "--clients", "kafka-python"]


def _matrix(out: Path, *extra: str) -> str:
    process = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "matrix", "run", *SUBJECTS, "--cases", CASES,
         "--out", str(out), "--costs", str(out.parent / "costs.json"), "-j", "1", *extra],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert process.returncode == 0, process.stdout + process.stderr
    return process.stdout


def _selected(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs within the runs' --cases (`matrix changed` lists every case a folder lacks)."""
    return [p for p in pairs if p[0] in CASES.split(",")]


def _started(out: Path, name: str) -> dict[str, float]:
    return {r.case_id: r.started for r in RunResults.read(out / name / "results.json").results}


def test_only_what_changed_runs_again_and_all_runs_everything(tmp_path: Path) -> None:
    out = tmp_path / "matrix"
    first = _matrix(out)
    assert "2 of 2 runs to run," in first, first
    before = {name: _started(out, name) for name in ("reference", "kafka-python")}
    assert sorted(before["reference"]) == BROKER_CASES

    again = _matrix(out)  # nothing changed: no subject runs
    assert "2 of 2 runs up to date" in again and "0 of 2 runs to run" in again, again
    assert {name: _started(out, name) for name in before} == before

    # one case's source changed since (its key differs), and another case is new to the
    # folder (no key, no result): those two pairs run, nothing else
    keys_path = out / "reference" / KEYS
    keys = json.loads(keys_path.read_text())
    keys["reference"][BROKER_CASES[0]]["source"] = "sha256:an-older-source"
    keys_path.write_text(json.dumps(keys))
    client_keys = out / "kafka-python" / KEYS
    client = json.loads(client_keys.read_text())
    del client["kafka-python"]["kip511.client.software_identity"]
    client_keys.write_text(json.dumps(client))
    redo = [(BROKER_CASES[0], "reference"), ("kip511.client.software_identity", "kafka-python")]
    assert _selected(changed(out)) == redo
    partial = _matrix(out)
    assert "2 of 2 runs to run (2 only for the cases that changed)" in partial, partial
    after = _started(out, "reference")
    assert after[BROKER_CASES[1]] == before["reference"][BROKER_CASES[1]]  # kept, not re-run
    assert after[BROKER_CASES[0]] > before["reference"][BROKER_CASES[0]]  # re-run
    assert _selected(changed(out)) == []  # the keys are the current ones again

    everything = _matrix(out, "--all")
    assert "2 of 2 runs to run," in everything, everything
    assert all(t > after[c] for c, t in _started(out, "reference").items())


def test_a_case_asked_for_that_gave_no_result_is_not_asked_for_again(tmp_path: Path) -> None:
    """A case its run leaves out (its suite or level is not that run's) is written to the keys
    as not held, so the subject stays up to date instead of running for it every time."""
    from kconform.engine.model import CASES
    from kconform.engine.results import CaseResult
    from kconform.matrix.incremental import absent_cases, asked_cases

    (run,) = plan_runs([], cluster="", release_clients=False, targets=["reference"], clients=[])
    folder = tmp_path / run.name
    folder.mkdir()
    one = CaseResult(BROKER_CASES[0], "t", "", "MUST", "KIP-511", "reference", "broker",
                     "reference", "", "pass")  # fmt: skip
    results = RunResults(kconform_version="0", started=0.0, results=[one])
    results.write(folder / "results.json")
    write_keys(folder, results, {})
    broker = sorted(c.id for c in CASES.values() if c.kind == "broker")
    assert sorted(c for c, _ in changed(tmp_path)) == [c for c in broker if c != one.case_id]
    asked = asked_cases("broker", "")
    write_keys(folder, results, {"reference": absent_cases(results, "reference", asked)})
    assert changed(tmp_path) == []
    todo, fresh = plan_redo([run], tmp_path, "")
    assert todo == [] and fresh == [run]


def test_a_selection_picks_the_cases_every_command_picks() -> None:
    """`--cases` naming a rule id selects the cases judging it, as `kconform run` does; the
    case ids of the one selector, `select_cases`, not a second reading of the patterns."""
    from kconform.engine.model import CASES, select_cases
    from kconform.matrix.incremental import asked_cases

    by_rule = asked_cases("broker", "kip714.get.metrics.all")
    assert by_rule == sorted(select_cases(CASES.values(), ["kip714.get.metrics.all"])[
        "kip714.get.metrics.all"])  # fmt: skip
    assert "kip714.subscriptions.metrics.all" in by_rule  # matches no case id: a rule id
