"""Volumes: what a client produced (the ledger) against what each source counted, per partition.

    compare_volumes(spark, ledger_path, samples_path, out_dir, tolerance=Tolerance())
    spark-submit pipelines/volumes.py --ledger L.parquet --samples S.parquet --out DIR

The ledger (`model.LEDGER_SCHEMA`) comes from a producer's delivery reports; the samples
(`SAMPLES_SCHEMA`) are cumulative counters read from the target before and after the traffic:
end offsets through ListOffsets, KIP-977's per-partition MessagesInPerSec / BytesInPerSec /
BytesOutPerSec, the log's LogEndOffset/Size (§F, where KIP-977 does not exist), and
partition-tagged client telemetry. For every (source, metric, topic, partition) the job takes
delta = the last reading - the last reading at or before the first delivery (0 when there is
none: KIP-977 meters are created with the first traffic, client counters with the client),
judges it against the ledger, ranks partitions by their share of the topic's traffic, and writes
`volumes-result.parquet` and `volumes-summary.json` (mismatches first).

Tolerance (`Tolerance`), and why:

- **Records: exact.** The producer is idempotent with acks=all, so each record is appended once
  whatever the retries and its delivery report carries its offset; the run creates its topics,
  so nobody else writes to them; there are no transactions, so no control records take offsets.
  End-offset delta = delivered records = MessagesInPerSec delta ("Messages entered the
  partition", KIP-977 Part 2). Any difference is a miscount.
- **Bytes: an interval.** The ledger counts key + value bytes b of n records; a broker's
  BytesInPerSec (and the log's Size) counts record batches as sent: per batch the 61-byte v2
  header (baseOffset 8, batchLength 4, leader epoch 4, magic 1, crc 4, attributes 2,
  lastOffsetDelta 4, two timestamps 16, producer id/epoch 10, baseSequence 4, count 4), and per
  record its framing: length, timestampDelta, offsetDelta, keyLength, valueLength and header
  count varints plus an attributes byte, 7 bytes at least and 36 at most (5+1+10+5+5+5+5) with
  no headers (the run sends none). The client chooses the batching (linger.ms, batch.size), and
  delivery reports do not show it: between 1 batch and n batches. So, uncompressed,
  b + 7n + 61 <= bytes <= b + 36n + 61n. Compressed, a batch of repetitive data can shrink to
  little more than its header (>= 61), and incompressible data grows by at most Kafka's worst
  codec, snappy (32 + m + m/6), plus per-batch framing of at most 64 bytes (xerial/LZ4/zstd/gzip
  headers, trailers, block lengths): bytes <= 7/6 (b + 36n) + (61 + 64) n.
  The top is loose (one record per batch), the bottom is tight; together they still catch what
  matters: a meter counting payload only (below b + 7n + 61), a meter counting batches twice
  (above the top once records average more than ~100 bytes, as the default workload's do), a
  meter at zero. `overhead_per_record` = (delta - b) / n shows where a broker sits inside.
- **BytesOutPerSec** is held to the same interval: the volume run reads every partition back
  once with one sequential consumer and fetch limits far above the data, so every batch leaves
  the broker exactly once.
- **Missing** (not mismatch): a source with no reading at or after the last delivery.
- **Hot partitions** (KIP-977's motivation: topic-level throughput hides keyed hot spots): a
  partition is hot when its share of its topic's traffic is at least `hot_factor` (1.5) times an
  even share; ranks are dense ranks by delta (source) and by produced volume (ledger). The KIP
  sets no threshold; 1.5x is relative, so it means the same for 3 and for 256 partitions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kconform.engine.volumes.model import (
    QUANTITY_RULES,
    RESULT_COLUMNS,
    RESULT_DIR,
    STATUS_ORDER,
    SUMMARY_FILE,
    SourceStats,
    Tolerance,
    summarize,
)
from kconform.errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

KEYS = ["source", "metric", "quantity", "topic", "partition"]
MAX_SUMMARY_ROWS = 1000  # the JSON is for a report page; the Parquet result has every row


def compare_volumes(
    spark: SparkSession,
    ledger_path: str | Path,
    samples_path: str | Path,
    out_dir: str | Path,
    tolerance: Tolerance | None = None,
    *,
    max_rows: int = MAX_SUMMARY_ROWS,
) -> dict[str, Any]:
    """Run the comparison; write `volumes-result.parquet` and `volumes-summary.json` under
    `out_dir` and return the summary (see the module docstring for what is judged how)."""
    tolerance = tolerance or Tolerance()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ledger = spark.read.parquet(str(ledger_path))
    totals = _ledger_totals(ledger)
    window = (float(totals.pop("start")), float(totals.pop("end")))
    with _split_finely(spark):
        samples = spark.read.parquet(str(samples_path))
        counters = readings(samples, window[0]).cache()  # read by three branches of the plan
        comparison(ledger, counters, window, tolerance).write.mode("overwrite").parquet(
            str(out / RESULT_DIR)
        )
        counters.unpersist()
    written = spark.read.parquet(str(out / RESULT_DIR))  # summarise the file, not a recompute
    stats = _stats(written)
    rows = [r.asDict() for r in _report_order(written).limit(max_rows).collect()]
    summary = summarize(
        rows,
        stats,
        window=window,
        tolerance=tolerance,
        total_rows=sum(s.rows for s in stats),
        ledger_totals=totals,
        engine="spark",
    )
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


SPLITS_PER_CORE = 4


@contextmanager
def _split_finely(spark: SparkSession) -> Iterator[None]:
    """Read the samples in several splits per core while the job runs.

    Spark sizes file splits as total bytes / cores: on `local[2]` a samples file becomes two
    splits, and row groups compress unevenly (end offsets far better than byte meters), so one
    core idles while the other finishes the bigger half, the one pass over the samples. A few
    splits per core keep both busy; each split stays over 4 MiB (`openCostInBytes`), so small
    inputs are not cut up, and the split count grows with the input, so the time stays linear.
    """
    key = "spark.sql.files.minPartitionNum"
    before = spark.conf.get(key, None)
    spark.conf.set(key, str(SPLITS_PER_CORE * spark.sparkContext.defaultParallelism))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _ledger_totals(ledger: DataFrame) -> dict[str, Any]:
    from pyspark.sql import functions as F

    row = ledger.agg(
        F.min("first_delivery").alias("start"),
        F.max("last_delivery").alias("end"),
        F.count("*").alias("ranges"),
        F.countDistinct("topic").alias("topics"),
        F.countDistinct("topic", "partition").alias("partitions"),
        F.sum("records").alias("records"),
        F.sum("bytes").alias("bytes"),
    ).first()
    if row is None or row["start"] is None:
        raise UsageError("the ledger is empty: nothing was delivered, nothing to compare")
    return {k: (int(v) if k not in ("start", "end") else v) for k, v in row.asDict().items()}


def quantity_column() -> Column:
    """QUANTITY_RULES as one CASE expression (null: a metric the comparison does not judge)."""
    from pyspark.sql import functions as F

    expr = F.lit(None).cast("string")
    for source, pattern, quantity in reversed(QUANTITY_RULES):
        hit = (F.col("source") == source) & F.col("metric").rlike(pattern)
        expr = F.when(hit, F.lit(quantity)).otherwise(expr)
    return expr


def readings(samples: DataFrame, start: float) -> DataFrame:
    """The one pass over the raw samples: per judged counter its baseline (the last reading at
    or before `start`, the first delivery), its last reading, when that was, and how many.

    The quantity is matched after the aggregation, on one row per counter rather than on every
    sample: its regular expressions cost more than the aggregation itself at 30 million rows.
    """
    from pyspark.sql import functions as F

    counter = [k for k in KEYS if k != "quantity"]
    before = F.when(F.col("timestamp") <= start, F.col("timestamp"))
    per_counter = samples.groupBy(*counter).agg(
        F.max_by("value", before).alias("baseline"),
        F.max_by("value", "timestamp").alias("observed"),
        F.max("timestamp").alias("last_sample"),
        F.count("*").alias("samples"),
    )
    judged = per_counter.withColumn("quantity", quantity_column())
    return judged.where(F.col("quantity").isNotNull()).select(
        *KEYS, "baseline", "observed", "last_sample", "samples"
    )


def comparison(
    ledger: DataFrame, readings: DataFrame, window: tuple[float, float], tolerance: Tolerance
) -> DataFrame:
    """One row per (source, metric, topic, partition) with RESULT_COLUMNS (lazy), from the
    ledger and `readings(samples, window[0])`."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    end = window[1]
    per_partition = ledger.groupBy("topic", "partition").agg(
        F.sum("records").alias("produced_records"),
        F.sum("bytes").alias("produced_bytes"),
        F.max((F.col("compression") != "none").cast("int")).alias("compressed"),
    )
    per_topic = per_partition.groupBy("topic").agg(
        F.lit(-1).cast("int").alias("partition"),
        F.sum("produced_records").alias("produced_records"),
        F.sum("produced_bytes").alias("produced_bytes"),
        F.max("compressed").alias("compressed"),
    )
    produced = per_partition.unionByName(per_topic)
    # every partition the ledger has is expected from every partition-level (source, metric);
    # every topic from every topic-level one: a source silent about a partition is "missing"
    levels = readings.select("source", "metric", "quantity", (F.col("partition") >= 0).alias("pl"))
    levels = levels.distinct()
    expected = (
        levels.where("pl")
        .crossJoin(per_partition.select("topic", "partition"))
        .unionByName(levels.where("NOT pl").crossJoin(per_topic.select("topic", "partition")))
        .drop("pl")
    )
    width = (
        per_partition.select("topic", "partition")
        .unionByName(readings.where("partition >= 0").select("topic", "partition"))
        .groupBy("topic")
        .agg(F.countDistinct("partition").alias("topic_partitions"))
    )
    # both sides are unique per KEYS, so the full join is every expected or read counter once
    rows = (
        expected.join(readings, KEYS, "full")
        .join(produced, ["topic", "partition"], "left")
        .join(width, ["topic"], "left")
        .fillna(0, ["produced_records", "produced_bytes", "compressed"])
    )
    rows = rows.withColumn("delta", F.col("observed") - F.coalesce(F.col("baseline"), F.lit(0.0)))
    rows = _bounds(rows, tolerance)
    inside = F.col("delta").between(F.col("expected_low"), F.col("expected_high"))
    rows = rows.withColumn(
        "status",
        F.when(F.col("observed").isNull() | (F.col("last_sample") < end), "missing")
        .when(inside, "ok")
        .otherwise("mismatch"),
    )
    rows = rows.withColumn(
        "difference",
        F.when(F.col("delta") > F.col("expected_high"), F.col("delta") - F.col("expected_high"))
        .when(F.col("delta") < F.col("expected_low"), F.col("delta") - F.col("expected_low"))
        .when(F.col("delta").isNotNull(), F.lit(0.0)),
    )
    return _shares(rows, tolerance, Window).select(*RESULT_COLUMNS)


def _bounds(rows: DataFrame, tolerance: Tolerance) -> DataFrame:
    from pyspark.sql import functions as F

    n, b = F.col("produced_records"), F.col("produced_bytes")

    def linear(compressed: bool, high: bool) -> Column:
        lb, ln, lc, hb, hn, hc = tolerance.coefficients(compressed)
        if high:
            return F.ceil(F.lit(hb) * b + F.lit(hn) * n + F.lit(hc)).cast("double")
        return F.floor(F.lit(lb) * b + F.lit(ln) * n + F.lit(lc)).cast("double")

    def byte_bound(high: bool) -> Column:
        return (
            F.when(n <= 0, F.lit(0.0))
            .when(F.col("compressed") == 1, linear(True, high))
            .otherwise(linear(False, high))
        )

    records = F.col("quantity") == "records"
    slack = F.lit(float(tolerance.records))
    return rows.withColumn(
        "expected_low", F.when(records, n.cast("double") - slack).otherwise(byte_bound(False))
    ).withColumn(
        "expected_high", F.when(records, n.cast("double") + slack).otherwise(byte_bound(True))
    )


def _shares(rows: DataFrame, tolerance: Tolerance, window: Any) -> DataFrame:
    from pyspark.sql import functions as F

    produced = F.when(F.col("quantity") == "records", F.col("produced_records")).otherwise(
        F.col("produced_bytes")
    )
    # the level is a column, not an expression in partitionBy: Spark names such an expression
    # afresh for each window, and each name costs its own shuffle of every row
    rows = rows.withColumn("_produced", produced.cast("double")).withColumn(
        "_level", F.col("partition") >= 0
    )
    topic = window.partitionBy("source", "metric", "topic", "_level")
    level = F.col("_level")
    even = F.lit(tolerance.hot_factor) / F.col("topic_partitions")

    def share(column: str) -> Column:
        total = F.sum(column).over(topic)
        return F.when(level & (total > 0), F.col(column) / total)

    rows = rows.withColumn("ledger_share", share("_produced"))
    rows = rows.withColumn("source_share", share("delta"))
    rows = rows.withColumn(
        "ledger_rank", F.when(level, F.dense_rank().over(topic.orderBy(F.col("_produced").desc())))
    )
    rows = rows.withColumn(
        "source_rank",
        F.when(
            level & F.col("delta").isNotNull(),
            F.dense_rank().over(topic.orderBy(F.col("delta").desc_nulls_last())),
        ),
    )
    rows = rows.withColumn(
        "hot_ledger", F.when(level, F.coalesce(F.col("ledger_share") >= even, F.lit(False)))
    )
    rows = rows.withColumn(
        "hot_source", F.when(level, F.coalesce(F.col("source_share") >= even, F.lit(False)))
    )
    per_record = (F.col("delta") - F.col("produced_bytes")) / F.col("produced_records")
    bytes_like = F.col("quantity").isin("bytes", "bytes_out") & (F.col("produced_records") > 0)
    return rows.withColumn("overhead_per_record", F.when(bytes_like, per_record))


def _stats(result: DataFrame) -> list[SourceStats]:
    from pyspark.sql import functions as F

    def count(condition: Column) -> Column:
        return F.sum(F.when(condition, 1).otherwise(0))

    judged = (F.col("partition") >= 0) & (F.col("status") != "missing")
    rows = (
        result.groupBy("source", "metric", "quantity")
        .agg(
            F.count("*").alias("rows"),
            count(F.col("status") == "ok").alias("ok"),
            count(F.col("status") == "mismatch").alias("mismatch"),
            count(F.col("status") == "missing").alias("missing"),
            count(F.col("hot_ledger")).alias("hot_ledger"),
            count(judged & (F.col("hot_source") != F.col("hot_ledger"))).alias("hot_disagreements"),
            count(
                judged & F.col("hot_ledger") & (F.col("source_rank") != F.col("ledger_rank"))
            ).alias("rank_disagreements"),
        )
        .collect()
    )
    return [
        SourceStats(**{k: (v if isinstance(v, str) else int(v)) for k, v in r.asDict().items()})  # type: ignore[arg-type]
        for r in rows
    ]


def _report_order(result: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    order = F.lit(len(STATUS_ORDER))
    for name, rank in STATUS_ORDER.items():
        order = F.when(F.col("status") == name, F.lit(rank)).otherwise(order)
    return result.orderBy(
        order, F.col("ledger_share").desc_nulls_last(), "topic", "partition", "source", "metric"
    )
