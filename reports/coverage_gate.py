"""The coverage gate: a run's branch coverage of the chosen Apache code against the committed floor.

`make test` runs the broker suites on apache:<newest>, and the Java client cases on the newest
Java client, with `--coverage --coverage-summary` (the run's counters only: one `jacococli
report` per subject) and then this module on the `coverage.json` each run wrote:

    python -m kconform.reports.coverage_gate <folder>/apache-4.4.0/coverage.json
    python -m kconform.reports.coverage_gate <folder>/java-4.4.0/coverage.json

It fails (exit 1) when the branches covered of the chosen methods fall below the floor committed
for the release, and lists every missed branch the reviewed list does not account for: the
broker's are `fixtures/coverage/accounted.py` (`MISSED`, `BRANCH_FLOOR`), the Java client's
`fixtures/coverage/client_accounted.py`; coverage.json's `accounting` says which. A release
without a committed floor is reported, not judged. The figure comes from the run it reads, never
from the committed list.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconform.fixtures.coverage.accounted import BROKER
from kconform.fixtures.coverage.client_accounted import CLIENT

__all__ = ["ACCOUNTINGS", "Gate", "judge", "main"]

ACCOUNTINGS = {a.name: a for a in (BROKER, CLIENT)}
"""coverage.json's `accounting` -> the list it is judged by (files without one are a broker's)."""


@dataclass(frozen=True)
class Gate:
    """One target's branch figure, the floor committed for its release, and what is unexplained."""

    target: str
    release: str
    covered: int
    total: int
    floor: int | None
    unaccounted: list[str] = field(default_factory=list)  # "Class.method:line (n)"
    source: str = BROKER.source  # the module holding the floor and the list

    @property
    def passed(self) -> bool:
        return self.floor is None or self.covered >= self.floor

    def lines(self) -> list[str]:
        share = self.covered / self.total if self.total else 0.0
        figure = f"{self.covered}/{self.total} branches ({share:.0%})"
        if self.floor is None:
            verdict = f"{self.target}: {figure}; no floor committed for {self.release}: not judged"
        elif self.passed:
            verdict = f"{self.target}: {figure} >= the floor {self.floor} for {self.release}"
        else:
            verdict = (
                f"{self.target}: FAIL, {figure} < the floor {self.floor} committed for "
                f"{self.release} ({self.source} BRANCH_FLOOR)"
            )
        out = [verdict]
        if self.unaccounted and self.floor is None:
            out.append(f"  {len(self.unaccounted)} line(s) with missed branches; no list for "
                       f"{self.release} in {self.source}")  # fmt: skip
        elif self.unaccounted:
            out.append(
                f"  {len(self.unaccounted)} line(s) with missed branches not accounted for in "
                f"{self.source} MISSED: " + ", ".join(self.unaccounted)
            )
        elif self.total and self.floor is not None:
            out.append(f"  every missed branch is accounted for ({self.release})")
        return out


def judge(model: Mapping[str, Any]) -> Gate:
    """The gate of one `coverage.json` (kconform/plugin/coverage.py writes it)."""
    missed, covered = model.get("totals", {}).get("BRANCH", [0, 0])
    release = str(model.get("release", ""))
    accounting = ACCOUNTINGS.get(str(model.get("accounting", BROKER.name)))
    unaccounted = [
        f"{row['class'].rsplit('/', 1)[-1]}.{row['method']}:{row['line']} ({row['unaccounted']})"
        for row in model.get("missed", [])
        if row.get("unaccounted")
    ]
    floor = accounting.floor.get(release) if accounting else None
    source = accounting.source if accounting else f"no list named {model.get('accounting')}"
    return Gate(str(model.get("target", "")), release, int(covered), int(missed) + int(covered),
                floor, unaccounted, source)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m kconform.reports.coverage_gate COVERAGE_JSON...", file=sys.stderr)
        return 2
    failed = False
    for path in paths:
        try:
            model = json.loads(Path(path).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            print(f"coverage gate: no coverage to judge in {path}: {exc}", file=sys.stderr)
            return 2
        gate = judge(model)
        print("\n".join(f"coverage gate: {line}" for line in gate.lines()))
        failed = failed or not gate.passed
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
