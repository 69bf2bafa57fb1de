"""What one case found: its expectations and its result, as the engine records them and the
reports, baselines and the soak read them. Plain data, below both the engine's checks and the
reports, so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CaseResult", "Expectation"]


@dataclass(frozen=True)
class Expectation:
    """One thing a case checked: what the spec says, what the target did."""

    what: str
    expected: Any
    observed: Any
    ok: bool


RECORDED = "(recorded)"
"""An Expectation's `expected` when nothing was expected: what the subject did is only recorded
(an INFO case's choice, a soak's tally); the report shows it as such, never as a value."""


@dataclass
class CaseResult:
    case_id: str
    title: str
    spec_ref: str
    level: str  # MUST, SHOULD, INFO
    kip: str
    subject: str  # target or client label, e.g. "reference", "librdkafka_mock"
    subject_kind: str  # "broker" or "client"
    implementation: str
    version: str
    verdict: str
    message: str = ""
    expectations: list[Expectation] = field(default_factory=list)
    wire_log: list[dict[str, Any]] = field(default_factory=list)
    started: float = 0.0  # unix time
    duration: float = 0.0  # seconds
    waited: float = 0.0  # of which slept on purpose because the protocol forces it
    baseline: str | None = None  # the verdict the baseline expected, when one was given
    baseline_why: str | None = None  # why the baseline expects it (a known deviation's source)
    nodeid: str = ""
    rules: list[str] = field(default_factory=list)  # rule-book ids the case judges
    needs: str = ""  # not-applicable: the rule its unmet precondition requires, if it named one
    api_keys: list[int] = field(default_factory=list)  # what the client sent (client cases)

    @property
    def key(self) -> tuple[str, str]:
        return self.case_id, self.subject

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseResult:
        data = dict(data)
        data["expectations"] = [Expectation(**e) for e in data.get("expectations", [])]
        return cls(**data)
