"""The Spark job (`pipelines/soak.py`) against the Python tables it must agree with, on samples
from two shards with faults, missing broker readings and skewed intervals; and the trend."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kconform.pipelines.soak import soak_tables, trend, write_tables
from kconform.soak import tables
from kconform.soak.latency import latency_histogram
from kconform.soak.samples import SampleWriter, read_samples

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def night(folder: Path, seed: int, shards: int = 2, intervals: int = 8) -> None:
    rng = random.Random(seed)
    for shard in range(shards):
        writer = SampleWriter(folder, run_id=f"run{seed}", shard=shard)
        for i in range(intervals):
            start = 1_000.0 + seed * 10_000 + i * 60 + shard * 0.7  # shards start a bit apart
            pushes = rng.randrange(100, 200)
            writer.write({
                "bucket_start": start, "bucket_end": start + 60 + rng.random(),
                "offset_s": i * 60 + shard * 0.3, "clients_live": 50 + i, "pushes": pushes,
                "pushes_accepted": pushes - 3, "pushes_rejected": 3, "rejected_117": 2,
                "rejected_89": 1, "throttled": 1, "lost": rng.randrange(3),
                "latency_hist": latency_histogram(rng.expovariate(0.3) for _ in range(pushes)),
                "latency_max_ms": 40.0 + i, "loop_lag_max_ms": 2.0,
                "memory_bytes": None if i == 2 else (400 + i * 3 + shard) << 20,
                "connections": 50 + i, "missing_total": 0,
                "faults": "restart of node 1" if i == 4 and shard == 0 else "",
            })  # fmt: skip


def close(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(float(a) - float(b)) < 1e-6
    return bool(a == b)


def test_spark_tables_equal_the_python_tables(spark: SparkSession, tmp_path: Path) -> None:
    night(tmp_path, seed=1)
    by_spark = soak_tables(spark, [tmp_path])
    by_python = tables.tables(read_samples(tmp_path))
    assert by_spark["engine"] == "spark"
    assert by_spark["errors"] == by_python["errors"]
    assert by_spark["totals"].keys() == by_python["totals"].keys()
    for key, value in by_python["totals"].items():
        assert close(by_spark["totals"][key], value), key
    assert len(by_spark["timeline"]) == len(by_python["timeline"]) == 8
    for mine, theirs in zip(by_spark["timeline"], by_python["timeline"], strict=True):
        for key, value in theirs.items():
            assert close(mine[key], value), (key, mine[key], value)
    assert by_python["timeline"][4]["faults"] == "restart of node 1"
    assert by_python["timeline"][2]["memory_bytes"] is None  # no reading: not a zero
    write_tables(spark, by_spark, tmp_path)
    written = json.loads((tmp_path / "soak-tables.json").read_text())
    assert written["totals"]["pushes"] == by_python["totals"]["pushes"]
    assert spark.read.parquet(str(tmp_path / "soak-tables" / "timeline")).count() == 8


def test_trend_is_one_row_per_night_oldest_first(spark: SparkSession, tmp_path: Path) -> None:
    for seed in (3, 2):
        night(tmp_path / f"night{seed}", seed=seed, shards=1, intervals=3)
    rows = trend(spark, [tmp_path / "night3", tmp_path / "night2"])
    assert [r["run_id"] for r in rows] == ["run2", "run3"]
    assert all(r["pushes"] > 0 and r["latency_p99_ms"] > 0 for r in rows)
