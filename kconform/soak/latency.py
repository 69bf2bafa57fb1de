"""Latency percentiles: exact per interval, and histograms that merge across workers and shards.

A sample row keeps its interval's exact p50/p99/max and a histogram on fixed bounds (0.25 ms to
about 46 s, each 1.41 times the last), so a run's, a shard-merged interval's or a night's
percentiles come from summed histograms: an upper bound within one bucket.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

LATENCY_BUCKETS_MS = tuple(round(0.25 * 2 ** (i / 2), 3) for i in range(36))
"""Histogram bounds (0.25 ms .. ~46 s, x1.41 apart): mergeable across workers and shards."""


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (0.0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return float(ordered[rank - 1])


def latency_histogram(values: Iterable[float]) -> list[int]:
    """Counts per `LATENCY_BUCKETS_MS` bound (the last slot: above the last bound)."""
    counts = [0] * (len(LATENCY_BUCKETS_MS) + 1)
    for value in values:
        lo, hi = 0, len(LATENCY_BUCKETS_MS)
        while lo < hi:
            mid = (lo + hi) // 2
            if value <= LATENCY_BUCKETS_MS[mid]:
                hi = mid
            else:
                lo = mid + 1
        counts[lo] += 1
    return counts


def histogram_percentile(counts: list[int], pct: float) -> float:
    """The bucket bound at or above the percentile (an upper estimate, as histograms give)."""
    total = sum(counts)
    if not total:
        return 0.0
    rank, seen = max(1, math.ceil(pct / 100 * total)), 0
    for index, count in enumerate(counts):
        seen += count
        if seen >= rank:
            return LATENCY_BUCKETS_MS[min(index, len(LATENCY_BUCKETS_MS) - 1)]
    return LATENCY_BUCKETS_MS[-1]
