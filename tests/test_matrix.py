"""The release matrix is the committed baselines, rendered: it cannot drift from them, and every
deviation it shows carries its source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform.cli.matrix import render_pages
from kconform.reports.matrix import build, load_columns, render_html, render_markdown
from kconform.reports.model import baseline_verdicts, read_baseline

ROOT = Path(__file__).resolve().parents[1]
BASELINES = sorted((ROOT / "baselines").glob("*.json"))
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


@pytest.mark.parametrize("path", BASELINES, ids=[p.name for p in BASELINES])
def test_every_deviation_in_a_baseline_has_its_why(path: Path) -> None:
    baseline = read_baseline(path)
    missing = [
        f"{case_id}: {entry}"
        for case_id, entry in baseline.verdicts.items()
        if set(baseline_verdicts(entry)) & NEEDS_WHY and not baseline.why.get(case_id, "").strip()
    ]
    assert not missing, f"{path.name}: non-pass verdicts without a why:\n" + "\n".join(missing)


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
    assert "| `a.case` | FAIL|pass [1](#note-1) | FAIL [1](#note-1) | · |" in page
    assert "| `b.case` | pass | pass | non-strict [2](#note-2) |" in page
    assert '<li id="note-2">races</li>' in render_html(matrix)
