"""The volume comparison's data: Parquet schemas, what each sampled metric counts, the tolerance,
and the JSON summary. Shared by the Spark job (`volumes.py`), its single-process twin
(`volumes_pandas.py`), the volume run that writes the inputs (`suites/volumes`) and the report.

Nothing here imports Spark: the suites and the report must not pay a JVM to read a schema.
Why the tolerance is what it is: `kconform.engine.volumes.compare` (module docstring).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

SUMMARY_SCHEMA = "kconform/volumes-summary/1"
SUMMARY_FILE = "volumes-summary.json"
RESULT_DIR = "volumes-result.parquet"

LEDGER_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("first_offset", pa.int64()),  # a contiguous range of delivered offsets, both ends included
        ("last_offset", pa.int64()),
        ("records", pa.int64()),
        ("key_bytes", pa.int64()),
        ("value_bytes", pa.int64()),
        ("bytes", pa.int64()),  # key + value bytes: what the application handed the client
        ("first_delivery", pa.float64()),  # delivery report times, seconds since the epoch
        ("last_delivery", pa.float64()),
        ("compression", pa.string()),  # the producer's compression.type
    ]
)
"""One row per contiguous offset range a producer's delivery reports confirmed."""

SAMPLES_SCHEMA = pa.schema(
    [
        ("source", pa.string()),  # list_offsets, kip977, client_telemetry, log_end_offset, ...
        ("topic", pa.string()),
        ("partition", pa.int32()),  # -1: a topic-level reading
        ("metric", pa.string()),
        ("value", pa.float64()),  # cumulative, cluster-wide at `timestamp`
        ("timestamp", pa.float64()),  # seconds since the epoch (harness clock)
    ]
)
"""One reading of one cumulative counter; a source is sampled before and after the traffic."""

RESULT_COLUMNS = (
    "source",
    "metric",
    "quantity",
    "topic",
    "partition",
    "produced_records",
    "produced_bytes",
    "expected_low",
    "expected_high",
    "baseline",
    "observed",
    "delta",
    "difference",
    "status",
    "samples",
    "last_sample",
    "ledger_share",
    "ledger_rank",
    "hot_ledger",
    "source_share",
    "source_rank",
    "hot_source",
    "overhead_per_record",
)
"""Columns of the result Parquet and of each `rows` entry of the summary (see `summarize`)."""

QUANTITY_RULES: tuple[tuple[str, str, str], ...] = (
    # (source, metric regex, quantity): what a sampled counter's delta must equal or bound
    ("list_offsets", r"^end_offset$", "records"),
    ("log_end_offset", r"^LogEndOffset$", "records"),
    ("log_size", r"^Size$", "bytes"),
    ("kip977", r"^MessagesInPerSec$", "records"),
    ("kip977", r"^BytesInPerSec$", "bytes"),
    ("kip977", r"^BytesOutPerSec$", "bytes_out"),
    ("broker_topic", r"^MessagesInPerSec$", "records"),
    ("broker_topic", r"^BytesInPerSec$", "bytes"),
    # KIP-714's producer partition metric (early revisions; labels topic, partition)
    ("client_telemetry", r"(^|\.)partition\.record\.success$", "records"),
    # the Java producer's per-topic counter, pushed as org.apache.kafka.producer.topic.*
    ("client_telemetry", r"(^|\.)topic\.record\.send\.total$", "records"),
)
"""Metrics without a rule are kept in the samples but not compared (nothing says what they
count). `bytes_out` is judged like `bytes` because the volume run reads every record back once."""

STATUS_ORDER = {"mismatch": 0, "missing": 1, "ok": 2}


def quantity_of(source: str, metric: str) -> str | None:
    """The quantity a (source, metric) counts, None if the comparison does not judge it."""
    import re

    return next(
        (q for s, pattern, q in QUANTITY_RULES if s == source and re.search(pattern, metric)),
        None,
    )


@dataclass(frozen=True)
class Tolerance:
    """How far a broker's byte count may lie from the ledger's key + value bytes, and what a
    hot partition is. Derivation and justification: `kconform.engine.volumes.compare`."""

    records: int = 0  # record counts are exact: idempotent producer, fresh topics
    record_overhead_min: int = 7  # v2 Record framing, no headers: 6 one-byte varints + attributes
    record_overhead_max: int = 36  # length 5 + attributes 1 + timestampDelta 10 + 4 varints x 5
    batch_header: int = 61  # RecordBatch v2 header incl. baseOffset and batchLength
    compressed_expansion: float = 7 / 6  # worst case of Kafka's codecs (snappy: 32 + n + n/6)
    compressed_framing: int = 64  # per batch: codec frame headers, trailers, checksums
    hot_factor: float = 1.5  # hot: a share of at least 1.5x the even share of its topic

    def coefficients(self, compressed: bool) -> tuple[float, float, float, float, float, float]:
        """Byte bounds as linear forms in payload bytes b and records n (n > 0):
        low = lb*b + ln*n + lc, high = ceil(hb*b + hn*n + hc). Batches lie in [1, n]."""
        if not compressed:
            return (
                1.0,
                float(self.record_overhead_min),
                float(self.batch_header),
                1.0,
                float(self.record_overhead_max + self.batch_header),
                0.0,
            )
        e = self.compressed_expansion
        return (
            0.0,
            0.0,
            float(self.batch_header),
            e,
            e * self.record_overhead_max + self.batch_header + self.compressed_framing,
            0.0,
        )

    def byte_bounds(self, records: int, payload: int, compressed: bool) -> tuple[int, int]:
        """The interval a partition's batch bytes must lie in (both ends included)."""
        if records <= 0:
            return 0, 0
        lb, ln, lc, hb, hn, hc = self.coefficients(compressed)
        return (
            math.floor(lb * payload + ln * records + lc),
            math.ceil(hb * payload + hn * records + hc),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SourceStats:
    """Per (source, metric): how many rows of each status, and whether hot partitions agree."""

    source: str
    metric: str
    quantity: str
    rows: int
    ok: int
    mismatch: int
    missing: int
    hot_ledger: int  # partitions the ledger calls hot
    hot_disagreements: int  # partitions the source calls hot and the ledger not, or vice versa
    rank_disagreements: int  # ledger-hot partitions the source ranks differently


def summarize(
    rows: Sequence[Mapping[str, Any]],
    stats: Iterable[SourceStats],
    *,
    window: tuple[float, float],
    tolerance: Tolerance,
    total_rows: int,
    ledger_totals: Mapping[str, int],
    engine: str,
) -> dict[str, Any]:
    """The `volumes-summary.json` document (shape: README, "Volumes"). `rows` are already in
    report order (mismatches first) and capped; `total_rows` says how many the result holds."""
    per_source = [asdict(s) for s in sorted(stats, key=lambda s: (s.source, s.metric))]
    counts = {k: sum(s[k] for s in per_source) for k in ("rows", "ok", "mismatch", "missing")}
    return {
        "schema": SUMMARY_SCHEMA,
        "generated": time.time(),
        "engine": engine,
        "window": {"start": window[0], "end": window[1]},
        "tolerance": tolerance.to_dict(),
        "totals": {**counts, **ledger_totals},
        "sources": per_source,
        "rows": [{k: _plain(row.get(k)) for k in RESULT_COLUMNS} for row in rows],
        "rows_truncated": max(total_rows - len(rows), 0),
    }


def _plain(value: Any) -> Any:
    """JSON values: numpy scalars as Python numbers, NaN as null."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
