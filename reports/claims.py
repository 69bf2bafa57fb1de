"""What a client's `--describe` claims, checked against what it sent on the wire.

A capability is taken from the driver's description to decide which cases apply (a client
without "telemetry" has its KIP-714 cases `unsupported`); nothing checked it. Here every
client case's `api_keys` (the API keys the client sent in the whole case, recorded by
kconform.plugin.verdicts from the proxy's wire log) is compared with the claim:

- claims no telemetry, yet sent GetTelemetrySubscriptions (71) or PushTelemetry (72): a false
  claim, and if KIP-714 cases were skipped as unsupported on it (`skipped`), those were never
  judged, which makes the certificate INCOMPLETE (reports.certificate);
- claims telemetry, yet never sent 71 in any case that gave it the chance (one where an
  ApiVersions request of it was answered without error, which the reference answers with
  71/72 advertised unless the case withholds them): reported; the headline stays as the
  KIP-714 cases judge it (their own verdicts say what it failed to do).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kconform.engine.results import CaseResult
from kconform.reports.model import RunResults

__all__ = ["TELEMETRY", "Contradiction", "contradictions", "sent_keys"]

TELEMETRY = "telemetry"  # the capability a KIP-714 client lists in its --describe
GET, PUSH, API_VERSIONS = 71, 72, 18
NAMES = {GET: "GetTelemetrySubscriptions", PUSH: "PushTelemetry"}


@dataclass(frozen=True)
class Contradiction:
    """A claim the wire contradicts, in one line; `skipped`: cases it had skipped as
    unsupported (never judged because of the false claim)."""

    text: str
    cases: list[str]
    skipped: list[str]


def sent_keys(result: CaseResult) -> set[int]:
    """The API keys the client sent in a case: `api_keys`, else (results written before it was
    recorded) what the kept wire log shows."""
    if result.api_keys:
        return set(result.api_keys)
    return {int(e["api_key"]) for e in result.wire_log
            if e.get("direction") == "client->broker" and e.get("api_key") is not None}  # fmt: skip


def _had_the_chance(result: CaseResult) -> bool:
    """An ApiVersions request of the client was answered without error in this case: the last
    answer logged for a request (what the client got, after any rewrite) has ErrorCode 0."""
    answers: dict[tuple[object, object], int | None] = {}
    for entry in result.wire_log:
        if entry.get("api_key") == API_VERSIONS and entry.get("direction") != "client->broker":
            key = (entry.get("connection"), entry.get("correlation_id"))
            answers[key] = answer_error_code(str(entry.get("raw", "")))
    return 0 in answers.values()


def answer_error_code(raw_hex: str) -> int | None:
    """The ErrorCode of a logged ApiVersions answer (its raw bytes start with the correlation
    id, then the int16 ErrorCode in every version); None when nothing was answered."""
    try:
        raw = bytes.fromhex(raw_hex)
    except ValueError:
        return None
    return int.from_bytes(raw[4:6], "big", signed=True) if len(raw) >= 6 else None


def contradictions(results: RunResults, subject: str) -> list[Contradiction]:
    """The claims of `subject`'s description that its cases' wire traffic contradicts."""
    described = next((s for s in results.subjects if s.get("name") == subject), None)
    if described is None:
        return []  # never described (it did not start): there is no claim to check
    claims = TELEMETRY in (described.get("capabilities") or [])
    mine = [r for r in results.results if r.subject == subject and r.subject_kind == "client"]
    return _telemetry_sent(mine) if not claims else _telemetry_never_sent(mine)


def _telemetry_sent(mine: Sequence[CaseResult]) -> list[Contradiction]:
    sent = [(r.case_id, sorted(sent_keys(r) & set(NAMES))) for r in mine]
    sent = [(case, keys) for case, keys in sent if keys]
    if not sent:
        return []
    keys = sorted({k for _, keys in sent for k in keys})
    what = " and ".join(f"{NAMES[k]} (key {k})" for k in keys)
    cases = [case for case, _ in sent]
    more = f" and {len(cases) - 1} more cases" if len(cases) > 1 else ""
    skipped = [r.case_id for r in mine if r.verdict == "unsupported" and r.kip == "KIP-714"]
    text = f"claims no {TELEMETRY} but sent {what} in {cases[0]}{more}"
    if skipped:
        text += f"; {len(skipped)} KIP-714 cases were skipped as unsupported on that claim"
    return [Contradiction(text, cases, skipped)]


def _telemetry_never_sent(mine: Sequence[CaseResult]) -> list[Contradiction]:
    chances = [r for r in mine if _had_the_chance(r)]
    if not chances or any(GET in sent_keys(r) for r in mine):
        return []
    text = (f"claims {TELEMETRY} but never sent {NAMES[GET]} (key {GET}) in {len(chances)} "
            "cases that gave it the chance (its ApiVersions answered without error)")  # fmt: skip
    return [Contradiction(text, [r.case_id for r in chances], [])]
