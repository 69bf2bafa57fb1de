"""Soak samples into the soak report's tables, with Spark: one night, many shards, many nights.

    spark-submit pipelines/soak.py --samples OUT[/samples] [OUT2 ...] --out DIR
    spark-submit pipelines/soak.py --trend NIGHT1 NIGHT2 ... --out DIR
    soak_tables(spark, [folder, ...])        # what `kconform soak` calls (local[2] by default)

Input: the Parquet samples `kconform soak` writes (`soak/samples.py`, one row per shard and
interval). Output, as `soak-tables.json` (and Parquet under `soak-tables/`):

- **timeline**: one row per interval, shards merged: counts summed; the broker's own readings
  (memory, connections, cached instances) the largest reading, since every shard sees the same
  broker; latency percentiles from the summed histograms (an upper bound within one histogram
  bucket, x1.41 apart);
- **errors**: rejected pushes per error code and their share of all pushes;
- **totals**: the run's sums, p50/p99/max latency, peak clients and broker memory;
- **trend** (`--trend`): one row per night for multi-night trends.

`kconform.soak.tables` computes the same tables in plain Python (the fallback, and the oracle
the tests hold this job to).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kconform.soak.latency import histogram_percentile
from kconform.soak.samples import SCHEMA
from kconform.soak.tables import BROKER, ERROR_COLUMNS, SUMMED

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

TABLES_FILE = "soak-tables.json"


def _sample_paths(folders: Sequence[str | Path]) -> list[str]:
    paths = []
    for folder in folders:
        root = Path(folder)
        root = root / "samples" if (root / "samples").is_dir() else root
        if any(root.glob("part-*.parquet")):
            paths.append(str(root))
    return paths


def read_samples(spark: SparkSession, folders: Sequence[str | Path]) -> DataFrame:
    from pyspark.sql.types import StructType

    paths = _sample_paths(folders)
    schema = StructType.fromJson(json.loads(_spark_schema_json()))
    if not paths:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).parquet(*paths)


def _spark_schema_json() -> str:
    """The samples' Arrow schema as a Spark schema (so an empty folder still has columns)."""
    kinds = {"string": "string", "int64": "long", "double": "double"}
    fields = []
    for f in SCHEMA:
        if str(f.type).startswith("list"):
            kind: Any = {"type": "array", "elementType": "long", "containsNull": True}
        else:
            kind = kinds[str(f.type)]
        fields.append({"name": f.name, "type": kind, "nullable": True, "metadata": {}})
    return json.dumps({"type": "struct", "fields": fields})


def timeline(samples: DataFrame) -> list[dict[str, Any]]:
    from pyspark.sql import functions as F

    width_row = samples.select(
        F.percentile_approx(F.col("bucket_end") - F.col("bucket_start"), 0.5).alias("w")
    ).first()
    width = float(width_row["w"]) if width_row and width_row["w"] else 60.0
    keyed = samples.withColumn("bucket", F.round(F.col("offset_s") / width).cast("long"))
    aggs = [
        F.min("offset_s").alias("offset_s"),
        F.max(F.col("bucket_end") - F.col("bucket_start")).alias("seconds"),
    ]
    aggs += [F.sum(F.coalesce(F.col(c), F.lit(0))).cast("long").alias(c) for c in SUMMED]
    aggs += [F.max(c).alias(c) for c in BROKER]
    aggs += [
        F.max("latency_max_ms").alias("latency_max_ms"),
        F.max("loop_lag_max_ms").alias("loop_lag_max_ms"),
        F.sum(F.coalesce("missing_total", F.lit(0))).cast("long").alias("missing_total"),
        F.array_sort(F.collect_set(F.when(F.col("faults") != "", F.col("faults")))).alias(
            "fault_list"
        ),
    ]
    merged = keyed.groupBy("bucket").agg(*aggs)
    hist = (
        keyed.select("bucket", F.posexplode("latency_hist").alias("pos", "n"))
        .groupBy("bucket", "pos")
        .agg(F.sum("n").alias("n"))
        .groupBy("bucket")
        .agg(F.sort_array(F.collect_list(F.struct("pos", "n"))).alias("hist"))
    )
    rows = merged.join(hist, "bucket", "left").orderBy("bucket").collect()
    out = []
    for row in rows:
        data = row.asDict()
        counts = [int(entry["n"]) for entry in (data.pop("hist") or [])]
        data["latency_p50_ms"] = histogram_percentile(counts, 50)
        data["latency_p99_ms"] = histogram_percentile(counts, 99)
        data["latency_max_ms"] = float(data["latency_max_ms"] or 0.0)
        data["loop_lag_max_ms"] = float(data["loop_lag_max_ms"] or 0.0)
        data["faults"] = "; ".join(data.pop("fault_list") or [])
        data["seconds"] = float(data["seconds"] or width)
        data["push_rate"] = data["pushes"] / data["seconds"]
        out.append(data)
    return out


def errors(samples: DataFrame) -> list[dict[str, Any]]:
    from pyspark.sql import functions as F

    sums = samples.agg(
        F.sum(F.coalesce("pushes", F.lit(0))).alias("pushes"),
        *[F.sum(F.coalesce(c, F.lit(0))).alias(c) for c in ERROR_COLUMNS],
    ).first()
    pushes = int(sums["pushes"] or 0) if sums else 0
    return [
        {
            "code": name,
            "count": int(sums[c] or 0) if sums else 0,
            "percent": round(100.0 * int(sums[c] or 0) / pushes, 4) if sums and pushes else 0.0,
        }
        for c, name in ERROR_COLUMNS.items()
    ]


def totals(samples: DataFrame, line: list[dict[str, Any]]) -> dict[str, Any]:
    from pyspark.sql import functions as F

    columns = [c for c in SUMMED if c != "clients_live"]
    sums = samples.agg(
        *[F.sum(F.coalesce(c, F.lit(0))).cast("long").alias(c) for c in columns],
        F.max("latency_max_ms").alias("latency_max_ms"),
        F.max("memory_bytes").alias("memory"),
    ).first()
    hist = (
        samples.select(F.posexplode("latency_hist").alias("pos", "n"))
        .groupBy("pos")
        .agg(F.sum("n").alias("n"))
        .orderBy("pos")
        .collect()
    )
    counts = [int(r["n"]) for r in hist]
    out: dict[str, Any] = {c: int(sums[c] or 0) if sums else 0 for c in columns}
    out["latency_p50_ms"] = histogram_percentile(counts, 50)
    out["latency_p99_ms"] = histogram_percentile(counts, 99)
    out["latency_max_ms"] = float(sums["latency_max_ms"] or 0.0) if sums else 0.0
    out["peak_clients_live"] = max((int(r["clients_live"]) for r in line), default=0)
    memory = sums["memory"] if sums else None
    out["peak_memory_mib"] = round(memory / (1 << 20), 1) if memory else None
    return out


def trend(spark: SparkSession, nights: Sequence[str | Path]) -> list[dict[str, Any]]:
    """One row per night (each a soak output folder), oldest first."""
    rows = []
    for night in nights:
        samples = read_samples(spark, [night])
        line = timeline(samples)
        if not line:
            continue
        summary = totals(samples, line)
        first = samples.agg({"bucket_start": "min", "run_id": "max"}).first()
        rows.append(
            {
                "night": str(night),
                "run_id": first["max(run_id)"] if first else None,
                "started": first["min(bucket_start)"] if first else None,
                **summary,
            }
        )
    return sorted(rows, key=lambda r: r["started"] or 0)


def soak_tables(spark: SparkSession, folders: Sequence[str | Path]) -> dict[str, Any]:
    """The report's tables from the samples of `folders` (one run, any number of shards)."""
    samples = read_samples(spark, folders).cache()
    try:
        line = timeline(samples)
        return {
            "engine": "spark",
            "timeline": line,
            "errors": errors(samples),
            "totals": totals(samples, line),
        }
    finally:
        samples.unpersist()


def write_tables(spark: SparkSession, tables: dict[str, Any], out: Path) -> None:
    """`soak-tables.json`, and each table as Parquet under `soak-tables/`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / TABLES_FILE).write_text(json.dumps(tables, indent=1, default=str), encoding="utf-8")
    for name in ("timeline", "errors", "trend"):
        if tables.get(name):
            rows = tables[name]
            schema = _schema_of(rows)
            doubles = {f.name for f in schema.fields if f.dataType.typeName() == "double"}
            rows = [{k: float(v) if k in doubles and v is not None else v for k, v in r.items()}
                    for r in rows]  # fmt: skip
            frame = spark.createDataFrame(rows, schema=schema)
            frame.write.mode("overwrite").parquet(str(out / "soak-tables" / name))


def _schema_of(rows: Sequence[dict[str, Any]]) -> Any:
    """A table's schema from its values (a column with no value at all: double)."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    fields = []
    for key in rows[0]:
        values = [r.get(key) for r in rows if r.get(key) is not None]
        if any(isinstance(v, str) for v in values):
            kind: Any = StringType()
        elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            kind = LongType()
        else:
            kind = DoubleType()
        fields.append(StructField(key, kind, True))
    return StructType(fields)


def main(argv: Sequence[str] | None = None) -> int:
    from kconform.fixtures.spark import local_spark

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", nargs="+", default=[], help="soak output folders (shards)")
    parser.add_argument("--trend", nargs="+", default=[], help="one soak output folder a night")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--master", default=None, help="default: spark-submit's (plain python: local)"
    )
    args = parser.parse_args(argv)
    if not args.samples and not args.trend:
        parser.error("give --samples or --trend")
    spark = local_spark(args.master, app="kconform-soak")
    tables: dict[str, Any] = (
        soak_tables(spark, args.samples) if args.samples else {"engine": "spark"}
    )
    if args.trend:
        tables["trend"] = trend(spark, args.trend)
    write_tables(spark, tables, args.out)
    print(
        f"{args.out / TABLES_FILE}: {len(tables.get('timeline', []))} intervals, "
        f"{len(tables.get('trend', []))} nights"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
