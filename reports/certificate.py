"""`kconform certify`'s certificate: one headline and one exit code per client, the same in the
terminal, the HTML report's first screen, `certificate.json` and the badge.

The headline, decided once here (`decide`):

- CONFORMS (exit 0): every MUST case judged passed, and enough was judged to say so.
- DOES NOT CONFORM (exit 1): a MUST case failed; the rules it breaks are named. A case left
  not-applicable because it needs what a failed rule requires (a `needs` its precondition
  declared: ApiVersions v3+ for a client failing `kip511.client.software_identity`) is that
  failure's consequence, listed under it, never a reason for INCOMPLETE. A MUST failure is
  proven whatever else went wrong, so driver faults or unjudged cases beside it are listed
  but do not hide it.
- INCOMPLETE (exit 2): the harness could not judge: the run was interrupted (always, even with
  failures found: what had not run was not checked), nothing was judged, a case ended in
  `error` (a driver fault, a crash), more than INCOMPLETE_SHARE of the cases the client's
  capabilities cover were not judged for reasons other than a failed rule, or the wire
  contradicts a "no telemetry" claim that had KIP-714 cases skipped as unsupported
  (`reports.claims`): those cases were never judged, on a claim shown false.

Whether the verdicts match a recorded baseline is the separate `baseline` line; it never
changes the headline (`kconform run` is the command whose exit code follows baselines).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kconform.engine.results import CaseResult
from kconform.exit_codes import EXIT_CONFORMS, EXIT_DOES_NOT_CONFORM, EXIT_INCOMPLETE
from kconform.reports.claims import Contradiction, contradictions
from kconform.reports.common import implementation_and_version, interruption
from kconform.reports.model import RunResults, baseline_allows, read_baseline
from kconform.reports.text import shorten
from kconform.rules import RULES
from kconform.rules.digest import book_digest

__all__ = ["JUDGED", "Certificate", "NotJudged", "certify", "exit_code", "render_text"]

CONFORMS, DOES_NOT_CONFORM, INCOMPLETE = "CONFORMS", "DOES NOT CONFORM", "INCOMPLETE"
EXIT = {
    CONFORMS: EXIT_CONFORMS,
    DOES_NOT_CONFORM: EXIT_DOES_NOT_CONFORM,
    INCOMPLETE: EXIT_INCOMPLETE,
}
JUDGED = frozenset({"pass", "fail", "non-strict", "informational"})
"""The one definition of a judged case: every other verdict (unsupported, not-applicable,
skipped, error) is not judged, in the terminal, the HTML and the JSON alike."""
INCOMPLETE_SHARE = 0.25
"""More than this share of a client's cases (`unsupported` ones and a failed rule's
consequences aside) not judged, and the certificate is INCOMPLETE."""
FORMAT = 1  # certificate.json's format; a field is only ever added
GROUPED_FROM = 3
"""More cases than this not judged for the same reason are one terminal line (a client without
telemetry has some 60 `unsupported` KIP-714 cases: one line, not a screenful)."""


@dataclass(frozen=True)
class NotJudged:
    """A case not judged: its verdict, why (whole), and the failed case it follows from."""

    case_id: str
    verdict: str
    reason: str
    consequence_of: str = ""  # the failed case whose rule this case's precondition needs
    rule: str = ""  # that rule's id


@dataclass
class Certificate:
    """One client's certificate (`certificate.json` is `to_json` of these)."""

    subject: str  # the run's label for the client (a `command:` driver's path)
    identity: str  # implementation and version, as `--describe` or the kind says
    capabilities: list[str]
    kconform_version: str
    rule_book: str
    headline: str
    exit_code: int
    why: str  # the headline's reason in one line
    cases: int
    judged: int
    must: dict[str, int]  # {"passed": n, "failed": n}
    should: dict[str, int]
    failed_must: dict[str, list[str]]  # {rule id: [failed case ids]}
    not_judged: list[NotJudged] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    baseline: str = ""

    @property
    def counted(self) -> str:
        """The one count every output shows: judged 3, not judged 7 (7 not-applicable)."""
        tally = _tally(self.not_judged)
        return f"judged {self.judged}, not judged {len(self.not_judged)}" + (
            f" ({tally})" if tally else ""
        )

    @property
    def consequences(self) -> list[NotJudged]:
        return [n for n in self.not_judged if n.consequence_of]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["client"] = {"name": self.subject, "identity": self.identity,
                          "capabilities": self.capabilities}  # fmt: skip
        for key in ("subject", "identity", "capabilities"):
            del data[key]
        return data


def certify(results: RunResults, baselines: Sequence[Path] = ()) -> list[Certificate]:
    """A certificate per client of the run (planned or with results), in name order."""
    names = {r.subject for r in results.results if r.subject_kind == "client"}
    names |= {str(p.get("name")) for p in results.planned if p.get("kind") == "client"}
    digest = book_digest(RULES.values())
    return [_certificate(results, name, digest, baselines) for name in sorted(names)]


def exit_code(certificates: Sequence[Certificate]) -> int:
    """The worst of the certificates' exit codes; INCOMPLETE (2) when there is none."""
    return max((c.exit_code for c in certificates), default=int(EXIT_INCOMPLETE))


def _certificate(
    results: RunResults, subject: str, digest: str, baselines: Sequence[Path]
) -> Certificate:
    mine = [r for r in results.results if r.subject == subject]
    described = next((s for s in results.subjects if s.get("name") == subject), {})
    judged = [r for r in mine if r.verdict in JUDGED]
    failed = [r for r in judged if r.level == "MUST" and r.verdict == "fail"]
    failed_must: dict[str, list[str]] = {}
    for r in failed:
        for rule in r.rules or [r.case_id]:
            failed_must.setdefault(rule, []).append(r.case_id)
    must = [r for r in judged if r.level == "MUST"]
    should = [r for r in judged if r.level == "SHOULD"]
    passed = sum(r.verdict == "pass" for r in should)
    cert = Certificate(
        subject=subject,
        identity=identity(subject, described, mine),
        capabilities=sorted(str(c) for c in described.get("capabilities") or []),
        kconform_version=results.kconform_version,
        rule_book=digest,
        headline=CONFORMS,
        exit_code=int(EXIT_CONFORMS),
        why="",
        cases=len(mine),
        judged=len(judged),
        must={"passed": len(must) - len(failed), "failed": len(failed)},
        should={"passed": passed, "failed": len(should) - passed},
        failed_must=failed_must,
        not_judged=[_not_judged(r, mine) for r in mine if r.verdict not in JUDGED],
        contradictions=contradictions(results, subject),
        baseline=baseline_line(mine, subject, baselines),
    )
    cert.headline, cert.why = decide(results, cert)
    cert.exit_code = int(EXIT[cert.headline])
    return cert


def decide(results: RunResults, cert: Certificate) -> tuple[str, str]:
    """The headline and its reason (the module docstring says why in this order)."""
    failed = ", ".join(cert.failed_must)
    if results.interrupted:
        found = f"; MUST rules failed so far: {failed}" if failed else ""
        return INCOMPLETE, f"the run was interrupted {interruption(results)}{found}"
    if cert.failed_must:
        return DOES_NOT_CONFORM, f"MUST rules failed: {failed}"
    if not cert.judged:
        return INCOMPLETE, f"nothing judged: {_tally(cert.not_judged) or 'no case ran'}"
    errors = [n for n in cert.not_judged if n.verdict == "error"]
    if errors:
        return INCOMPLETE, (f"{len(errors)} case{'s' * (len(errors) != 1)} ended in a harness "
                            f"or driver error ({errors[0].case_id})")  # fmt: skip
    wrongly_skipped = [c for c in cert.contradictions if c.skipped]
    if wrongly_skipped:
        return INCOMPLETE, f"{wrongly_skipped[0].text}: the cases it skipped were not judged"
    open_ = [n for n in cert.not_judged if not n.consequence_of and n.verdict != "unsupported"]
    covered = cert.judged + len(open_)
    if len(open_) > INCOMPLETE_SHARE * covered:
        return INCOMPLETE, (f"{len(open_)} of the {covered} cases its capabilities cover were "
                            "not judged")  # fmt: skip
    return CONFORMS, f"every MUST case judged passed ({cert.must['passed']})"


def identity(subject: str, described: dict[str, Any], mine: Sequence[CaseResult]) -> str:
    """What the client said it is (confluent-kafka-python (librdkafka 2.16.0) 2.16.1), else
    its kind's name; never a driver's file path (that is the `client.name` detail)."""
    implementation = str(described.get("implementation") or "") or next(
        (r.implementation for r in mine if r.implementation), ""
    )
    version = str(described.get("version") or "")
    version = version or next((r.version for r in mine if r.version), "")
    if not implementation:
        kind = subject.split(":", 1)[0] if ":" in subject else subject
        implementation = f"{kind} driver" if "/" in subject or ":" in subject else kind
    return implementation_and_version(implementation, version)


def _not_judged(result: CaseResult, mine: Sequence[CaseResult]) -> NotJudged:
    """Why `result` was not judged; a consequence when its `needs` names a rule a failed case of
    the same client judges."""
    reason = " ".join(result.message.split()) or f"verdict {result.verdict}"
    if result.verdict == "not-applicable" and result.needs:
        cause = next((r for r in mine if r.verdict == "fail" and result.needs in r.rules), None)
        if cause is not None:
            return NotJudged(result.case_id, result.verdict, reason, cause.case_id, result.needs)
    return NotJudged(result.case_id, result.verdict, reason)


def _tally(items: Sequence[NotJudged]) -> str:
    counts = Counter(n.verdict for n in items)
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))


def baseline_line(mine: Sequence[CaseResult], subject: str, paths: Sequence[Path]) -> str:
    """The baseline line (matches baselines/x.json; 2 verdicts changed from baselines/x.json
    (...); none recorded), apart from the headline, which a baseline never changes."""
    named = [p for p in paths if _subject_of(p) == subject]
    source = ", ".join(_shown(p) for p in named) or "the baseline given"
    compared = [r for r in mine if r.baseline is not None]
    if not compared:
        return f"none recorded for {subject}"
    moved = [r for r in compared if not baseline_allows(r.baseline or "", r.verdict)]
    if not moved:
        return f"matches {source} ({len(compared)} verdicts compared)"
    shown = ", ".join(f"{r.case_id}: {r.baseline} -> {r.verdict}" for r in moved[:3])
    more = f", and {len(moved) - 3} more" if len(moved) > 3 else ""
    return f"{len(moved)} verdict{'s' * (len(moved) != 1)} changed from {source} ({shown}{more})"


def _subject_of(path: Path) -> str:
    try:
        return read_baseline(path).subject
    except ValueError:
        return ""


def _shown(path: Path) -> str:
    """A baseline's path as a reader would type it: relative to here, else
    `baselines/<kind>/<version>.json`."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        if path.parent.parent.name == "baselines":
            return f"baselines/{path.parent.name}/{path.name}"
        return f"baselines/{path.name}" if path.parent.name == "baselines" else str(path)


def _not_judged_lines(c: Certificate, width: int) -> list[str]:
    """The cases not judged: a failed rule's consequences under it, then the others, each with
    its reason (cut at a word, never mid-quote: the JSON and the HTML have it whole)."""
    lines = []
    causes: dict[tuple[str, str], list[NotJudged]] = {}
    for n in c.consequences:
        causes.setdefault((n.rule, n.consequence_of), []).append(n)
    for (rule, case_id), items in causes.items():
        lines.append(f"  not judged, {len(items)} consequence{'s' * (len(items) != 1)} of "
                     f"{rule} failing (see {case_id}):")  # fmt: skip
        lines += [f"    {n.case_id}: {shorten(n.reason, width)}" for n in items]
    alike: dict[tuple[str, str], list[NotJudged]] = {}
    for n in (n for n in c.not_judged if not n.consequence_of):
        alike.setdefault((n.verdict, n.reason), []).append(n)
    for (verdict, reason), items in alike.items():
        if len(items) <= GROUPED_FROM:
            lines += [f"  not judged {n.case_id} ({verdict}): {shorten(reason, width)}"
                      for n in items]  # fmt: skip
            continue
        named = f"{items[0].case_id}, {items[1].case_id} and {len(items) - 2} more"
        lines.append(f"  not judged, {len(items)} {verdict} for one reason ({named}; the JSON "
                     f"and the HTML list each): {shorten(reason, width)}")  # fmt: skip
    return lines


def render_text(certificates: Sequence[Certificate], width: int = 160) -> str:
    """The terminal's certificate: per client its headline first, then the counts, what failed,
    what was not judged and why (a failed rule's consequences apart), claims, the baseline."""
    if not certificates:
        return "certificate: INCOMPLETE: no client case ran"
    lines: list[str] = []
    for c in certificates:
        lines += [f"certificate: {c.identity}: {c.headline}", f"  {c.why}"]
        if c.identity != c.subject:
            lines.append(f"  client: {c.subject}")
        lines += [
            f"  capabilities: {', '.join(c.capabilities) or 'none'}",
            f"  cases {c.cases}: {c.counted}",
            f"  MUST: {c.must['passed']} passed, {c.must['failed']} failed;"
            f" SHOULD: {c.should['passed']} passed, {c.should['failed']} not followed",
        ]
        for rule, cases in c.failed_must.items():
            lines.append(f"  failed MUST rule {rule}, in {', '.join(cases)}")
        lines += _not_judged_lines(c, width)
        for k in c.contradictions:
            lines.append(f"  claims contradicted: {k.text}")
        lines += [f"  baseline: {c.baseline}",
                  f"  kconform {c.kconform_version}, rule book {c.rule_book[:19]}"]  # fmt: skip
    return "\n".join(lines)
