"""The bug record (issue 31) holds together: every bug says which system and releases it
affects, what fixed it, where it is published and which case is meant to catch it, and that case
claims the rule the bug is filed under; docs/bugs.md is the record and the baselines rendered."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kconform.errors import HarnessDefect
from kconform.reports.bugs import (
    BASELINES,
    BUNDLED,
    SUBJECT_KINDS,
    cells,
    fixed_releases,
    holding,
    render_committed,
)
from kconform.reports.matrix import Column, load_columns
from kconform.reports.matrix_artifact import matrix_columns
from kconform.reports.rulebook import cases_by_rule
from kconform.rules import AWAITING_RULE, BUGS, RULES, Known
from kconform.rules.bugs import affected_ranges, split_who

ROOT = Path(__file__).resolve().parents[2]
IDS = [bug.bug for _, bug in BUGS]


@pytest.fixture(scope="module")
def judged() -> dict[str, list[str]]:
    return cases_by_rule()


def test_the_record_holds_at_least_30_bugs_each_once() -> None:
    assert len(BUGS) >= 30
    assert len(IDS) == len(set(IDS)), sorted(i for i in IDS if IDS.count(i) > 1)


@pytest.mark.parametrize(("rule_id", "bug"), BUGS, ids=IDS)
def test_every_bug_names_its_system_releases_fix_and_source(rule_id: str, bug: Known) -> None:
    system, affected = split_who(bug.who)
    assert affected and bug.fixed_in.strip() and bug.source.strip() and bug.does.strip()
    assert "\n" not in bug.does and len(bug.does) <= 240, "the behaviour in one line"
    if system in SUBJECT_KINDS:  # kconform runs it: the baselines' releases are matched
        assert affected_ranges(affected), f"{bug.bug}: {affected!r} is not in version terms"


@pytest.mark.parametrize(("rule_id", "bug"), BUGS, ids=IDS)
def test_every_case_named_exists_and_claims_the_bugs_rule(
    rule_id: str, bug: Known, judged: dict[str, list[str]]
) -> None:
    if bug.rule:  # awaiting a rule: one it proposes, not in the book, and no case yet
        assert bug in AWAITING_RULE and rule_id == bug.rule and rule_id not in RULES
        assert not bug.case
        return
    assert bool(bug.case) != bool(bug.uncaught), f"{bug.bug}: a case, or why none can catch it"
    if bug.case:
        claiming = judged.get(rule_id, []) + judged.get(RULES[rule_id].part_of, [])
        assert bug.case in claiming, f"{bug.bug}: {bug.case} does not judge {rule_id}"


def test_affected_releases_read_as_version_ranges() -> None:
    ranges = affected_ranges("3.7.0-3.9.x, 4.0.0")
    assert ranges is not None
    covers = [any(lo <= v <= hi for lo, hi in ranges) for v in ((3, 9, 2), (4, 0, 0), (4, 0, 1))]
    assert covers == [True, True, False]
    assert affected_ranges("up to v1.19.0") == [((0, 0, 0), (1, 19, 0))]
    assert affected_ranges("2.5.0+") is not None
    assert affected_ranges("builds since commit 7f436c34") is None
    with pytest.raises(ValueError, match="system"):
        split_who("Kafka 3.7.0")


def test_bug_fields_need_a_bug_id() -> None:
    with pytest.raises(HarnessDefect, match="need a bug id"):
        Known("Apache 3.7.0", "does a thing", "KAFKA-1", fixed_in="3.8.0")
    with pytest.raises(HarnessDefect, match="slug"):
        Known("Apache 3.7.0", "does a thing", "KAFKA-1", bug="Not A Slug")


def test_a_baselines_release_is_marked_affected_when_the_range_covers_it(tmp_path: Path) -> None:
    for name, subject, verdict in (("apache-3.7.0", "apache:3.7.0", "fail"),
                                   ("apache-4.1.0", "apache:4.1.0", "pass"),
                                   ("java-3.7.0", "java:3.7.0", "fail")):  # fmt: skip
        body = {"subject": subject, "verdicts": {"a.case": verdict}, "why": {"a.case": "x"}}
        (tmp_path / f"{name}.json").write_text(json.dumps(body), encoding="utf-8")
    columns = load_columns(sorted(tmp_path.glob("*.json")))
    bug = Known("Apache 3.7.0-3.7.2", "does a thing", "KAFKA-1", bug="x", fixed_in="3.8.0",
                case="a.case")  # fmt: skip
    found = [(c.label, c.affected, c.outcome) for c in cells(bug, columns)]
    assert found == [("apache:3.7.0", True, "non-pass"), ("apache:4.1.0", False, "pass")]


def test_a_bundled_librarys_bug_is_held_to_the_release_each_baseline_records(
    tmp_path: Path,
) -> None:
    """confluent-kafka 2.7.0 bundles librdkafka 2.6.1: a librdkafka bug is judged on 2.6.1,
    never on the binding's own number, and a baseline without the record is not counted."""
    for name, bundles in (("confluent-kafka@2.7.0", {"librdkafka": "2.6.1"}),
                          ("confluent-kafka@2.9.0", {"librdkafka": "2.8.0"}),
                          ("confluent-kafka@2.8.2", {})):  # fmt: skip
        body = {"subject": name, "bundles": bundles, "verdicts": {"a.case": "fail"}}
        (tmp_path / f"{name}.json").write_text(json.dumps(body), encoding="utf-8")
    columns = load_columns(sorted(tmp_path.glob("*.json")))
    bug = Known("librdkafka 2.6.0-2.6.x", "does a thing", "#1", bug="x", fixed_in="2.7.0",
                case="a.case")  # fmt: skip
    found = {c.label: (c.affected, c.release) for c in cells(bug, columns)}
    assert found == {"confluent-kafka@2.7.0": (True, (2, 6, 1)),
                     "confluent-kafka@2.8.2": (None, None),
                     "confluent-kafka@2.9.0": (False, (2, 8, 0))}  # fmt: skip
    assert holding(bug, columns).caught
    fixed = Known("librdkafka 2.6.0-2.6.x", "x", "#1", bug="x", fixed_in="2.8.0", case="a.case")
    assert [c.label for c in holding(fixed, columns).flagged] == ["confluent-kafka@2.9.0"]


def test_every_baseline_of_a_bundling_subject_records_the_release_it_bundled() -> None:
    """Without it a bundled library's bug is shown as "release not recorded" and left out of
    the figure: the data, not the page, must say which librdkafka each subject ran."""
    columns = matrix_columns(BASELINES)
    missing = [
        (c.source, library)
        for system, library in BUNDLED.items()
        for c in columns
        if re.split(r"[:@]", c.subject)[0] in SUBJECT_KINDS[system] and library not in c.bundles
    ]
    assert missing == []


def test_fixed_releases_are_the_versions_before_any_comment() -> None:
    def fixed(text: str) -> set[tuple[int, ...]]:
        return fixed_releases(Known("Apache 3.7.0", "x", "KAFKA-1", bug="x", fixed_in=text))

    assert fixed("4.0.1, 4.1.0 (not backported to 3.9)") == {(4, 0, 1), (4, 1, 0)}
    assert fixed("v1.21.4") == {(1, 21, 4)}
    assert fixed("unfixed") == set() == fixed("not known (KAFKA-20898 resolved 2026-09-24)")


def _columns(tmp_path: Path, verdicts: dict[str, str]) -> list[Column]:
    for subject, verdict in verdicts.items():
        body = {"subject": subject, "verdicts": {"a.case": verdict}, "why": {"a.case": "x"}}
        name = subject.replace(":", "-")
        tmp_path.mkdir(exist_ok=True)
        (tmp_path / f"{name}.json").write_text(json.dumps(body), encoding="utf-8")
    return load_columns(sorted(tmp_path.glob("*.json")))


def test_a_bug_is_caught_when_every_affected_release_fails_and_flagged_when_a_fix_does(
    tmp_path: Path,
) -> None:
    bug = Known("Apache 3.7.0-3.8.x", "does a thing", "KAFKA-1", bug="x", fixed_in="3.9.0",
                case="a.case")  # fmt: skip
    good = holding(bug, _columns(tmp_path / "a", {"apache:3.7.0": "fail", "apache:3.8.1": "fail",
                                                  "apache:3.9.0": "pass"}))  # fmt: skip
    assert good.caught and good.flagged == ()
    half = holding(bug, _columns(tmp_path / "b", {"apache:3.7.0": "fail", "apache:3.8.1": "pass",
                                                  "apache:3.9.0": "fail"}))  # fmt: skip
    assert not half.caught and [c.label for c in half.flagged] == ["apache:3.9.0"]
    unheld = holding(bug, _columns(tmp_path / "c", {"apache:3.9.0": "pass"}))
    assert not unheld.in_matrix and not unheld.caught


def test_every_bug_is_held_to_the_matrix_baselines() -> None:
    """Issue 31: on each release a bug affects that the matrix ran, its case is not a pass, and
    on each release named as fixing it, the case passes; a bug whose case passes somewhere it
    affects, or cannot tell its fixed releases apart, says why (`missed`), and only such a bug
    does."""
    columns = matrix_columns(BASELINES)
    problems = []
    for _, bug in BUGS:
        held = holding(bug, columns)
        for cell in held.flagged if not bug.missed else ():  # `missed` says why it cannot tell
            problems.append(f"{bug.bug}: {cell.label} fixed it, yet its case is {cell.entry}")
        if held.in_matrix and not held.caught and not bug.missed:
            passed = [c.label for c in held.affected if c.outcome != "non-pass"]
            problems.append(f"{bug.bug}: its case passes on affected {passed}, unexplained")
        if bug.missed and held.caught and not held.flagged:
            problems.append(f"{bug.bug}: says why it is missed, but the matrix catches it")
    assert problems == []


def test_the_committed_page_is_the_record_rendered() -> None:
    page = ROOT / "docs" / "bugs.md"
    assert page.read_text(encoding="utf-8") == render_committed(), (
        "docs/bugs.md is stale: run `make docs`"
    )
    for path in (page, ROOT / "docs" / "rules.md"):
        text = path.read_text(encoding="utf-8")
        assert [i for i in IDS if f"`{i}`" not in text] == [], path.name
