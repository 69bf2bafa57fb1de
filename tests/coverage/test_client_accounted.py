"""The Java client's missed-branch accounting (fixtures/coverage/client_accounted.py): its
entries, its floor, the report's reasons and count by kind, and the gate judging a client's
coverage.json by the client's list, not the broker's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kconform.fixtures.coverage import client_accounted
from kconform.fixtures.coverage.accounted import BRANCH_FLOOR as BROKER_FLOOR
from kconform.fixtures.coverage.accounted import KINDS, Missed
from kconform.fixtures.coverage.client_accounted import BRANCH_FLOOR, CLIENT, MISSED
from kconform.fixtures.coverage.client_selection import CLIENT_CLASSES
from kconform.fixtures.coverage.selection import chosen_for
from kconform.reports import coverage_gate
from kconform.reports.coverage import account, attribute, build_model
from kconform.reports.html_coverage import render_coverage_page, render_coverage_section
from tests.coverage.test_xml import FILE, MANAGER, PUSH, RUN

RELEASE = "9.9.9"  # a release of this test's own, so the committed data stays out of it
DOCS = Path(__file__).resolve().parents[2] / "docs" / "coverage.md"


@pytest.fixture
def client_model(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """RUN's model (line 11 misses 2 of 4 branches) as a client's coverage.json, one branch
    accounted for in the client's list and nothing in the broker's."""
    why = "a close between two reads"
    entry = Missed(MANAGER, "processPushTelemetryRequest", 11, 1, "race", why)
    monkeypatch.setitem(client_accounted.MISSED, RELEASE, (entry,))
    built = build_model(RUN, attribute([("kip714.client.cadence.push_interval", PUSH)]),
                        sources={FILE: None})  # fmt: skip
    built.update(target=f"java:{RELEASE}", jacoco="0.8.13", units="3 client JVM(s)",
                 release=RELEASE, lost=[], cases=["kip714.client.cadence.push_interval"],
                 sources_missing=[], accounting=CLIENT.name,
                 accounted_in=CLIENT.source)  # fmt: skip
    built["missed"] = account(built, RELEASE, CLIENT)
    return built


def test_client_list_accounts_and_the_broker_list_does_not(
    client_model: dict[str, object],
) -> None:
    assert client_model["missed"] == [
        {"class": MANAGER, "method": "processPushTelemetryRequest", "line": 11, "missed": 2,
         "covered": 2, "unaccounted": 1, "why": [["race", 1, "a close between two reads"]]}
    ]  # fmt: skip
    assert account(client_model, RELEASE)[0]["unaccounted"] == 2  # the broker's list: nothing


def test_page_and_section_name_the_client_list_and_count_by_kind(
    client_model: dict[str, object],
) -> None:
    page = render_coverage_page(client_model)
    assert "missed: race (1 br): a close between two reads" in page
    assert "by kind: 1 race, 1 not accounted for" in page
    section = render_coverage_section([client_model])
    assert "1 race, 1 not accounted for" in section
    assert "not accounted for in fixtures/coverage/client_accounted.py" in section


def test_gate_judges_a_client_by_the_client_floor(
    client_model: dict[str, object], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "coverage.json"
    path.write_text(json.dumps(client_model))
    monkeypatch.setitem(BROKER_FLOOR, RELEASE, 1)  # the broker's floor would pass it
    monkeypatch.setitem(BRANCH_FLOOR, RELEASE, 3)  # RUN covers 2 of 4
    gate = coverage_gate.judge(client_model)
    assert (gate.covered, gate.floor, gate.passed) == (2, 3, False)
    assert "fixtures/coverage/client_accounted.py BRANCH_FLOOR" in gate.lines()[0]
    assert gate.unaccounted == ["ClientMetricsManager.processPushTelemetryRequest:11 (1)"]
    assert coverage_gate.main([str(path)]) == 1
    monkeypatch.setitem(BRANCH_FLOOR, RELEASE, 2)
    assert coverage_gate.main([str(path)]) == 0


def test_gate_does_not_judge_an_unknown_list(client_model: dict[str, object]) -> None:
    gate = coverage_gate.judge({**client_model, "accounting": "rust client"})
    assert gate.floor is None and gate.passed and "no list named rust client" in gate.source


def test_committed_entries_are_chosen_client_code_of_known_kinds() -> None:
    for release, entries in MISSED.items():
        for e in entries:
            assert e.kind in KINDS, e
            assert chosen_for(e.cls, CLIENT_CLASSES) is not None, e
            assert e.branches > 0 and e.why, e
        assert len({(e.cls, e.line, e.why) for e in entries}) == len(entries), release


def test_the_4_4_0_floor_and_the_list_add_up_to_its_branches() -> None:
    """java 4.4.0's chosen code has 316 branches (JaCoCo, docs/coverage.md): `make test`'s cases
    cover the floor, every other one is listed with its reason."""
    assert BRANCH_FLOOR["4.4.0"] + sum(e.branches for e in MISSED["4.4.0"]) == 316


def test_docs_show_every_4_4_0_entry() -> None:
    """docs/coverage.md's client table is the list, not a second one: each entry, as committed."""
    docs = DOCS.read_text("utf-8")
    for e in MISSED["4.4.0"]:
        short = e.cls.rsplit("/", 1)[-1]
        assert f"| {e.kind} | {short}.{e.method} | {e.line} | {e.branches} | {e.why} |" in docs, e
