"""The release matrix is the measured matrix (`docs/matrix.json`) rendered beside the committed
expectations: it cannot drift from them, every verdict in it is the one expected, and every
deviation it shows carries its source."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from kconform import locations
from kconform.cli import matrix
from kconform.cli.matrix import readme_tables, render_pages
from kconform.engine.results import CaseResult
from kconform.matrix.record import record_run
from kconform.reports.expectations import expectation_files
from kconform.reports.matrix import build, load_columns, render_html, render_markdown
from kconform.reports.matrix_artifact import matrix_columns, variant_size
from kconform.reports.model import RunResults, baseline_verdicts, read_baseline

ROOT = Path(__file__).resolve().parents[1]
BASELINES = expectation_files(ROOT / "baselines")
NEEDS_WHY = {"fail", "non-strict", "error", "not-applicable", "skipped"}
"""Verdicts that say something went wrong or could not be judged; `unsupported` and
`informational` say what the subject lacks or chose, in the case's own message."""


def test_the_committed_pages_are_the_baselines_rendered(tmp_path: Path) -> None:
    written = render_pages(ROOT / "baselines", tmp_path)
    for page in written:
        committed = ROOT / "docs" / page.name
        assert committed.is_file(), f"docs/{page.name} is missing: run `kconform matrix render`"
        assert committed.read_text(encoding="utf-8") == page.read_text(encoding="utf-8"), (
            f"docs/{page.name} differs from the baselines: run `kconform matrix render`"
        )


def test_the_readme_release_tables_are_the_baselines_rendered() -> None:
    """Issue 29: the README's release tables are the matrix, measured, never filled by hand."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_tables(ROOT / "baselines", text) == text, (
        "README.md's release tables differ from the baselines: run `kconform matrix render`"
    )


def test_the_release_table_merges_agreeing_releases_and_lists_constant_verdicts(
    tmp_path: Path,
) -> None:
    from kconform.reports.matrix import render_release_summary

    bodies = {"3.7.0": {"a.x": "fail", "b.y": "non-strict", "c.z": "pass"},
              "3.8.0": {"a.x": "pass", "b.y": "non-strict", "c.z": "pass"},
              "3.9.0": {"a.x": "pass", "b.y": "non-strict", "c.z": "pass|fail"}}  # fmt: skip
    paths = [_baseline(tmp_path, f"apache-{v}.json", {"subject": f"apache:{v}", "verdicts": b,
                       "why": {}}) for v, b in bodies.items()]  # fmt: skip
    table = render_release_summary(load_columns(paths), "apache").splitlines()
    assert table[0] == "| case | 3.7.0 | 3.8.0 | 3.9.0 |"
    assert "| `a.x` | FAIL | pass | pass |" in table
    assert "| `c.z` | pass | pass | FAIL\\|pass |" in table
    assert "non-strict: `b.y`" in table[-1] and "3 releases" in table[-1]
    bodies["3.9.0"]["c.z"] = "pass"
    paths[2].write_text(json.dumps({"subject": "apache:3.9.0", "verdicts": bodies["3.9.0"]}))
    merged = render_release_summary(load_columns(paths), "apache").splitlines()
    assert merged[0] == "| case | 3.7.0 | 3.8.0 … 3.9.0 (2) |"


def test_the_implementations_table_sets_other_brokers_beside_the_newest_release(
    tmp_path: Path,
) -> None:
    from kconform.reports.matrix import render_implementations

    bodies = {"apache-3.7.0": ("apache:3.7.0", {"a.x": "fail", "b.y": "pass"}),
              "apache-4.4.0": ("apache:4.4.0", {"a.x": "fail", "b.y": "pass", "c.z": "pass"}),
              "other@v1": ("other@v1",
                           {"a.x": "fail", "b.y": "fail|pass", "c.z": "unsupported"})}  # fmt: skip
    paths = [_baseline(tmp_path, f"{name}.json", {"subject": subject, "verdicts": verdicts,
                       "why": {}}) for name, (subject, verdicts) in bodies.items()]  # fmt: skip
    table = render_implementations(load_columns(paths), "apache", ["other"]).splitlines()
    assert table[0].startswith("| broker | pass | FAIL |")
    assert table[2] == "| `apache:4.4.0` | 2 | 1 | 0 | 0 | 0 | 0 | 3 |"  # the newest only
    assert table[3] == "| `other@v1` | 0 | 2 | 0 | 0 | 0 | 1 | 3 |"
    assert table[-1] == "- `other@v1` fails where `apache:4.4.0` does not: `b.y`."
    assert "no baseline" in render_implementations(load_columns(paths), "apache", ["none"])


def test_every_measured_verdict_is_the_expected_one_and_every_deviation_has_its_why() -> None:
    """Issue 44: the measured matrix (every verdict, generated) and the expectations (facts and
    exceptions, kept once) agree cell by cell, read through the API runs use; the migration from
    the full per-subject baselines was checked the same way (docs/matrix.json is those)."""
    from kconform.reports.expectations import subject_path
    from kconform.reports.model import layered_baselines

    columns = matrix_columns(ROOT / "baselines")
    assert len(columns) >= len(BASELINES) > 0
    wrong, missing = [], []
    for column in columns:
        path = subject_path(ROOT / "baselines", column.subject)
        expected, why = layered_baselines([path], variant_size(column.variant))[column.subject]
        for case_id, verdict in column.verdicts.items():
            if expected[case_id] != verdict:
                wrong.append(f"{column.label} {case_id}: measured {verdict}, "
                             f"expected {expected[case_id]}")  # fmt: skip
            if set(baseline_verdicts(verdict)) & NEEDS_WHY and not why.get(case_id, "").strip():
                missing.append(f"{column.label} {case_id}: {verdict}")
    assert wrong == [], "\n".join(wrong[:20])
    assert missing == [], "non-pass verdicts without a why:\n" + "\n".join(missing[:20])


def _baseline(tmp_path: Path, name: str, body: dict[str, object]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def test_cells_group_by_rule_share_footnotes_and_order_releases_by_version(tmp_path: Path) -> None:
    why = {"a.case": "KAFKA-1: the flag is set in a finally block"}
    paths = [
        _baseline(tmp_path, "apache-4.10.0.json", {"subject": "apache:4.10.0",
                  "verdicts": {"a.case": "fail", "b.case": "pass"}, "why": why}),
        _baseline(tmp_path, "apache-4.9.0.json", {"subject": "apache:4.9.0",
                  "verdicts": {"a.case": "fail|pass", "b.case": "pass"}, "why": why}),
        _baseline(tmp_path, "apache-4.10.0-3brokers.json", {"subject": "apache:4.10.0",
                  "brokers": 3, "verdicts": {"b.case": "non-strict"},
                  "why": {"b.case": "races"}}),
    ]  # fmt: skip
    columns = load_columns(paths)
    assert [c.label for c in columns] == [
        "apache:4.9.0",
        "apache:4.10.0",
        "apache:4.10.0 (3brokers)",
    ]
    matrix = build(columns, {"a.case": ["r.one"], "b.case": ["r.two", "r.one"]}, ["r.two", "r.one"])
    assert [g for g, _ in matrix.sections[0].groups] == ["r.two", "r.one"]
    assert matrix.notes == [why["a.case"], "races"]  # one footnote for the shared why
    page = render_markdown(matrix)
    assert "| `a.case` | FAIL\\|pass [1](#note-1) | FAIL [1](#note-1) | · |" in page
    assert "| `b.case` | pass | pass | non-strict [2](#note-2) |" in page
    assert '<li id="note-2">races</li>' in render_html(matrix)


def _matrix_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    matrix.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_matrix_writes_under_the_current_folder_never_into_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 40: an installed kconform's `matrix render` and `--write-baselines` wrote into
    site-packages' parent (the checkout's layout); they write under the current folder."""
    monkeypatch.chdir(tmp_path)
    packaged = sorted(p.name for p in locations.baselines().iterdir())
    assert matrix.run(_matrix_args("render")) == 0
    assert (tmp_path / "docs" / "matrix.md").read_text(encoding="utf-8") == (
        ROOT / "docs" / "matrix.md"
    ).read_text(encoding="utf-8")
    assert "no README.md here" in capsys.readouterr().out
    (tmp_path / "README.md").write_text((ROOT / "README.md").read_text(encoding="utf-8"))
    assert matrix.run(_matrix_args("render")) == 0
    assert "rewrote the release tables of README.md" in capsys.readouterr().out

    args = _matrix_args("run", "--clients", "confluent-kafka@2.5.0", "--write-baselines")
    assert args.baselines == Path("baselines")  # relative: under the current folder
    subject = "confluent-kafka@2.5.0"
    result = CaseResult("kip511.client.software_identity", "t", "", "MUST", "511", subject,
                        "client", "confluent-kafka", "2.5.0", "pass")  # fmt: skip
    described = {"name": subject, "kind": "client", "bundles": {"librdkafka": "2.5.0"}}
    run = RunResults("0", 0.0, subjects=[described], results=[result])
    record_run(subject, subject, run, False, args.baselines)
    written = read_baseline(tmp_path / "baselines" / "confluent-kafka" / "2.5.0.json")
    assert written.verdicts == {}  # a pass nothing contradicts is no entry
    assert written.bundles == {"librdkafka": "2.5.0"}  # what the run's subject said it bundled
    measured = matrix_columns(tmp_path / "baselines")
    assert [(c.subject, dict(c.verdicts)) for c in measured] == [
        (subject, {"kip511.client.software_identity": "pass"})
    ]
    assert sorted(p.name for p in locations.baselines().iterdir()) == packaged


def test_make_matrix_judges_every_registry_broker_at_its_pin() -> None:
    """Issue 42: the other implementations get matrix rows, at the version each lock pins."""
    import re

    from kconform.fixtures.targets.registry import parse_targets, target_kinds

    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    match = re.search(r"^MATRIX_TARGETS\s*\?=(.*)$", text, re.MULTILINE)
    assert match is not None and "--targets $(subst" in text
    listed = match.group(1).split()
    pinned = [row[0] for k in target_kinds() if k.registry_broker for row in k.availability()]
    assert sorted(listed) == sorted(pinned) and listed
    assert [t.label for t in parse_targets(",".join(listed), brokers=1)] == listed
    from kconform.cli import main

    assert main(["matrix", "run", "--targets", "nosuch@1", "--out", str(ROOT / "nowhere")]) == 2
    assert not (ROOT / "nowhere").exists()
