"""Expectations kept once (issue 44): one naming scheme, each why written once, a fact derives
what every subject lacking a capability gives, and a case every subject passes costs no entry."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kconform.engine.results import CaseResult
from kconform.fixtures.clients.registry import client_kinds
from kconform.fixtures.targets.registry import target_kinds
from kconform.fixtures.types import Shown
from kconform.reports import expectations
from kconform.reports.expectations import (
    WHYS,
    Expectations,
    Layer,
    expectation_files,
    read_expectations,
    read_whys,
    subject_path,
)
from kconform.reports.model import layered_baselines, write_baseline

ROOT = Path(__file__).resolve().parents[1]
BASELINES = ROOT / "baselines"
MOST_ENTRIES = 1500  # the goal: expectation entries in all, facts included
MOST_REPEATS = 3  # the goal: times one why text may be written


def _sections(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The file's exceptions: the 1-node ones, each cluster size's and the soak's."""
    return [data, *data.get("brokers", {}).values(), *([data["soak"]] if "soak" in data else [])]


def _entries(data: dict[str, Any]) -> int:
    return len(data.get("lacks", {})) + sum(len(s["verdicts"]) for s in _sections(data))


def test_the_baselines_stay_within_the_goal_and_write_each_why_once() -> None:
    files = expectation_files(BASELINES)
    total = sum(_entries(json.loads(p.read_text(encoding="utf-8"))) for p in files)
    assert 0 < total <= MOST_ENTRIES, f"{total} expectation entries"
    whys = read_whys(BASELINES)
    repeats = Counter(whys.values()).most_common(1)[0][1]
    assert repeats <= MOST_REPEATS
    inline = [p for p in files if any(w not in whys for w in _refs(p))]
    assert inline == [], "a why in a subject's file is an id of baselines/whys.json"
    cited = {w for p in files for w in _refs(p)}
    assert sorted(set(whys) - cited) == [], "every why of whys.json is cited (prune_whys)"


def _refs(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    listed = [w for s in _sections(data) for w in s.get("why", {}).values()]
    return [*data.get("lacks", {}).values(), *listed]


def test_every_file_is_named_kind_then_version_of_its_subject() -> None:
    kinds = {k.name for k in target_kinds()} | {k.name for k in client_kinds()}
    for path in expectation_files(BASELINES):
        subject = read_expectations(path).subject
        assert subject_path(BASELINES, subject) == path, subject
        assert path.parent.name in kinds, f"{path}: no declared kind {path.parent.name!r}"
    assert sorted(p.name for p in BASELINES.iterdir() if p.is_file()) == ["__init__.py", WHYS]


def test_a_lacking_capability_derives_unsupported_on_every_case_that_requires_it() -> None:
    """ "No release implements KIP-977": one fact per release file, not one entry per case;
    a case added later that requires it is expected unsupported with no edit."""
    requires = expectations.case_requirements()
    kip977 = sorted(c for c, needs in requires.items() if "kip977" in needs)
    assert kip977
    path = subject_path(BASELINES, "apache:4.4.0")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert "kip977" in data["lacks"] and not set(kip977) & set(data["verdicts"])
    verdicts, why = layered_baselines([path], 1)["apache:4.4.0"]
    assert {verdicts[c] for c in kip977} == {"unsupported"}
    assert "KIP-977" in why[kip977[0]]
    assert verdicts["a.case.nobody.declared"] == "pass" and "a.case.nobody.declared" not in why


def _result(case_id: str, verdict: str, subject: str = "apache:4.4.0") -> CaseResult:
    return CaseResult(case_id, "t", "", "MUST", "KIP-714", subject, "broker", "apache", "4.4.0",
                      verdict)  # fmt: skip


def test_a_new_case_every_subject_passes_touches_no_baseline_file(tmp_path: Path) -> None:
    folder = tmp_path / "baselines"
    shutil.copytree(BASELINES, folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    before = {p: p.read_bytes() for p in folder.rglob("*.json")}
    for path in expectation_files(folder):
        subject = read_expectations(path).subject
        write_baseline(path, subject, [_result("kip714.brand_new_case", "pass", subject)],
                       keep_unrun=True, bundles=read_expectations(path).bundles)  # fmt: skip
    assert {p: p.read_bytes() for p in folder.rglob("*.json")} == before


def test_writing_keeps_only_what_the_facts_do_not_derive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requires = {"k.needs": frozenset({"kip977"}), "k.plain": frozenset[str]()}
    monkeypatch.setattr(expectations, "case_requirements", lambda: requires)
    folder = tmp_path / "baselines"
    folder.mkdir()
    (folder / WHYS).write_text("{}")
    path = subject_path(folder, "apache:9.9.9")
    expectations.write_expectations(path, Expectations(
        "apache:9.9.9", Layer(), lacks={"kip977": "KIP-977 was never merged"}))  # fmt: skip
    results = [_result("k.needs", "unsupported", "apache:9.9.9"),
               _result("k.plain", "fail", "apache:9.9.9"),
               _result("k.other", "pass", "apache:9.9.9")]  # fmt: skip
    write_baseline(path, "apache:9.9.9", results)
    data = json.loads(path.read_text())
    assert data["verdicts"] == {"k.plain": "fail"}  # derived unsupported and pass: no entries
    assert json.loads((folder / WHYS).read_text()) == {
        data["lacks"]["kip977"]: "KIP-977 was never merged"
    }
    write_baseline(path, "apache:9.9.9", [_result("k.plain", "pass", "apache:9.9.9")], brokers=3)
    assert json.loads(path.read_text())["brokers"] == {"3": {"verdicts": {"k.plain": "pass"}}}
    three = layered_baselines([path], 3)["apache:9.9.9"][0]
    assert (three["k.plain"], three["k.needs"]) == ("pass", "unsupported")


def test_a_release_a_bug_of_the_record_covers_is_expected_to_deviate_without_an_edit() -> None:
    """The rule book's bug record (a `Known` with a case, its system and affected releases)
    derives the deviation on a release nobody has measured yet; a fixed release passes."""
    from kconform.rules import BUGS

    (bug,) = [b for _, b in BUGS if b.bug and b.who == "Java client 3.7.0+"
              and b.case == "kip714.client.errors.telemetry_too_large"]  # fmt: skip
    unmeasured = Expectations("java:9.9.9", Layer())
    verdict, why = unmeasured.expected(bug.case)
    assert verdict == "non-strict" and why is not None and bug.bug in why  # a SHOULD case
    assert Expectations("java:3.6.0", Layer()).expected(bug.case) == ("pass", None)
    fixed = [b for _, b in BUGS if b.case == "kip714.client.compression.large_payload"]
    assert fixed and fixed[0].fixed_in == "3.8.0"
    assert Expectations("java:3.8.0", Layer()).expected(fixed[0].case) == ("pass", None)
    assert Expectations("java:3.7.1", Layer()).expected(fixed[0].case)[0] == "non-strict"


def test_a_new_subject_lacking_a_capability_gets_one_fact_not_an_entry_per_case(
    tmp_path: Path,
) -> None:
    """What its describe says it lacks, confirmed by every case requiring it being unsupported,
    is written as a fact; a capability one case still judged stays an entry per case."""
    requires = expectations.case_requirements()
    telemetry = sorted(c for c, needs in requires.items() if needs == {"telemetry"})[:5]
    subject = "kafkajs@9.9.9"
    results = [_result(c, "unsupported", subject) for c in telemetry]
    results.append(_result("kip511.client.software_identity", "fail", subject))
    path = tmp_path / "b.json"
    write_baseline(path, subject, results, capabilities=[])
    data = json.loads(path.read_text())
    assert list(data["lacks"]) == ["telemetry"] and "no telemetry capability" in data["lacks"][
        "telemetry"]  # fmt: skip
    assert data["verdicts"] == {"kip511.client.software_identity": "fail"}
    results[0].verdict = "pass"  # one case did judge it: the data does not confirm the lack
    write_baseline(tmp_path / "c.json", subject, results, capabilities=[])
    again = json.loads((tmp_path / "c.json").read_text())
    assert "lacks" not in again and len(again["verdicts"]) == len(telemetry)


def test_what_a_subject_never_showed_is_one_fact_with_the_measured_reason(tmp_path: Path) -> None:
    """A case that needs a subject to show something (ApiVersions v5) and ends unsupported
    without it: one `lacks` fact whose why is what the run measured, not an entry per case,
    even from a run that does not say the subject's capabilities; a later run in which such a
    case is judged takes the fact back."""
    requires = expectations.case_requirements()
    v5 = sorted(c for c, needs in requires.items() if Shown.APIVERSIONS_V5 in needs)
    assert {c.split(".")[0] for c in v5} == {"kip1242"} and len(v5) >= 2
    subject = "java:9.9.9"
    said = "the client sends ApiVersions v4 to a broker advertising v0-5"
    results = [_result(c, "unsupported", subject) for c in v5]
    for r in results:
        r.message = said
    path = tmp_path / "java" / "9.9.9.json"
    write_baseline(path, subject, results)
    data = json.loads(path.read_text())
    assert data["lacks"] == {"apiversions_v5": said} and data["verdicts"] == {}
    verdicts, why = layered_baselines([path], 1)[subject]
    assert {verdicts[c] for c in v5} == {"unsupported"} and why[v5[0]] == said
    write_baseline(path, subject, [_result(v5[0], "pass", subject)], keep_unrun=True)
    data = json.loads(path.read_text())
    assert "lacks" not in data, "a case judged it: the lack is no longer a fact"
    assert layered_baselines([path], 1)[subject][0][v5[1]] == "pass"


def test_an_info_case_is_expected_informational_without_an_entry() -> None:
    """An INFO case that ran to its end records: `informational` is its level's outcome, so no
    subject lists it (111 such entries were copied across the baselines)."""
    from kconform.engine.model import CASES
    from kconform.rules import Level

    info = sorted(c for c, i in CASES.items() if i.level is Level.INFO)
    must = sorted(c for c, i in CASES.items() if i.level is Level.MUST)
    unmeasured = Expectations("apache:9.9.9", Layer())
    assert info and unmeasured.expected(info[0]) == ("informational", None)
    assert unmeasured.expected(must[0]) == ("pass", None)
    listed = [
        p
        for p in expectation_files(BASELINES)
        if "informational" in json.loads(p.read_text(encoding="utf-8"))["verdicts"].values()
    ]
    assert listed == []  # fmt: skip
