"""The missed-branch accounting (fixtures/coverage/accounted.py), its place in the report, and the
gate (reports/coverage_gate.py) on models shaped like the plugin's coverage.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform.fixtures.coverage import accounted
from kconform.fixtures.coverage.accounted import BRANCH_FLOOR, KINDS, MISSED, Missed
from kconform.fixtures.coverage.selection import chosen_for
from kconform.reports import coverage_gate
from kconform.reports.coverage import account, attribute, build_model
from kconform.reports.html_coverage import render_coverage_page, render_coverage_section
from tests.coverage.test_xml import FILE, MANAGER, PUSH, RUN

RELEASE = "9.9.9"  # a release of this test's own, so the committed data stays out of it


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """RUN's model (line 11 misses 2 of 4 branches), one of them accounted for."""
    entry = Missed(MANAGER, "processPushTelemetryRequest", 11, 1, "dead", "a null the wire lacks")
    monkeypatch.setitem(accounted.MISSED, RELEASE, (entry,))
    built = build_model(RUN, attribute([("kip714.push.accepted", PUSH)]), sources={FILE: None})
    built.update(target=f"apache:{RELEASE}", jacoco="0.8.13", nodes=1, release=RELEASE, lost=[],
                 cases=["(startup)", "kip714.push.accepted"], sources_missing=[])  # fmt: skip
    built["missed"] = account(built, RELEASE)
    return built


def test_account_names_the_reason_and_what_is_left(model: dict[str, object]) -> None:
    assert model["missed"] == [
        {"class": MANAGER, "method": "processPushTelemetryRequest", "line": 11, "missed": 2,
         "covered": 2, "unaccounted": 1, "why": [["dead", 1, "a null the wire lacks"]]}
    ]  # fmt: skip


def test_page_and_section_show_the_reason(model: dict[str, object]) -> None:
    page = render_coverage_page(model)
    assert "missed: dead (1 br): a null the wire lacks" in page
    assert "1 br not accounted for" in page
    section = render_coverage_section([model])
    assert "1 dead, 1 not accounted for" in section
    assert "1 case(s)" in section  # the (startup) dump is no case
    assert "not accounted for in fixtures/coverage/accounted.py" in section


def test_gate_fails_below_the_floor_and_passes_at_it(
    model: dict[str, object], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "coverage.json"
    path.write_text(json.dumps(model))
    monkeypatch.setitem(BRANCH_FLOOR, RELEASE, 3)  # RUN covers 2 of 4
    gate = coverage_gate.judge(model)
    assert (gate.covered, gate.total, gate.passed) == (2, 4, False)
    assert gate.unaccounted == ["ClientMetricsManager.processPushTelemetryRequest:11 (1)"]
    assert coverage_gate.main([str(path)]) == 1
    monkeypatch.setitem(BRANCH_FLOOR, RELEASE, 2)
    assert coverage_gate.judge(model).passed and coverage_gate.main([str(path)]) == 0
    monkeypatch.delitem(BRANCH_FLOOR, RELEASE)
    assert coverage_gate.judge(model).floor is None and coverage_gate.main([str(path)]) == 0


def test_gate_without_a_coverage_file_is_an_error(tmp_path: Path) -> None:
    assert coverage_gate.main([str(tmp_path / "apache-4.4.0" / "coverage.json")]) == 2


def test_committed_entries_are_chosen_code_of_known_kinds() -> None:
    for release, entries in MISSED.items():
        for e in entries:
            assert e.kind in KINDS, e
            assert chosen_for(e.cls) is not None, e
            assert e.branches > 0 and e.why, e
        assert len({(e.cls, e.line, e.why) for e in entries}) == len(entries), release


def test_the_4_4_0_floor_and_the_list_add_up_to_its_branches() -> None:
    """4.4.0's chosen methods have 206 branches (JaCoCo, docs/coverage.md): the floor covered,
    every other one listed with its reason."""
    assert BRANCH_FLOOR["4.4.0"] + sum(e.branches for e in MISSED["4.4.0"]) == 206


def test_docs_show_every_4_4_0_entry() -> None:
    """docs/coverage.md's table is the list, not a second one: each entry, as committed."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "coverage.md").read_text("utf-8")
    for e in MISSED["4.4.0"]:
        short = e.cls.rsplit("/", 1)[-1]
        assert f"| {e.kind} | {short}.{e.method} | {e.line} | {e.branches} | {e.why} |" in docs, e
