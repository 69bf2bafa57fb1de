"""Small statistics for timing cases: distributions to print as evidence, request-rate windows.

Timing verdicts are statistical: a case states its tolerance, checks every sample against it
and `observe`s the whole distribution, so a reader sees how close a client came.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from itertools import pairwise

MAX_APIVERSIONS_PER_SECOND = 10.0
"""ApiVersions a client may send per second while a broker refuses them: bounded retries, not a
storm (kip511.client.invalid_request and kip511.client.fallback.terminates)."""

SELFTEST_BOUND_ENV = "KCONFORM_SELFTEST_RESUME_WITHIN_S"
"""Self-test only (tests/clients/test_broken_clients.py): a shorter bound for the lost-push
cases (test_errors_transport.py), the restart case (test_errors_restart.py) and the readvertised
case (test_handshake_readvertised.py) on kconform's own scripted clients, which come back within
seconds or never, so proving that the case catches one that never does costs half a minute, not
five. The bound a run used is in its title and expectation; the 5 minutes themselves are held
by the Java releases (4.1.1 comes back at 300 s)."""


RESUME_SLACK = 5.0
"""Seconds allowed past ruling 17's bound: a client's timer wakes late on a loaded machine."""


def resume_within(interval_ms: int) -> float:
    """Ruling 17's bound in seconds (the longer of 5 minutes and three intervals), or the
    self-test's shorter one (SELFTEST_BOUND_ENV)."""
    return float(os.environ.get(SELFTEST_BOUND_ENV) or max(300.0, 3 * interval_ms / 1000))


def distribution(values: Sequence[float], digits: int = 3) -> dict[str, float | int]:
    """n, min, p10, median, p90, max, mean and stdev of `values` (empty: n=0 only)."""
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))], digits)

    return {
        "n": len(ordered),
        "min": round(ordered[0], digits),
        "p10": pick(0.1),
        "median": round(statistics.median(ordered), digits),
        "p90": pick(0.9),
        "max": round(ordered[-1], digits),
        "mean": round(statistics.fmean(ordered), digits),
        "stdev": round(statistics.pstdev(ordered), digits),
    }


def max_in_window(times: Sequence[float], window: float = 1.0) -> int:
    """The most events inside any `window`-second span."""
    ordered, best, start = sorted(times), 0, 0
    for end, t in enumerate(ordered):
        while t - ordered[start] > window:
            start += 1
        best = max(best, end - start + 1)
    return best


def gaps(times: Sequence[float]) -> list[float]:
    return [b - a for a, b in pairwise(times)]
