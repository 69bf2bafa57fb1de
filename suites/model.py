"""Moved: the case model lives in `kconform.engine.model` (the engine layer). This module only
re-exports it for code written against the old place."""

from kconform.engine.model import (
    BAD_VERDICTS,
    CASES,
    CaseInfo,
    Level,
    Verdict,
    case,
    matches_level,
    verdict_for,
)

__all__ = [
    "BAD_VERDICTS",
    "CASES",
    "CaseInfo",
    "Level",
    "Verdict",
    "case",
    "matches_level",
    "verdict_for",
]
