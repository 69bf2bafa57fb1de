"""JaCoCo XML reports read into what the coverage section shows, and per-case attribution.

`parse_xml` reads one `jacococli report --xml` file: per class its methods and counters, per
source file its lines (`mi`/`ci` missed and covered instructions, `mb`/`cb` missed and covered
branches). `attribute` merges the per-case reports into the run's: for each line of the run's
report, the cases whose own report reached it (and how many of its branches). The run's
report is not the union of the cases' reports: which of a line's branches were taken is only
known from probes, so the run's counters come from JaCoCo over all the dumps at once.

`build_model` keeps what the report needs, restricted to the chosen classes and methods
(`fixtures/coverage/selection.py`), as plain JSON-ready data.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconform.fixtures.coverage.accounted import BROKER, Accounting
from kconform.fixtures.coverage.selection import BROKER_CLASSES, Chosen, chosen_for, lambda_owner

COUNTERS = ("INSTRUCTION", "BRANCH", "LINE", "METHOD")


@dataclass(frozen=True)
class Line:
    nr: int
    mi: int
    ci: int
    mb: int
    cb: int

    @property
    def status(self) -> str:
        """JaCoCo's colours: covered, partly covered (a branch or an instruction missed), missed."""
        if self.ci == 0:
            return "missed"
        return "partly" if self.mb or self.mi else "covered"


@dataclass(frozen=True)
class Method:
    name: str
    desc: str
    line: int  # first line, 0 when the class has no line numbers
    counters: Mapping[str, tuple[int, int]]  # type -> (missed, covered)


@dataclass(frozen=True)
class ClassCoverage:
    name: str  # JVM name
    sourcefile: str  # "package/File.java"
    methods: tuple[Method, ...]


@dataclass
class Report:
    classes: dict[str, ClassCoverage] = field(default_factory=dict)
    lines: dict[str, dict[int, Line]] = field(default_factory=dict)  # sourcefile -> nr -> Line

    def reached(self) -> set[tuple[str, int]]:
        return {(f, nr) for f, lines in self.lines.items() for nr, ln in lines.items() if ln.ci}


def _counters(element: ET.Element) -> dict[str, tuple[int, int]]:
    return {
        c.get("type", ""): (int(c.get("missed", "0")), int(c.get("covered", "0")))
        for c in element.findall("counter")
    }


def parse_xml(source: Path | bytes) -> Report:
    """One JaCoCo XML report (its DOCTYPE is not fetched: ElementTree resolves no entities)."""
    root = ET.fromstring(source) if isinstance(source, bytes) else ET.parse(source).getroot()
    report = Report()
    for package in root.iter("package"):
        folder = package.get("name", "")
        for cls in package.findall("class"):
            sourcefile = f"{folder}/{cls.get('sourcefilename', '')}"
            methods = tuple(
                Method(m.get("name", ""), m.get("desc", ""), int(m.get("line", "0")), _counters(m))
                for m in cls.findall("method")
            )
            report.classes[cls.get("name", "")] = ClassCoverage(
                cls.get("name", ""), sourcefile, methods
            )
        for src in package.findall("sourcefile"):
            lines = report.lines.setdefault(f"{folder}/{src.get('name', '')}", {})
            for ln in src.findall("line"):
                nr = int(ln.get("nr", "0"))
                lines[nr] = Line(nr, *(int(ln.get(k, "0")) for k in ("mi", "ci", "mb", "cb")))
    return report


def attribute(
    case_reports: Iterable[tuple[str, Report]],
) -> dict[tuple[str, int], list[tuple[str, int]]]:
    """(sourcefile, line) -> [(case, branches it covered on that line)] for each reached line."""
    out: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for case, report in case_reports:
        for sourcefile, lines in report.lines.items():
            for nr, ln in lines.items():
                if ln.ci:
                    out.setdefault((sourcefile, nr), []).append((case, ln.cb))
    return out


def method_spans(report: Report) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(class, method, desc) -> (first, last) source line, lambdas left out of the bounds.

    JaCoCo gives each method's first line only; a method runs to the line before the next
    method (of any class of the same file) begins, and no further than the line after its
    last line of code (its closing brace): a class chosen without its inner classes has no
    methods of theirs to end a span, and their code is no part of the method before them. A
    compiled lambda (`$anonfun$m$1`, `lambda$m$0`) lies inside its method, so it ends no
    span."""
    by_file: dict[str, list[tuple[int, str, str, str]]] = {}
    for owner in report.classes.values():
        for m in owner.methods:
            if m.line and lambda_owner(m.name) == m.name:
                by_file.setdefault(owner.sourcefile, []).append(
                    (m.line, owner.name, m.name, m.desc)
                )
    spans: dict[tuple[str, str, str], tuple[int, int]] = {}
    for sourcefile, starts in by_file.items():
        starts.sort()
        last_line = max(report.lines.get(sourcefile, {0: Line(0, 0, 0, 0, 0)}))
        for i, (line, cls, name, desc) in enumerate(starts):
            end = starts[i + 1][0] - 1 if i + 1 < len(starts) else last_line
            code = [nr for nr in report.lines.get(sourcefile, {}) if line <= nr <= end]
            end = min(end, max(code, default=line) + 1)
            spans[(cls, name, desc)] = (line, max(line, end))
    return spans


def _add(total: dict[str, list[int]], counters: Mapping[str, tuple[int, int]]) -> None:
    for kind in COUNTERS:
        missed, covered = counters.get(kind, (0, 0))
        pair = total.setdefault(kind, [0, 0])
        pair[0] += missed
        pair[1] += covered


def build_model(
    run: Report,
    attribution: Mapping[tuple[str, int], list[tuple[str, int]]],
    *,
    sources: Mapping[str, str | None],
    chosen: tuple[Chosen, ...] = BROKER_CLASSES,
) -> dict[str, Any]:
    """The chosen classes and methods of `run`: counters, lines with their cases, source text
    (`sources`: sourcefile -> text, None when the release's sources jar is not to be had)."""
    spans = method_spans(run)
    classes: list[dict[str, Any]] = []
    files: dict[str, dict[str, Any]] = {}
    for name in sorted(run.classes):
        entry = chosen_for(name, chosen)
        if entry is None:
            continue
        cls = run.classes[name]
        grouped: dict[str, dict[str, Any]] = {}  # a method and its lambdas together
        for m in cls.methods:
            owner = lambda_owner(m.name)
            if not entry.covers_method(m.name):
                continue
            # a method, its overloads and its lambdas are one row: the source reads that way
            group = grouped.setdefault(owner, {"name": owner, "counters": {}, "lines": []})
            _add(group["counters"], m.counters)
            span = spans.get((name, m.name, m.desc))
            if span is not None:
                group["lines"].append(list(span))
        methods = list(grouped.values())
        for g in methods:
            g["lines"] = _merged(g["lines"])
            text = sources.get(cls.sourcefile)
            file = files.setdefault(cls.sourcefile, {"lines": {}, "source": text is not None})
            for first, last in g["lines"]:
                for nr in range(first, last + 1):
                    ln = run.lines.get(cls.sourcefile, {}).get(nr)
                    row: dict[str, Any] = {"text": _source_line(text, nr)}
                    if ln is not None:
                        reached = attribution.get((cls.sourcefile, nr), [])
                        row.update(mi=ln.mi, ci=ln.ci, mb=ln.mb, cb=ln.cb, status=ln.status,
                                   cases=[[c, b] for c, b in reached])  # fmt: skip
                    file["lines"][str(nr)] = row
        total: dict[str, list[int]] = {}
        for g in methods:
            _add(total, {k: (v[0], v[1]) for k, v in g["counters"].items()})
        methods.sort(key=lambda g: g["lines"][0][0] if g["lines"] else 0)
        classes.append({"name": name, "sourcefile": cls.sourcefile, "why": entry.why,
                        "all_methods": not entry.methods, "counters": total,
                        "methods": methods})  # fmt: skip
    totals: dict[str, list[int]] = {}
    for c in classes:
        _add(totals, {k: (v[0], v[1]) for k, v in c["counters"].items()})
    return {"classes": classes, "files": files, "totals": totals}


def _merged(spans: list[list[int]]) -> list[list[int]]:
    """Sorted spans, overlapping or touching ones joined (a lambda's span lies in its method's)."""
    out: list[list[int]] = []
    for first, last in sorted(spans):
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return out


def _source_line(text: str | None, nr: int) -> str | None:
    if text is None:
        return None
    lines = text.splitlines()
    return lines[nr - 1] if 0 < nr <= len(lines) else ""


def missed_branches(model: Mapping[str, Any]) -> list[tuple[str, str, int, int, int]]:
    """(class, method, line, missed, covered) for every line of the chosen methods with a
    missed branch."""
    out = []
    for cls in model["classes"]:
        lines = model["files"].get(cls["sourcefile"], {}).get("lines", {})
        for m in cls["methods"]:
            for first, last in m["lines"]:
                for nr in range(first, last + 1):
                    row = lines.get(str(nr), {})
                    if row.get("mb"):
                        out.append((cls["name"], m["name"], nr, row["mb"], row["cb"]))
    return sorted(set(out))


def account(
    model: Mapping[str, Any], release: str, accounting: Accounting = BROKER
) -> list[dict[str, Any]]:
    """Every line of the chosen methods with a missed branch, with the entries of the subject's
    reviewed list (`fixtures/coverage/accounted.py` for the broker, `client_accounted.py` for
    the Java client) that say why (`unaccounted`: the branches no entry accounts for)."""
    known = accounting.missed_on(release)
    out = []
    for cls, method, nr, missed, covered in missed_branches(model):
        entries = known.get((cls, nr), [])
        listed = sum(e.branches for e in entries)
        out.append({"class": cls, "method": method, "line": nr, "missed": missed,
                    "covered": covered, "unaccounted": max(0, missed - listed),
                    "why": [[e.kind, e.branches, e.why] for e in entries]})  # fmt: skip
    return out
