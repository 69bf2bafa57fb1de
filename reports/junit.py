"""JUnit XML for CI systems: one testsuite per subject, one testcase per case.

CI dashboards (Jenkins, GitLab, GitHub annotations) understand JUnit and nothing else, so the
file says what CI should act on: a `<failure>` exactly where the run fails (see
`common.fails_run`), an `<error>` where the harness could not decide, `<skipped>` for
unsupported/skipped cases, and the kconform verdict, level and spec reference as properties so
nothing is lost in translation. Shape: the common Jenkins/Ant schema (tests, failures, errors,
skipped, time on every testsuite).
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from kconform.engine.results import CaseResult
from kconform.reports.common import (
    SKIP_VERDICTS,
    VERDICT_MEANING,
    Subject,
    fails_run,
    failure_reason,
    printable,
    subjects,
)
from kconform.reports.model import RunResults

WIRE_LINES_IN_FAILURE = 20


def write_junit(results: RunResults, path: Path) -> None:
    """Write `results` as JUnit XML to `path` (parent directories created, replaced atomically)."""
    root = junit_tree(results)
    ET.indent(root, space=" ")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
    tmp.replace(path)


def junit_tree(results: RunResults) -> ET.Element:
    """The `<testsuites>` element; separate from writing so tests and tools can inspect it."""
    root = ET.Element("testsuites", name="kconform")
    by_subject: dict[str, list[CaseResult]] = {}
    for result in results.results:
        by_subject.setdefault(result.subject, []).append(result)
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    total_time = 0.0
    for subject in subjects(results):
        suite = _testsuite(results, subject.name, by_subject.get(subject.name, []))
        _suite_properties(suite, subject)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
        total_time += float(suite.get("time", "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{total_time:.3f}")
    root.set("timestamp", _iso(results.started))
    if results.interrupted:
        # No schema slot for "the run stopped early"; an error testcase makes CI notice it.
        suite = ET.SubElement(
            root,
            "testsuite",
            name="kconform.run",
            tests="1",
            failures="0",
            errors="1",
            skipped="0",
            time="0.000",
            timestamp=_iso(results.started),
        )
        case = ET.SubElement(suite, "testcase", classname="kconform.run", name="completed")
        ET.SubElement(
            case, "error", message="run interrupted: results are partial", type="interrupted"
        )
        root.set("tests", str(totals["tests"] + 1))
        root.set("errors", str(totals["errors"] + 1))
    return root


def _testsuite(results: RunResults, name: str, cases: list[CaseResult]) -> ET.Element:
    suite = ET.Element("testsuite", name=printable(name))
    counts = dict.fromkeys(("failures", "errors", "skipped"), 0)
    for result in cases:
        case = _testcase(result)
        suite.append(case)
        outcome = case.find("failure")
        if case.find("error") is not None:
            counts["errors"] += 1
        elif outcome is not None:
            counts["failures"] += 1
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
    started = min((r.started for r in cases if r.started), default=results.started)
    suite.set("tests", str(len(cases)))
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{sum(r.duration for r in cases):.3f}")
    suite.set("timestamp", _iso(started))
    suite.set("hostname", printable(socket.gethostname()))
    return suite


def _suite_properties(suite: ET.Element, subject: Subject) -> None:
    props = ET.Element("properties")
    for name, value in (
        ("subject_kind", subject.kind),
        ("implementation", subject.implementation),
        ("version", subject.version),
        ("capabilities", ",".join(subject.capabilities)),
        *([("lock", subject.lock)] if subject.lock else []),
    ):
        ET.SubElement(props, "property", name=name, value=printable(value))
    suite.insert(0, props)


def _testcase(result: CaseResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=printable(result.subject),
        name=printable(result.case_id),
        time=f"{result.duration:.3f}",
    )
    props = ET.SubElement(case, "properties")
    for name, value in (
        ("level", result.level),
        ("verdict", result.verdict),
        ("spec", result.spec_ref),
        ("kip", result.kip),
        ("title", result.title),
        ("baseline", result.baseline),
        ("baseline_why", result.baseline_why),
    ):
        if value is not None:
            ET.SubElement(props, "property", name=name, value=printable(value))
    if fails_run(result):
        tag = "error" if result.verdict == "error" and result.baseline is None else "failure"
        outcome = ET.SubElement(
            case, tag, message=printable(_headline(result)), type=result.verdict
        )
        outcome.text = printable(failure_body(result))
    elif result.verdict in SKIP_VERDICTS:
        reason = result.message or VERDICT_MEANING[result.verdict]
        message = f"{result.verdict}: {reason}"
        ET.SubElement(case, "skipped", message=printable(message), type=result.verdict)
    elif result.message or result.verdict != "pass":
        # non-strict / informational / expected-by-baseline: passing, but worth reading
        out = ET.SubElement(case, "system-out")
        out.text = printable(failure_body(result))
    return case


def _headline(result: CaseResult) -> str:
    first_bad = next((e for e in result.expectations if not e.ok), None)
    detail = result.message or (
        f"{first_bad.what}: expected {first_bad.expected!r}, observed {first_bad.observed!r}"
        if first_bad
        else ""
    )
    head = f"[{result.level}] {failure_reason(result)}"
    return f"{head}: {detail}"[:500] if detail else head


def failure_body(result: CaseResult, wire_lines: int = WIRE_LINES_IN_FAILURE) -> str:
    """Expected vs observed and the last wire-log lines: enough to act without the HTML."""
    lines = [
        f"{result.case_id} [{result.level}] on {result.subject} "
        f"({result.implementation} {result.version}): {failure_reason(result)}",
        f"  {result.title}",
        f"  spec: {result.spec_ref}",
    ]
    if result.message:
        lines.append(f"  message: {result.message}")
    # the violated expectations first: they are why this text exists
    for e in sorted(result.expectations, key=lambda e: e.ok):
        mark = "ok " if e.ok else "BAD"
        lines.append(f"  {mark} {e.what}: expected {e.expected!r}, observed {e.observed!r}")
    log = result.wire_log[-wire_lines:]
    if log:
        skipped = len(result.wire_log) - len(log)
        lines.append(
            f"  wire log (last {len(log)} of {len(result.wire_log)}):" if skipped else "  wire log:"
        )
        first = result.wire_log[0].get("monotonic", 0.0)
        for entry in log:
            at = f"+{(float(entry.get('monotonic', first)) - first) * 1000:.3f}ms"
            note = f"  [{entry['note']}]" if entry.get("note") else ""
            lines.append(
                f"    {at:>12} {entry.get('connection', '')} "
                f"{entry.get('direction', ''):<15} {str(entry.get('summary', ''))[:200]}"
                f"{note}"
            )
    return "\n".join(lines)


def _iso(unix: float | None) -> str:
    if not unix:
        return datetime.fromtimestamp(0, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%S")
