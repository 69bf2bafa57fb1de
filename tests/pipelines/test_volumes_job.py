"""The volume comparison (Spark job and its pandas twin): what is flagged, what is not, and why.

Hand-built ledgers pin each rule at its edges (records exact, byte interval ends, compressed
bounds, missing readings, baselines); synthetic runs with injected faults check that exactly
the faulty rows are flagged and listed first; the pandas implementation must agree with Spark
row for row, or the benchmark would compare different computations.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from kconform.engine.volumes.compare import compare_volumes
from kconform.engine.volumes.model import (
    LEDGER_SCHEMA,
    RESULT_COLUMNS,
    RESULT_DIR,
    SAMPLES_SCHEMA,
    SUMMARY_FILE,
    SUMMARY_SCHEMA,
    Tolerance,
)
from kconform.pipelines.volumes_pandas import compare_volumes_pandas
from kconform.pipelines.volumes_synthetic import T0, synthetic

pytestmark = pytest.mark.spark
KEY = ("source", "metric", "topic", "partition")
Judge = Callable[..., dict[tuple[Any, ...], dict[str, Any]]]


def ledger_row(
    topic: str,
    partition: int,
    records: int,
    payload: int,
    compression: str = "none",
    first: int = 0,
) -> dict[str, Any]:
    return {
        "topic": topic,
        "partition": partition,
        "first_offset": first,
        "last_offset": first + records - 1,
        "records": records,
        "key_bytes": 0,
        "value_bytes": payload,
        "bytes": payload,
        "first_delivery": T0 + 10,
        "last_delivery": T0 + 20,
        "compression": compression,
    }


def reading(
    source: str,
    metric: str,
    topic: str,
    partition: int,
    before: float | None,
    after: float,
    at: float = T0 + 30,
) -> list[dict[str, Any]]:
    rows = [] if before is None else [(before, T0 + 5)]
    rows.append((after, at))
    return [
        {
            "source": source,
            "topic": topic,
            "partition": partition,
            "metric": metric,
            "value": float(v),
            "timestamp": t,
        }
        for v, t in rows
    ]


@pytest.fixture(params=["spark", "pandas"])
def judge(request: pytest.FixtureRequest, tmp_path: Path) -> Judge:
    """Run one engine on hand-built rows; the result rows by (source, metric, topic, partition)."""

    def run(
        ledger: list[dict[str, Any]], samples: list[dict[str, Any]], **options: Any
    ) -> dict[tuple[Any, ...], dict[str, Any]]:
        pq.write_table(pa.Table.from_pylist(ledger, schema=LEDGER_SCHEMA), tmp_path / "l.parquet")
        pq.write_table(pa.Table.from_pylist(samples, schema=SAMPLES_SCHEMA), tmp_path / "s.parquet")
        args = (tmp_path / "l.parquet", tmp_path / "s.parquet", tmp_path / request.param)
        if request.param == "spark":
            summary = compare_volumes(request.getfixturevalue("spark"), *args, **options)
        else:
            summary = compare_volumes_pandas(*args, **options)
        assert summary["schema"] == SUMMARY_SCHEMA
        rows = pq.read_table(tmp_path / request.param / RESULT_DIR).to_pylist()
        return {tuple(r[k] for k in KEY): r for r in rows}

    return run


def test_records_are_exact_from_a_nonzero_baseline(judge: Judge) -> None:
    ledger = [ledger_row("t", 0, 40, 4000, first=100), ledger_row("t", 1, 10, 900, first=7)]
    samples = reading("list_offsets", "end_offset", "t", 0, 100, 140) + reading(
        "list_offsets", "end_offset", "t", 1, 7, 18
    )
    rows = judge(ledger, samples)
    ok, off = rows["list_offsets", "end_offset", "t", 0], rows["list_offsets", "end_offset", "t", 1]
    assert (ok["status"], ok["delta"], ok["baseline"], ok["difference"]) == ("ok", 40, 100, 0)
    assert (off["status"], off["delta"], off["difference"]) == ("mismatch", 11, 1)


EDGES = {  # topic: (BytesIn observed for 10 records of 1000 payload bytes, status)
    "bottom": (1000 + 7 * 10 + 61, "ok"),  # one batch, smallest record framing
    "below": (1000 + 7 * 10 + 60, "mismatch"),
    "top": (1000 + 97 * 10, "ok"),  # a batch per record, widest framing
    "above": (1000 + 97 * 10 + 1, "mismatch"),
}


def test_uncompressed_byte_interval_ends(judge: Judge) -> None:
    ledger = [ledger_row(topic, 0, 10, 1000) for topic in EDGES]
    samples = [
        row
        for topic, (observed, _) in EDGES.items()
        for row in reading("kip977", "BytesInPerSec", topic, 0, None, observed)
    ]
    rows = judge(ledger, samples)
    for topic, (observed, status) in EDGES.items():
        row = rows["kip977", "BytesInPerSec", topic, 0]
        assert (row["expected_low"], row["expected_high"]) == (1131, 1970)
        assert row["status"] == status, topic
        assert row["baseline"] is None and row["delta"] == observed  # no meter before traffic
        assert math.isclose(row["overhead_per_record"], (observed - 1000) / 10)


def test_compressed_bounds_allow_shrinking_and_bounded_growth(judge: Judge) -> None:
    ledger = [ledger_row("t", p, 10, 1000, "gzip") for p in range(3)]
    high = math.ceil(7 / 6 * (1000 + 36 * 10)) + (61 + 64) * 10
    samples = [
        *reading("kip977", "BytesInPerSec", "t", 0, None, 61),  # compressed to a header
        *reading("kip977", "BytesInPerSec", "t", 1, None, high),
        *reading("kip977", "BytesInPerSec", "t", 2, None, high + 1),
    ]
    rows = judge(ledger, samples)
    assert [rows["kip977", "BytesInPerSec", "t", p]["status"] for p in range(3)] == [
        "ok",
        "ok",
        "mismatch",
    ]
    assert rows["kip977", "BytesInPerSec", "t", 1]["expected_high"] == high


def test_a_partition_without_a_reading_after_the_traffic_is_missing(judge: Judge) -> None:
    ledger = [ledger_row("t", 0, 5, 500), ledger_row("t", 1, 5, 500)]
    samples = reading("kip977", "MessagesInPerSec", "t", 0, None, 5) + reading(
        "kip977", "MessagesInPerSec", "t", 1, 0, 5, at=T0 + 15
    )  # stale
    samples += reading("kip977", "MessagesInPerSec", "u", 0, None, 3)  # traffic the ledger lacks
    ledger.append(ledger_row("v", 0, 4, 400))  # a topic the meter never saw
    rows = judge(ledger, samples)
    assert rows["kip977", "MessagesInPerSec", "t", 0]["status"] == "ok"
    assert rows["kip977", "MessagesInPerSec", "t", 1]["status"] == "missing"
    assert rows["kip977", "MessagesInPerSec", "v", 0]["status"] == "missing"
    assert rows["kip977", "MessagesInPerSec", "v", 0]["observed"] is None
    unexpected = rows["kip977", "MessagesInPerSec", "u", 0]
    assert (unexpected["status"], unexpected["produced_records"], unexpected["difference"]) == (
        "mismatch",
        0,
        3,
    )


def test_topic_level_meters_are_judged_against_topic_totals(judge: Judge) -> None:
    ledger = [ledger_row("t", 0, 5, 500), ledger_row("t", 1, 7, 700)]
    samples = reading("kip977", "MessagesInPerSec", "t", -1, None, 12) + reading(
        "broker_topic", "MessagesInPerSec", "t", -1, 3, 14
    )
    rows = judge(ledger, samples)
    assert rows["kip977", "MessagesInPerSec", "t", -1]["status"] == "ok"
    topic_level = rows["broker_topic", "MessagesInPerSec", "t", -1]
    assert (topic_level["status"], topic_level["delta"]) == ("mismatch", 11)
    assert topic_level["ledger_share"] is None and topic_level["hot_ledger"] is None
    assert ("kip977", "MessagesInPerSec", "t", 0) not in rows  # topic-level only: not expected


def test_unjudged_metrics_are_kept_out(judge: Judge) -> None:
    samples = reading("kip977", "MessagesInPerSec", "t", 0, None, 5) + reading(
        "kip977", "TotalFetchRequestsPerSec", "t", 0, None, 9
    )
    rows = judge([ledger_row("t", 0, 5, 500)], samples)
    assert list(rows) == [("kip977", "MessagesInPerSec", "t", 0)]


def test_hot_partitions_and_ranks(judge: Judge) -> None:
    # 60 / 25 / 15 records of 3 partitions: hot is >= 1.5 x 1/3 = 50%; the meter swaps 1 and 2
    ledger = [
        ledger_row("t", 0, 60, 6000),
        ledger_row("t", 1, 25, 2500),
        ledger_row("t", 2, 15, 1500),
    ]
    samples = [
        *reading("list_offsets", "end_offset", "t", 0, 0, 60),
        *reading("list_offsets", "end_offset", "t", 1, 0, 25),
        *reading("list_offsets", "end_offset", "t", 2, 0, 15),
        *reading("kip977", "MessagesInPerSec", "t", 0, None, 30),
        *reading("kip977", "MessagesInPerSec", "t", 1, None, 55),
        *reading("kip977", "MessagesInPerSec", "t", 2, None, 15),
    ]
    rows = judge(ledger, samples)
    truth = [rows["list_offsets", "end_offset", "t", p] for p in range(3)]
    assert [r["hot_ledger"] for r in truth] == [True, False, False]
    assert [r["ledger_rank"] for r in truth] == [1, 2, 3] == [r["source_rank"] for r in truth]
    assert math.isclose(truth[0]["ledger_share"], 0.6)
    meter = [rows["kip977", "MessagesInPerSec", "t", p] for p in range(3)]
    assert [r["hot_source"] for r in meter] == [False, True, False]
    assert [r["source_rank"] for r in meter] == [2, 1, 3]


def _drop(samples: pa.Table, topic: str, partition: int, source: str) -> pa.Table:
    hit = pc.and_(
        pc.and_(pc.equal(samples["topic"], topic), pc.equal(samples["partition"], partition)),
        pc.equal(samples["source"], source),
    )
    return samples.filter(pc.invert(hit))


def test_synthetic_faults_are_flagged_first_and_pandas_agrees(spark: Any, tmp_path: Path) -> None:
    faults = [
        ("t0", 1, "MessagesInPerSec", 1.0),
        ("t2", 0, "end_offset", -2.0),
        ("t3", 2, "BytesInPerSec", 50_000.0),
    ]
    ledger, samples = synthetic(24, samples=20, partitions_per_topic=6, faults=faults)
    samples = _drop(samples, "t1", 4, "kip977")
    pq.write_table(ledger, tmp_path / "l.parquet")
    pq.write_table(samples, tmp_path / "s.parquet")
    args = (tmp_path / "l.parquet", tmp_path / "s.parquet")
    by_spark = compare_volumes(spark, *args, tmp_path / "spark", max_rows=10)
    by_pandas = compare_volumes_pandas(*args, tmp_path / "pandas", max_rows=10)

    flagged = {(r["status"], r["topic"], r["partition"], r["metric"]) for r in by_spark["rows"][:5]}
    assert flagged == {
        ("mismatch", "t0", 1, "MessagesInPerSec"),
        ("mismatch", "t2", 0, "end_offset"),
        ("mismatch", "t3", 2, "BytesInPerSec"),
        ("missing", "t1", 4, "MessagesInPerSec"),
        ("missing", "t1", 4, "BytesInPerSec"),
    }
    assert [r["status"] for r in by_spark["rows"][:5]] == ["mismatch"] * 3 + ["missing"] * 2
    assert by_spark["rows"][5]["status"] == "ok" and by_spark["rows_truncated"] == 72 - 10
    assert by_spark["totals"]["mismatch"] == 3 and by_spark["totals"]["missing"] == 2
    assert sum(s["hot_ledger"] for s in by_spark["sources"]) == 3 * 4  # one hot per topic
    on_disk = json.loads((tmp_path / "spark" / SUMMARY_FILE).read_text())
    assert on_disk["rows"] == by_spark["rows"]

    for key in ("rows", "sources", "totals", "window", "tolerance", "rows_truncated"):
        assert by_pandas[key] == by_spark[key], key
    spark_rows = pd.read_parquet(tmp_path / "spark" / RESULT_DIR).sort_values(list(KEY))
    pandas_rows = pd.read_parquet(tmp_path / "pandas" / RESULT_DIR).sort_values(list(KEY))
    assert list(pandas_rows.columns) == list(RESULT_COLUMNS)
    for column in RESULT_COLUMNS:
        left = spark_rows[column].astype(object).where(spark_rows[column].notna(), None).tolist()
        right = pandas_rows[column].astype(object).where(pandas_rows[column].notna(), None).tolist()
        assert [_round(v) for v in left] == [_round(v) for v in right], column


def _round(value: Any) -> Any:
    return round(value, 9) if isinstance(value, float) else value


def test_an_empty_ledger_is_refused(spark: Any, tmp_path: Path) -> None:
    pq.write_table(LEDGER_SCHEMA.empty_table(), tmp_path / "l.parquet")
    pq.write_table(SAMPLES_SCHEMA.empty_table(), tmp_path / "s.parquet")
    with pytest.raises(ValueError, match="ledger is empty"):
        compare_volumes(spark, tmp_path / "l.parquet", tmp_path / "s.parquet", tmp_path / "o")


@pytest.mark.slow
def test_spark_submit_entry_point(tmp_path: Path) -> None:
    """`spark-submit pipelines/volumes.py ...` exits 1 on a mismatch and writes the summary."""
    ledger, samples = synthetic(
        6, samples=5, partitions_per_topic=3, faults=[("t1", 2, "end_offset", 1.0)]
    )
    pq.write_table(ledger, tmp_path / "l.parquet")
    pq.write_table(samples, tmp_path / "s.parquet")
    script = Path(__file__).resolve().parents[2] / "pipelines" / "volumes.py"
    submit = Path(sys.executable).with_name("spark-submit")
    done = subprocess.run(
        [
            str(submit),
            "--master",
            "local[1]",
            "--conf",
            "spark.ui.enabled=false",
            str(script),
            "--ledger",
            str(tmp_path / "l.parquet"),
            "--samples",
            str(tmp_path / "s.parquet"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PATH": f"{submit.parent}:/usr/bin:/bin",
        },
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 mismatches" in done.stdout
    summary = json.loads((tmp_path / "out" / SUMMARY_FILE).read_text())
    assert summary["rows"][0]["status"] == "mismatch" and summary["rows"][0]["topic"] == "t1"


def test_tolerance_is_recorded_in_the_summary(judge: Judge) -> None:
    rows = judge(
        [ledger_row("t", 0, 1, 10)],
        reading("kip977", "MessagesInPerSec", "t", 0, None, 1),
        tolerance=Tolerance(hot_factor=2.0),
    )
    assert rows["kip977", "MessagesInPerSec", "t", 0]["hot_ledger"] is False  # 100% < 2 x 100%
