"""docs/bugs.md: the bug record (issue 31) in one table, each bug beside the verdicts the
committed baselines hold for its case on the subjects of its system.

Rendered from the rule book (`kconform.rules.BUGS`) and the measured matrix alone, by `make docs`
(`python -m kconform.reports.bugs docs/bugs.md`); a test renders it again and compares. A
subject's release is marked "affected" when the bug's affected releases cover it. For a library
other subjects bundle (librdkafka in the confluent-kafka bindings and rdkafka) that release is
the one the baseline's `bundles` records, as the library reported it in the run: a binding's
own version does not say which librdkafka it ran (confluent-kafka 2.16.1 bundles 2.16.0).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kconform import locations
from kconform.reports.bug_systems import (
    BUNDLED,
    SUBJECT_KINDS,
    affects,
    release_of,
    split_subject,
)
from kconform.reports.matrix import Column, load_columns
from kconform.reports.matrix_artifact import matrix_columns
from kconform.reports.model import baseline_verdicts
from kconform.rules import BUGS, Known
from kconform.rules.bugs import SYSTEMS, Version, affected_ranges, split_who

__all__ = [
    "BASELINES",
    "Cell",
    "Holding",
    "affects",
    "cells",
    "figure",
    "fixed_releases",
    "holding",
    "main",
    "render_markdown",
]

BASELINES = locations.baselines()
DEVIATIONS = frozenset({"fail", "non-strict", "error"})


@dataclass(frozen=True)
class Cell:
    """One baseline's verdict on a bug's case: `release` is the bug's system's release in that
    subject (None: not recorded), `affected` whether the bug's releases cover it (None: not
    known) and `bundled` the library it was bundled in ("" when the subject is the system)."""

    label: str
    affected: bool | None
    entry: str
    release: Version | None = None
    bundled: str = ""

    @property
    def outcome(self) -> str:
        """pass, non-pass (a judged deviation: fail, non-strict, error), varies (a baseline
        that accepts both) or not judged (not-applicable, unsupported, skipped: the case saw
        nothing to judge, which catches nothing)."""
        verdicts = set(baseline_verdicts(self.entry))
        if not verdicts & (DEVIATIONS | {"pass"}):
            return "not judged"
        deviates = bool(verdicts & DEVIATIONS)
        return "varies" if deviates and "pass" in verdicts else "non-pass" if deviates else "pass"


def cells(bug: Known, columns: Sequence[Column]) -> list[Cell]:
    """The verdicts on `bug.case` of the baselines of its system's subjects, each with the
    system's release there: the subject's own, or the one its baseline records it bundled."""
    system, affected = split_who(bug.who)
    kinds = SUBJECT_KINDS.get(system, ())
    ranges = affected_ranges(affected)
    library = BUNDLED.get(system, "")
    out = []
    for column in columns:
        kind, version = split_subject(column.subject)
        if kind not in kinds or bug.case not in column.verdicts:
            continue
        if library:
            version = release_of(column.bundles.get(library, ""))
        covered = None
        if ranges is not None and version is not None:
            covered = any(lo <= version <= hi for lo, hi in ranges)
        out.append(Cell(column.label, covered, column.verdicts[bug.case], version, library))
    return out


_RELEASE = re.compile(r"\bv?(\d+)\.(\d+)\.(\d+)\b")


def fixed_releases(bug: Known) -> set[Version]:
    """The releases `fixed_in` names as fixed (before any parenthesis, which only comments):
    "4.0.1, 4.1.0 (not backported to 3.9)" -> {(4, 0, 1), (4, 1, 0)}; "unfixed" -> set()."""
    head = bug.fixed_in.split("(")[0]
    return {(int(a), int(b), int(c)) for a, b, c in _RELEASE.findall(head)}


@dataclass(frozen=True)
class Holding:
    """A bug held to the baselines: its case's cells on releases it affects and on the releases
    that fixed it. Caught: every affected cell is a judged deviation; flagged: a fixed cell
    finds one (a case that judges nothing there blames no one)."""

    affected: tuple[Cell, ...]
    fixed: tuple[Cell, ...]

    @property
    def in_matrix(self) -> bool:
        return bool(self.affected)

    @property
    def caught(self) -> bool:
        return self.in_matrix and all(c.outcome == "non-pass" for c in self.affected)

    @property
    def flagged(self) -> tuple[Cell, ...]:
        """Fixed releases whose case finds a deviation (always or sometimes); one where the
        case could judge nothing blames no one."""
        return tuple(c for c in self.fixed if c.outcome in ("non-pass", "varies"))


def holding(bug: Known, columns: Sequence[Column]) -> Holding:
    """How the committed baselines hold `bug` (nothing for a bug without a case)."""
    if not bug.case:
        return Holding((), ())
    fixed = fixed_releases(bug)
    found = cells(bug, columns)
    affected = tuple(c for c in found if c.affected)
    done = tuple(c for c in found if c.affected is False and c.release in fixed)
    return Holding(affected, done)


def _verdicts_text(bug: Known, system: str, found: list[Cell], kinds_run: set[str]) -> str:
    if not bug.case:
        return "no case"
    if system not in SUBJECT_KINDS:
        return "no driver for it: not in the matrix"
    if not found:
        if not set(SUBJECT_KINDS[system]) & kinds_run:
            return "not in the matrix yet"
        return "no baseline holds the case"
    return "; ".join(f"`{c.label}`{_mark(c)}: {c.entry}" for c in found)


def _mark(cell: Cell) -> str:
    """What follows a subject in the verdicts column: the bundled release it ran, and whether
    the bug affects it."""
    if cell.bundled and cell.release is None:
        return f" ({cell.bundled} release not recorded)"
    if cell.affected is None:
        return " (release not recorded)"
    shown = ".".join(map(str, cell.release)) if cell.bundled and cell.release else ""
    notes = [f"{cell.bundled} {shown}"] if shown else []
    notes += ["affected"] if cell.affected else []
    return f" ({', '.join(notes)})" if notes else ""


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def figure(columns: Sequence[Column]) -> tuple[int, int, int]:
    """(caught, held, flagged): of the bugs whose case has a baseline on a release they affect
    (held), how many that case catches on every such release, and on how many it blames a
    release that fixed the bug. The README and docs/bugs.md state it."""
    holdings = [holding(bug, columns) for _, bug in BUGS]
    held = [h for h in holdings if h.in_matrix]
    return sum(h.caught for h in held), len(held), sum(bool(h.flagged) for h in holdings)


def bug_figure(columns: Sequence[Column]) -> str:
    """The README's sentence: the bug record held to the baselines (`figure`)."""
    caught, held, flagged = figure(columns)
    return (f"**{caught} of {held} public bugs caught in the release that had them, {flagged} "
            f"flagged in a release that fixed them** ({len(BUGS)} bugs on record; "
            f"[docs/bugs.md](docs/bugs.md) lists each with its verdicts and explains every "
            "miss).")  # fmt: skip


def render_markdown(columns: Sequence[Column]) -> str:
    """docs/bugs.md from the bug record and these baselines, a system's bugs together (in the
    rule book's order)."""
    kinds_run = {split_subject(c.subject)[0] for c in columns}
    rows, notes, uncaught = [], [], 0
    for rule_id, bug in sorted(BUGS, key=lambda b: SYSTEMS.index(split_who(b[1].who)[0])):
        system, affected = split_who(bug.who)
        found = cells(bug, columns) if bug.case else []
        held = holding(bug, columns)
        if held.in_matrix and not held.caught:
            passed = ", ".join(f"{c.label}{'' if c.outcome == 'pass' else f' ({c.outcome})'}"
                               for c in held.affected if c.outcome != "non-pass")  # fmt: skip
            notes.append(f"- `{bug.bug}` is not caught on {passed}: "
                         f"{bug.missed or 'not explained'}")  # fmt: skip
        for cell in held.flagged:
            notes.append(f"- `{bug.bug}` is not a pass on {cell.label}, which fixed it")
        uncaught += bool(bug.uncaught)
        rule_cell = f"no rule yet (proposed: `{rule_id}`)" if bug.rule else f"`{rule_id}`"
        case_cell = f"`{bug.case}`" if bug.case else f"none: {bug.uncaught or 'no rule yet'}"
        cols = (f"`{bug.bug}`", system, affected, bug.fixed_in, bug.does, bug.source,
                rule_cell, case_cell, _verdicts_text(bug, system, found, kinds_run))  # fmt: skip
        rows.append("| " + " | ".join(_escape(c) for c in cols) + " |")
    awaiting = sum(1 for _, bug in BUGS if bug.rule)
    caught, held_count, flagged = figure(columns)
    out = [
        "# The bug record",
        "",
        "<!-- Generated by `make docs` from kconform.rules and docs/matrix.json; edit the rule "
        "book, not this file. -->",
        "",
        "Every public KIP-511 / KIP-714 / KIP-977 bug or deviation on record for the brokers and "
        "clients kconform can run: the system, the releases affected and the first fixed, the "
        "behaviour, the public source, the rule it breaks (in [rules.md](rules.md)) and the case "
        "meant to catch it, with that case's verdict in each committed baseline of the system "
        "(`(affected)`: the bug's releases cover that subject's; a librdkafka bug is held to the "
        "librdkafka each subject's baseline records it bundled, as the library reported itself in "
        "the run, shown beside it). None is KIP-977's: no release "
        "implements it (apache/kafka#20397 was closed unmerged).",
        "",
        f"{len(BUGS)} bugs: {len(BUGS) - awaiting} filed under a rule, {awaiting} awaiting one, "
        f"{uncaught} that no case can catch. **{caught} of {held_count} public bugs caught in "
        f"the release that had them, {flagged} flagged in a release that fixed them**: "
        f"{held_count} have a case with a committed baseline on a release they affect, and "
        f"the case is not a pass on every such release for {caught}; a release named as "
        "fixing a bug must pass its case (`tests/rules/test_bugs.py` holds both). The others "
        "have no case, or no baseline yet on a release they affect (their system's releases "
        "are not in the matrix: the verdicts column says which).",
        *(["", "Where the matrix disagrees with the record:", "", *notes] if notes else []),
        "",
        "| bug | system | affected | fixed in | behaviour | source | rule | case | verdicts |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    return "\n".join(out) + "\n"


def render_from(paths: Iterable[Path]) -> str:
    """The page from old-style full baseline files (a test's own)."""
    return render_markdown(load_columns(paths))


def render_committed(baselines: Path = BASELINES) -> str:
    """The page from the measured matrix and its expectations (`make docs`)."""
    return render_markdown(matrix_columns(baselines))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else Path("docs/bugs.md")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_committed(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
