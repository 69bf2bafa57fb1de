"""The rule book's digest: which rules a certificate was judged against, in a few characters.

A certificate names it beside kconform's version, so two certificates of the same release are
known to rest on the same rules even from a checkout with local edits. It is computed from the
rules as data (their fields as canonical JSON), never from files, so it is the same on every
machine and for an installed wheel as for a checkout.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict
from enum import Enum
from typing import Any

from kconform.rules.model import Rule

__all__ = ["SHORT", "book_digest"]

SHORT = 12
"""Hex digits of the digest a badge shows (the certificate keeps all 64)."""


def book_digest(rules: Iterable[Rule]) -> str:
    """`sha256:<64 hex>` of the rules, ordered by id, as canonical JSON."""
    data = [asdict(r) for r in sorted(rules, key=lambda r: r.id)]
    text = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"),
                      default=_plain)  # fmt: skip
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def _plain(value: Any) -> Any:
    """Enums (levels, verdicts) as their values; anything else JSON lacks as its text."""
    return value.value if isinstance(value, Enum) else str(value)
