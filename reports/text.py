"""Shortening a reason for a narrow place without cutting it mid-word or mid-quote.

A reason cut at a fixed character count read "observed '0" in a certificate: the reader could
not tell what was observed. Cut where a clause or word ends, outside any quote, and say so
with an ellipsis; the JSON and the HTML keep the whole reason.
"""

from __future__ import annotations

__all__ = ["shorten"]

ELLIPSIS = " …"


def shorten(text: str, limit: int) -> str:
    """`text` on one line, whole if it fits in `limit` characters, else cut at the last clause
    (`; `) or word boundary that is outside quotes, followed by an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    room = max(limit - len(ELLIPSIS), 1)
    cuts = [i for i in _outside_quotes(text[: room + 1]) if text[i] == " "]
    clauses = [i for i in cuts if text[i - 1] in ";,:" and i > room // 2]
    best = (clauses or cuts or [room])[-1]
    return text[:best].rstrip(" ;,:") + ELLIPSIS


def _outside_quotes(text: str) -> list[int]:
    """The positions of `text` that are not inside a '...' or "..." quote (as repr writes
    them: a quote opens after a non-word character and closes before one)."""
    inside: str | None = None
    positions = []
    for i, ch in enumerate(text):
        before = text[i - 1] if i else " "
        if inside is None and ch in "'\"" and not before.isalnum():
            inside = ch
            continue
        if inside is not None and ch == inside:
            after = text[i + 1] if i + 1 < len(text) else " "
            if not after.isalnum():
                inside = None
            continue
        if inside is None:
            positions.append(i)
    return positions
