"""The soak report's tables from the samples, in plain Python.

`pipelines/soak.py` computes the same tables with Spark (for hours of samples from many shards,
and for trends over many nights); this module is what the report uses when Spark is off or
unavailable, and the oracle the Spark job is tested against. Both merge shards the same way:
rows of the same interval (by offset from each shard's start) are summed, except readings of
the broker itself (memory, connections, cached instances: the largest shard's reading, since
all shards see the same broker) and latency percentiles (from the merged histograms).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from statistics import median
from typing import Any

from kconform.soak.latency import histogram_percentile

SUMMED = (
    "clients_live",
    "clients_started",
    "clients_closed",
    "clients_killed",
    "clients_moved",
    "clients_stopped",
    "clients_locked_out",
    "pushes",
    "pushes_accepted",
    "pushes_rejected",
    "rejected_42",
    "rejected_76",
    "rejected_87",
    "rejected_89",
    "rejected_117",
    "rejected_118",
    "rejected_other",
    "terminating",
    "terminating_accepted",
    "gets",
    "gets_rejected",
    "throttled",
    "storm_117",
    "storm_open",
    "connects",
    "refused",
    "lost",
    "timeouts",
    "sink_records",
)
BROKER = ("memory_bytes", "heap_floor_bytes", "connections", "cached_instances")
ERROR_COLUMNS = {
    "rejected_42": "INVALID_REQUEST (42)",
    "rejected_76": "UNSUPPORTED_COMPRESSION_TYPE (76)",
    "rejected_87": "INVALID_RECORD (87)",
    "rejected_89": "THROTTLING_QUOTA_EXCEEDED (89)",
    "rejected_117": "UNKNOWN_SUBSCRIPTION_ID (117)",
    "rejected_118": "TELEMETRY_TOO_LARGE (118)",
    "rejected_other": "outside the KIP's table",
}


def bucket_seconds(rows: Sequence[dict[str, Any]]) -> float:
    spans = [r["bucket_end"] - r["bucket_start"] for r in rows if r["bucket_end"]]
    return float(median(spans)) if spans else 60.0


def timeline(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per interval, shards merged (module docstring)."""
    width = bucket_seconds(rows)
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[round(row["offset_s"] / width)].append(row)
    out = []
    for key in sorted(groups):
        group = groups[key]
        merged: dict[str, Any] = {"bucket": key, "offset_s": min(r["offset_s"] for r in group)}
        span = max(r["bucket_end"] - r["bucket_start"] for r in group) or width
        merged["seconds"] = span
        for column in SUMMED:
            merged[column] = sum(int(r.get(column) or 0) for r in group)
        for column in BROKER:
            values = [r[column] for r in group if r.get(column) is not None]
            merged[column] = max(values) if values else None
        hist = merge_histograms(r.get("latency_hist") or [] for r in group)
        merged["latency_p50_ms"] = histogram_percentile(hist, 50)
        merged["latency_p99_ms"] = histogram_percentile(hist, 99)
        merged["latency_max_ms"] = max(float(r.get("latency_max_ms") or 0.0) for r in group)
        merged["loop_lag_max_ms"] = max(float(r.get("loop_lag_max_ms") or 0.0) for r in group)
        merged["missing_total"] = sum(int(r.get("missing_total") or 0) for r in group)
        merged["push_rate"] = merged["pushes"] / span
        faults = [r["faults"] for r in group if r.get("faults")]
        merged["faults"] = "; ".join(sorted(set(faults)))
        out.append(merged)
    return out


def merge_histograms(histograms: Any) -> list[int]:
    total: list[int] = []
    for hist in histograms:
        if len(hist) > len(total):
            total += [0] * (len(hist) - len(total))
        for i, count in enumerate(hist):
            total[i] += int(count)
    return total


def errors(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rejected pushes by error code, with their share of all pushes."""
    pushes = sum(int(r.get("pushes") or 0) for r in rows)
    out = []
    for column, name in ERROR_COLUMNS.items():
        count = sum(int(r.get(column) or 0) for r in rows)
        share = 100.0 * count / pushes if pushes else 0.0
        out.append({"code": name, "count": count, "percent": round(share, 4)})
    return out


def totals(
    rows: Sequence[dict[str, Any]], line: Sequence[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The run's totals; `line` is `timeline(rows)` where the caller has it already."""
    out: dict[str, Any] = {c: sum(int(r.get(c) or 0) for r in rows) for c in SUMMED}
    out.pop("clients_live")
    hist = merge_histograms(r.get("latency_hist") or [] for r in rows)
    out["latency_p50_ms"] = histogram_percentile(hist, 50)
    out["latency_p99_ms"] = histogram_percentile(hist, 99)
    out["latency_max_ms"] = max((float(r.get("latency_max_ms") or 0.0) for r in rows), default=0.0)
    line = timeline(rows) if line is None else line
    out["peak_clients_live"] = max((int(r["clients_live"]) for r in line), default=0)
    memory = [r["memory_bytes"] for r in rows if r.get("memory_bytes") is not None]
    out["peak_memory_mib"] = round(max(memory) / (1 << 20), 1) if memory else None
    return out


def tables(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Everything the soak page shows from the samples."""
    line = timeline(rows)
    return {
        "engine": "python",
        "timeline": line,
        "errors": errors(rows),
        "totals": totals(rows, line),
    }
