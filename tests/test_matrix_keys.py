"""A matrix result stores the key that determines it; `changed` lists what a run must redo
(issue 44, incremental): a changed key, and a case the stored run never had."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform import __version__
from kconform.engine.model import CASES
from kconform.engine.results import CaseResult
from kconform.reports.expectations import case_requirements
from kconform.reports.matrix_keys import KEYS, changed, result_key, write_keys
from kconform.reports.model import RunResults

SUBJECT = "apache:4.4.0"


def _stored(folder: Path) -> dict[str, dict[str, dict[str, str]]]:
    case_requirements()
    broker = sorted(c.id for c in CASES.values() if c.kind == "broker")
    results = [CaseResult(c, "t", "", "MUST", "KIP-714", SUBJECT, "broker", "apache", "4.4.0",
                          "pass") for c in broker]  # fmt: skip
    run = RunResults(__version__, 0.0, results=results)
    folder.mkdir(parents=True)
    run.write(folder / "results.json")
    write_keys(folder, run)
    return dict(json.loads((folder / KEYS).read_text()))


def test_a_key_names_what_determines_the_result() -> None:
    key = result_key("kip714.push.accepted", SUBJECT)
    assert (key["case"], key["kind"], key["version"], key["kconform"]) == (
        "kip714.push.accepted", "apache", "4.4.0", __version__)  # fmt: skip
    assert key["source"].startswith("sha256:") and key["rules"].startswith("sha256:")
    assert key["lock"].startswith("sha256:")  # fixtures/lockfiles/kafka/4.4.0
    assert result_key("kip714.push.accepted", "apache:4.3.1")["lock"] != key["lock"]


def test_only_the_pairs_whose_key_changed_or_that_never_ran_are_listed(tmp_path: Path) -> None:
    stored = _stored(tmp_path / "matrix" / "apache-4.4.0")
    assert changed(tmp_path / "matrix") == []
    keys = stored[SUBJECT]
    keys["kip714.push.accepted"]["kconform"] = "0.0.0"  # measured by another kconform
    keys["kip714.push.accepted"]["source"] = "sha256:0"  # and another source of the case
    del keys["kip511.apiversions.kip_pattern_only"]  # a case added since the run
    (tmp_path / "matrix" / "apache-4.4.0" / KEYS).write_text(json.dumps(stored))
    assert changed(tmp_path / "matrix") == [
        ("kip511.apiversions.kip_pattern_only", SUBJECT),
        ("kip714.push.accepted", SUBJECT),
    ]


def test_kconform_matrix_changed_lists_them_and_refuses_a_folder_without_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kconform.cli import main

    stored = _stored(tmp_path / "matrix" / "apache-4.4.0")
    stored[SUBJECT]["kip714.push.accepted"]["lock"] = "sha256:0"  # another lock than the tree's
    (tmp_path / "matrix" / "apache-4.4.0" / KEYS).write_text(json.dumps(stored))
    assert main(["matrix", "changed", str(tmp_path / "matrix")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{SUBJECT} kip714.push.accepted", "1 (case, subject) pair(s) to run again"]
    assert main(["matrix", "changed", str(tmp_path)]) == 2
    assert "no keys.json" in capsys.readouterr().err


def test_a_broken_keys_file_is_one_clear_line(tmp_path: Path) -> None:
    """A keys.json edited by hand or cut short: `matrix changed` and `matrix run` say which
    file and exit 2, never a traceback."""
    from kconform.cli import main

    (tmp_path / "s").mkdir()
    for text in ("{not json", '{"s": []}'):
        (tmp_path / "s" / KEYS).write_text(text)
        assert main(["matrix", "changed", str(tmp_path)]) == 2
