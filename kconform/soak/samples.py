"""Per-interval samples as Parquet, written as they are taken: a crash keeps what was measured.

One small file per interval under `<out>/samples/` (`part-<shard>-<n>.parquet`), all with the
schema below, so Spark (`pipelines/soak.py`) reads the folder, or the folders of every shard,
as one table. Counts are per interval; `*_total` columns are running totals of the run (so the
last row of a shard says where it ended); `latency_hist` is mergeable across shards and workers
(`ledger.LATENCY_BUCKETS_MS`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from kconform.outputs import atomic_write

_INT = pa.int64()
_FLOAT = pa.float64()
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("shard", _INT),
        ("bucket_start", _FLOAT),
        ("bucket_end", _FLOAT),
        ("offset_s", _FLOAT),
        ("clients_live", _INT),
        ("clients_started", _INT),
        ("clients_closed", _INT),
        ("clients_killed", _INT),
        ("clients_moved", _INT),
        ("clients_stopped", _INT),
        ("clients_locked_out", _INT),
        ("pushes", _INT),
        ("pushes_accepted", _INT),
        ("pushes_rejected", _INT),
        ("rejected_42", _INT),
        ("rejected_76", _INT),
        ("rejected_87", _INT),
        ("rejected_89", _INT),
        ("rejected_117", _INT),
        ("rejected_118", _INT),
        ("rejected_other", _INT),
        ("terminating", _INT),
        ("terminating_accepted", _INT),
        ("gets", _INT),
        ("gets_rejected", _INT),
        ("throttled", _INT),
        ("storm_117", _INT),
        ("storm_open", _INT),
        ("connects", _INT),
        ("refused", _INT),
        ("lost", _INT),
        ("timeouts", _INT),
        ("latency_p50_ms", _FLOAT),
        ("latency_p99_ms", _FLOAT),
        ("latency_max_ms", _FLOAT),
        ("latency_hist", pa.list_(_INT)),
        ("loop_lag_max_ms", _FLOAT),
        ("distinct_instances", _INT),
        ("memory_bytes", _INT),
        ("heap_floor_bytes", _INT),
        ("connections", _INT),
        ("cached_instances", _INT),
        ("sink_records", _INT),
        ("acked_total", _INT),
        ("matched_total", _INT),
        ("missing_total", _INT),
        ("unread_total", _INT),
        ("duplicates_total", _INT),
        ("faults", pa.string()),
    ]
)
COLUMNS = tuple(SCHEMA.names)


class SampleWriter:
    """Writes each row as it comes; `rows` keeps them for the report."""

    def __init__(self, out: Path, *, run_id: str, shard: int) -> None:
        self.folder = out / "samples"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.run_id, self.shard = run_id, shard
        self.rows: list[dict[str, Any]] = []

    def write(self, row: dict[str, Any]) -> dict[str, Any]:
        full = {name: row.get(name) for name in COLUMNS}
        full["run_id"], full["shard"] = self.run_id, self.shard
        self.rows.append(full)
        table = pa.Table.from_pylist([full], schema=SCHEMA)
        name = f"part-{self.shard:03d}-{len(self.rows):06d}.parquet"
        _atomic(self.folder / name, lambda path: pq.write_table(table, str(path)))
        return full


def read_samples(folder: Path) -> list[dict[str, Any]]:
    """Every sample row under `folder` (a soak's output, or its `samples/`), in time order."""
    root = folder / "samples" if (folder / "samples").is_dir() else folder
    files = sorted(root.glob("part-*.parquet"))
    if not files:
        return []
    rows = [r for f in files for r in pq.read_table(f).to_pylist()]
    full = [{name: r.get(name) for name in COLUMNS} for r in rows]  # older runs: fewer columns
    return sorted(full, key=lambda r: (r["bucket_start"], r["shard"]))


def write_json(path: Path, data: Any) -> None:
    """Atomically replace `path` with `data` as JSON."""
    text = json.dumps(data, indent=1, default=str)
    _atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def _atomic(path: Path, write: Any) -> None:
    atomic_write(path, write)
