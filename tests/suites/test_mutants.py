"""Mutation self-test: the broker suites must catch every reference mutant.

One pytest session runs the broker suites against the pristine reference and against every
mutant the suites can observe (`reference:<mutant>`). A mutant that breaks a MUST rule must make
a MUST case fail ("killed"); one that breaks a SHOULD or INFO rule (ruling 4, §C.2) must at
least change a verdict or an observation compared with the pristine run ("detected"). Either
way it counts only if the case that catches it claims the mutant's rule (`@case(rules=...)`):
a kill by a case about something else proves nothing about the rule. The pristine reference
itself must pass everything, or the suites are wrong. Against a mutant, only the cases that
claim its rule run (`tests/support/claiming_cases.py`): nothing else can count.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from kconform.engine.results import CaseResult
from kconform.fixtures.reference.mutants import MUTANTS
from kconform.reports.model import RunResults

SUITES = Path(__file__).resolve().parents[2] / "suites" / "broker"
SUPPORT = Path(__file__).resolve().parents[1] / "support"
OBSERVABLE = sorted(name for name, m in MUTANTS.items() if not m.suite_exclusion)


def _observations(result: CaseResult) -> list[tuple[str, str]]:
    return [(e.what, repr(e.observed)) for e in result.expectations if e.expected == "(recorded)"]


def _differs(mutant: list[CaseResult], pristine: dict[str, CaseResult], rule: str) -> list[str]:
    found = []
    for result in mutant:
        base = pristine.get(result.case_id)
        if base is None or result.verdict == "skipped" or rule not in result.rules:
            continue
        if result.verdict != base.verdict:
            found.append(f"{result.case_id}: {base.verdict} -> {result.verdict}")
        elif _observations(result) != _observations(base):
            found.append(f"{result.case_id}: recorded observations differ")
    return found


@pytest.mark.slow
def test_every_mutant_is_caught(tmp_path: Path) -> None:
    results_path = tmp_path / "results.json"
    targets = ",".join(["reference", *(f"reference:{name}" for name in OBSERVABLE)])
    path = os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")]))
    process = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITES), "-p", "no:cacheprovider", "-q",
         "-p", "claiming_cases", "--target", targets, "--brokers", "2", "--stop-target-on-fail",
         "--kconform-results", str(results_path)],
        capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    assert results_path.exists(), process.stdout[-3000:] + process.stderr[-3000:]
    by_subject: dict[str, list[CaseResult]] = defaultdict(list)
    for result in RunResults.read(results_path).results:
        by_subject[result.subject].append(result)

    pristine = {r.case_id: r for r in by_subject["reference"]}
    wrong = [f"{r.case_id}: {r.verdict} {r.message}" for r in pristine.values()
             if r.verdict not in ("pass", "informational")]  # fmt: skip
    assert not wrong, "the pristine reference must pass every case:\n" + "\n".join(wrong)

    lines, survivors = [], []
    for name in OBSERVABLE:
        mutant = MUTANTS[name]
        results = by_subject[f"reference:{name}"]
        kills = [
            r.case_id
            for r in results
            if r.level == "MUST" and r.verdict == "fail" and mutant.rule in r.rules
        ]
        changes = _differs(results, pristine, mutant.rule)
        if kills:
            status = f"killed by {kills[0]}" + (f" (+{len(kills) - 1})" if len(kills) > 1 else "")
        elif changes:
            status = f"detected ({mutant.level} rule): {changes[0]}"
        else:
            status = "SURVIVED"
        caught = bool(kills) if mutant.level == "MUST" else bool(kills or changes)
        if not caught:
            survivors.append(f"{name} ({mutant.level} rule {mutant.rule}): {status}")
        lines.append(f"  {name:<42} {status}")
    killed = sum(1 for line in lines if "killed by" in line)
    excluded = [f"  {n}: {m.suite_exclusion}" for n, m in MUTANTS.items() if m.suite_exclusion]
    print(f"\nmutation score: {killed}/{len(OBSERVABLE)} killed by a MUST case claiming the rule, "
          f"{len(OBSERVABLE) - len(survivors)}/{len(OBSERVABLE)} caught; "
          f"{len(excluded)} outside the suites' reach:")  # fmt: skip
    print("\n".join(lines + excluded))
    assert not survivors, "surviving mutants:\n" + "\n".join(survivors)
