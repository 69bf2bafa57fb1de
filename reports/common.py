"""What every report writer agrees on: which results fail a run, subject order, KIP groups.

The rule that decides CI lives here once, mirroring the plugin's `_set_outcome`: with a baseline
a result fails the run when its verdict differs from the baseline; without one, on fail/error.
JUnit, HTML and the terminal summary must never disagree about whether a run passed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kconform.engine.results import CaseResult
from kconform.reports.model import VERDICTS, RunResults, baseline_allows, baseline_verdicts
from kconform.rules import BAD_VERDICTS

SKIP_VERDICTS = frozenset({"unsupported", "not-applicable", "skipped"})
"""Verdicts that judged nothing: a run made only of these has not tested its subject."""

VERDICT_SHORT = {
    "pass": "pass",
    "fail": "FAIL",
    "non-strict": "non-strict",
    "informational": "info",
    "unsupported": "unsupp.",
    "not-applicable": "n/a",
    "skipped": "skip",
    "error": "ERROR",
}

VERDICT_MEANING = {
    "pass": "the subject did what the spec requires",
    "fail": "a MUST rule was violated",
    "non-strict": "a SHOULD rule was not followed (allowed, but noted)",
    "informational": "recorded what the subject chose where the KIP leaves a choice",
    "unsupported": "the subject lacks a capability the case needs",
    "not-applicable": "the subject did not meet a precondition of the case (the message says)",
    "skipped": "the case did not run (e.g. the target was unavailable)",
    "error": "the harness could not decide (undecodable reply, timeout, crash)",
}

VERDICT_LEGEND = {
    "pass": "meets the spec",
    "fail": "MUST violated",
    "non-strict": "SHOULD not followed",
    "informational": "choice recorded",
    "unsupported": "capability missing",
    "not-applicable": "precondition not met",
    "skipped": "did not run",
    "error": "harness could not decide",
}

LEVEL_MEANING = {
    "MUST": "a violation is a fail and fails the run",
    "SHOULD": "a violation is non-strict: reported, never fails the run",
    "INFO": "no right answer: the observed behaviour is recorded (informational)",
}


def fails_run(result: CaseResult) -> bool:
    """Whether this result makes CI fail (baseline difference, or fail/error without one).

    `not-applicable` never does: the subject did not bring about what the case judges (a slow
    client that had not pushed yet, one broker where two are needed), which is no evidence of a
    regression; the changed-verdicts view still lists it against the baseline.
    """
    if result.verdict == "not-applicable":
        return False
    if result.baseline is not None:
        return not baseline_allows(result.baseline, result.verdict)
    return result.verdict in BAD_VERDICTS


LOUD_VERDICTS = frozenset({"fail", "error", "non-strict"})
"""Verdicts a reader must notice; drawn muted, as expected, where a baseline expects them."""


def expected_non_pass(result: CaseResult) -> bool:
    """A fail, error or non-strict that the subject's baseline expects (a known deviation, as
    the librdkafka mock's): shown apart from an unexpected one, which is what breaks CI."""
    return (
        result.verdict in LOUD_VERDICTS
        and result.baseline is not None
        and baseline_allows(result.baseline, result.verdict)
    )


def failure_reason(result: CaseResult) -> str:
    """One line saying why a result fails the run, as the plugin words it; an `error` says its
    cause (a subject that could not be set up), which is what a reader must act on."""
    said = f"verdict {result.verdict}"
    if result.baseline is not None:
        said += f", baseline says {' or '.join(baseline_verdicts(result.baseline))}"
    cause = _one_line(result.message)
    if result.verdict == "error" and cause:
        said += f": {cause[:MAX_CAUSE]}{'…' if len(cause) > MAX_CAUSE else ''}"
    return said


MAX_CAUSE = 200
"""The characters of an error's cause that `failure_reason` shows (the case page has it all)."""


def run_passes(results: RunResults) -> bool:
    """Would CI pass? Interrupted runs never pass (what did not run was not checked), nor do
    runs that judged nothing."""
    return (
        not results.interrupted
        and not any(fails_run(r) for r in results.results)
        and not_judged(results) is None
    )


def interruption(results: RunResults) -> str:
    """How far an interrupted run got: "after 3 of 68 planned case runs" (runs that recorded
    no count, from before it was kept: "after 3 case runs")."""
    counts = {str(p.get("name")): p.get("cases") for p in results.planned}
    done = len(results.results)
    if counts and all(isinstance(n, int) for n in counts.values()):
        planned = sum(n for n in counts.values() if isinstance(n, int))
        return f"after {done} of {planned} planned case runs"
    return f"after {done} case run{'s' if done != 1 else ''}"


def not_judged(results: RunResults) -> str | None:
    """Why the run cannot pass on what it judged, in one line: it judged nothing
    (`nothing_judged`), or some subject not at all (`subjects_not_run`); None otherwise."""
    return nothing_judged(results) or subjects_not_run(results)


def subjects_not_run(results: RunResults) -> str | None:
    """The subjects the run judged nothing about (every case unsupported, not applicable or
    skipped, or none run: the target unavailable, the client not installed or never reaching
    what the cases judge), with the first reason given; None when there is none. A run asked
    to judge `apache:9.9.9` must not pass on the clients it judged beside it."""
    parts = []
    for subject in subjects(results):
        if not subject.not_run:
            continue
        found = (r for r in results.results if r.subject == subject.name and r.message.strip())
        why = next((_one_line(r.message) for r in found), "")
        tally = ", ".join(f"{n} {v}" for v, n in subject.counts.items() if n) or "no case ran"
        parts.append(f"{subject.name} ({tally}{': ' + why if why else ''})")
    return f"not judged at all: {'; '.join(parts)}" if parts else None


def _one_line(message: str) -> str:
    """A result's message on one line, whole: a skip reason's hint (what to install, which
    flag to pass) comes last, and these are the console's last lines."""
    return " ".join(message.split())


def nothing_judged(results: RunResults) -> str | None:
    """Why this run judged nothing, in one line; None when at least one case was judged.

    Judged means a verdict outside SKIP_VERDICTS (unsupported, not-applicable, skipped): a run
    made only of those, or of no result at all, has not tested its subjects and must not pass.
    """
    if any(r.verdict not in SKIP_VERDICTS for r in results.results):
        return None
    if not results.results:
        return (
            "no case was judged: no case produced a result (none matched --cases, --level or "
            "-k, or none could start)"
        )
    counts: dict[str, int] = {}
    for result in results.results:
        counts[result.verdict] = counts.get(result.verdict, 0) + 1
    tally = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    reasons = list(dict.fromkeys(" ".join(r.message.split()) for r in results.results))
    reasons = [r for r in reasons if r]
    why = ""
    if reasons:
        first = _one_line(reasons[0])
        more = f" (and {len(reasons) - 1} other reasons)" if len(reasons) > 1 else ""
        why = f"; {first}{more}"
    return f"no case was judged: {len(results.results)} case runs, {tally}{why}"


@dataclass
class Subject:
    """A target or client as the reports show it: self-description plus its verdict counts."""

    name: str
    kind: str = "broker"
    implementation: str = ""
    version: str = ""
    capabilities: list[str] = field(default_factory=list)
    lock: str = ""  # digest of the dependency lock it was built from (fixtures.lockfiles)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    # of those counts, the non-passes (fail, error, non-strict) a baseline expects
    expected: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    failing: list[CaseResult] = field(default_factory=list)
    time: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def judged(self) -> int:
        """Its results with a verdict outside SKIP_VERDICTS."""
        return sum(n for v, n in self.counts.items() if v not in SKIP_VERDICTS)

    @property
    def not_run(self) -> bool:
        """Nothing judged about it: every case unsupported, not applicable or skipped, or none
        run at all (`subjects_not_run`); NOT RUN in every report, and the run cannot pass."""
        return self.judged == 0

    @property
    def heading(self) -> str:
        """What a report heads its row or column with: a driver named by its file path
        (`command:/home/me/driver.js`) by what it said it is, the path being a detail."""
        return named_for_people(self.name, self.implementation, self.version)

    def unexpected(self, verdict: str) -> int:
        """Its results with this verdict that no baseline expects."""
        return self.counts.get(verdict, 0) - self.expected.get(verdict, 0)


def named_for_people(name: str, implementation: str, version: str) -> str:
    """`name`, unless it is a file path, then what the subject said it is (`kafkajs 2.2.4`)."""
    if "/" not in name or not implementation:
        return name
    return implementation_and_version(implementation, version)


def implementation_and_version(implementation: str, version: str) -> str:
    """`kafkajs 2.2.4`; the implementation alone when the version is unknown or already in it."""
    if version and version != "unknown" and not implementation.endswith(version):
        return f"{implementation} {version}"
    return implementation


def subjects(results: RunResults) -> list[Subject]:
    """Subjects in run order, brokers before clients; results for undescribed subjects count too.

    A described target without a single result was an instrument, not a subject: the reference
    the client cases run against beside `--target apache:...`. Listed, it read as a broker judged
    "ok" on nothing. A planned subject (some selected case runs against it) is listed even
    without a result: an interrupted run had not reached it, and it shows as NOT RUN."""
    by_name: dict[str, Subject] = {}
    for described in results.subjects:
        name = str(described.get("name", ""))
        by_name.setdefault(name, _subject_from(described))
    for result in results.results:
        subject = by_name.get(result.subject)
        if subject is None:
            subject = by_name[result.subject] = Subject(
                result.subject, result.subject_kind, result.implementation, result.version
            )
        subject.kind = result.subject_kind or subject.kind
        subject.implementation = subject.implementation or result.implementation
        subject.version = subject.version or result.version
        subject.counts[result.verdict] = subject.counts.get(result.verdict, 0) + 1
        if expected_non_pass(result):
            subject.expected[result.verdict] = subject.expected.get(result.verdict, 0) + 1
        subject.time += result.duration
        if fails_run(result):
            subject.failing.append(result)
    planned = {str(p.get("name", "")): str(p.get("kind") or "broker") for p in results.planned}
    for name, kind in planned.items():  # selected, but none of its cases ran (interrupted)
        by_name.setdefault(name, Subject(name, kind))
    ordered = [s for s in by_name.values() if s.total or s.name in planned]
    return sorted(ordered, key=lambda s: 0 if s.kind == "broker" else 1)  # stable within a kind


def _subject_from(described: dict[str, Any]) -> Subject:
    caps = described.get("capabilities") or []
    return Subject(
        name=str(described.get("name", "")),
        kind=str(described.get("kind", "broker")),
        implementation=str(described.get("implementation", "")),
        version=str(described.get("version", "")),
        capabilities=sorted(str(c) for c in caps),
        lock=str(described.get("lock") or ""),
    )


def kip_of(result: CaseResult) -> str:
    """The group a case belongs to: its KIP, else the first part of its id (fuzz, volumes...)."""
    return result.kip or result.case_id.split(".", 1)[0]


def kip_sort_key(kip: str) -> tuple[int, int, str]:
    """KIPs by number first (KIP-511 < KIP-714 < KIP-977), then other groups by name."""
    match = re.fullmatch(r"(?i)kip-?(\d+)", kip)
    return (0, int(match.group(1)), "") if match else (1, 0, kip.lower())


def case_groups(results: Iterable[CaseResult]) -> dict[str, dict[str, dict[str, CaseResult]]]:
    """{kip: {case_id: {subject: result}}}, KIPs and cases sorted; the last result of a key wins."""
    groups: dict[str, dict[str, dict[str, CaseResult]]] = {}
    for result in results:
        groups.setdefault(kip_of(result), {}).setdefault(result.case_id, {})[result.subject] = (
            result
        )
    return {kip: dict(sorted(groups[kip].items())) for kip in sorted(groups, key=kip_sort_key)}


@dataclass(frozen=True)
class Change:
    """A verdict that moved: since the previous run, or away from the baseline."""

    case_id: str
    subject: str
    old: str | None  # None: the case is new
    new: str | None  # None: the case did not run this time
    against: str  # "previous run" or "baseline"


def changes(
    results: RunResults,
    previous: RunResults | None = None,
    baseline: dict[str, dict[str, str]] | None = None,
) -> list[Change]:
    """Verdict changes against the previous run and the baseline (given or recorded per case)."""
    found: list[Change] = []
    current = {r.key: r for r in results.results}
    if previous is not None:
        before = {r.key: r for r in previous.results}
        for key, result in current.items():
            old = before.get(key)
            if old is None or old.verdict != result.verdict:
                found.append(
                    Change(*key, old.verdict if old else None, result.verdict, "previous run")
                )
        if not results.interrupted:  # a partial run did not drop the cases it never reached
            found += [
                Change(*key, old.verdict, None, "previous run")
                for key, old in before.items()
                if key not in current
            ]
    for key, result in current.items():
        expected = result.baseline
        if baseline is not None and result.case_id in baseline.get(result.subject, {}):
            expected = baseline[result.subject][result.case_id]
        if expected is not None and not baseline_allows(expected, result.verdict):
            found.append(Change(*key, expected, result.verdict, "baseline"))
    return sorted(found, key=lambda c: (c.against, c.case_id, c.subject))


def slug(text: str) -> str:
    """A file-name and URL-fragment safe form of an id (case ids already are; subjects have ':')."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")
    return cleaned or "_"


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def printable(text: object) -> str:
    """Text safe for XML 1.0 and HTML: control characters shown as \\xNN, never dropped."""
    return _XML_BAD.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
