"""Case families (issue 28): every case id is written out in the suites, one row per case, and a
row that builds a case under another id is refused."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from kconform.engine.model import CASES, Family, Level, case
from kconform.errors import HarnessDefect
from kconform.reports.rulebook import cases_by_rule

ROOT = Path(__file__).resolve().parents[2]


def _declared_test(case_id: str, rule_id: str) -> Any:
    @case(case_id, rules=[rule_id], title="t", spec="s", level=Level.MUST)
    async def test() -> None:
        return None

    return test


def test_a_row_builds_the_case_it_names() -> None:
    family = Family(_declared_test)
    test = family("kconform.selftest.family.row", "kip714.push.accepted")
    assert [m.args[0].id for m in test.pytestmark] == ["kconform.selftest.family.row"]
    CASES.pop("kconform.selftest.family.row")


def test_a_row_that_builds_another_id_is_refused() -> None:
    family = Family(lambda _id, rule_id: _declared_test("kconform.selftest.family.other", rule_id))
    with pytest.raises(HarnessDefect, match="declaring"):
        family("kconform.selftest.family.named", "kip714.push.accepted")
    CASES.pop("kconform.selftest.family.other")


def test_every_case_id_appears_literally_in_the_suites() -> None:
    cases_by_rule()  # imports every suite module
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "suites").rglob("*.py"))
    assert "globals()" not in text
    missing = [c for c in CASES if not c.startswith("kconform.selftest.")
               and not re.search(rf"[\"']{re.escape(c)}[\"']", text)]  # fmt: skip
    assert missing == []
