"""The volume comparison in one process with pandas: the same rules as the Spark job.

Why it exists: the scale benchmark (`benchmarks/volumes.py`) measures where Spark's start-up
and shuffle costs pay off against a plain in-memory implementation, and the tests hold both to
identical results on the same input, so the benchmark compares like with like. The rules, the
tolerance and their reasons are `kconform.engine.volumes.compare`'s; only the engine differs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kconform.engine.volumes.model import (
    RESULT_COLUMNS,
    RESULT_DIR,
    STATUS_ORDER,
    SUMMARY_FILE,
    SourceStats,
    Tolerance,
    quantity_of,
    summarize,
)
from kconform.errors import UsageError

KEYS = ["source", "metric", "topic", "partition"]
MAX_SUMMARY_ROWS = 1000


def compare_volumes_pandas(
    ledger_path: str | Path,
    samples_path: str | Path,
    out_dir: str | Path,
    tolerance: Tolerance | None = None,
    *,
    max_rows: int = MAX_SUMMARY_ROWS,
) -> dict[str, Any]:
    """As `compare_volumes`, without Spark: the result as one Parquet file in the same folder
    name, and the same summary JSON."""
    tolerance = tolerance or Tolerance()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ledger = pd.read_parquet(ledger_path)
    samples = pd.read_parquet(samples_path)
    if ledger.empty:
        raise UsageError("the ledger is empty: nothing was delivered, nothing to compare")
    window = (float(ledger["first_delivery"].min()), float(ledger["last_delivery"].max()))
    result = comparison(ledger, samples, window, tolerance)
    (out / RESULT_DIR).mkdir(exist_ok=True)
    result.to_parquet(out / RESULT_DIR / "part-0.parquet", index=False)
    stats = source_stats(result)
    order = result["status"].map(STATUS_ORDER)
    ranked = result.assign(_o=order).sort_values(
        ["_o", "ledger_share", "topic", "partition", "source", "metric"],
        ascending=[True, False, True, True, True, True],
        na_position="last",
    )
    rows = ranked.head(max_rows)[list(RESULT_COLUMNS)].to_dict("records")
    totals = {
        "ranges": len(ledger),
        "topics": int(ledger["topic"].nunique()),
        "partitions": len(ledger[["topic", "partition"]].drop_duplicates()),
        "records": int(ledger["records"].sum()),
        "bytes": int(ledger["bytes"].sum()),
    }
    summary = summarize(
        rows,
        stats,
        window=window,
        tolerance=tolerance,
        total_rows=len(result),
        ledger_totals=totals,
        engine="pandas",
    )
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def comparison(
    ledger: pd.DataFrame, samples: pd.DataFrame, window: tuple[float, float], tolerance: Tolerance
) -> pd.DataFrame:
    """One row per (source, metric, topic, partition) with RESULT_COLUMNS."""
    start, end = window
    samples = samples.reset_index(drop=True)
    values = samples["value"].to_numpy()
    grouped = samples.groupby(KEYS, sort=False)
    readings = grouped["timestamp"].agg(last_sample="max", samples="size")
    readings["observed"] = values[grouped["timestamp"].idxmax().to_numpy()]
    early = samples[samples["timestamp"] <= start]
    first = early.groupby(KEYS, sort=False)["timestamp"].idxmax()
    readings["baseline"] = pd.Series(values[first.to_numpy()], index=first.index)
    readings = readings.reset_index()
    pairs = readings[["source", "metric"]].drop_duplicates()
    pairs["quantity"] = [quantity_of(s, m) for s, m in pairs.itertuples(index=False)]
    readings = readings.merge(pairs.dropna(), on=["source", "metric"])

    per_partition = ledger.groupby(["topic", "partition"], as_index=False).agg(
        produced_records=("records", "sum"),
        produced_bytes=("bytes", "sum"),
        compressed=("compression", lambda c: int((c != "none").any())),
    )
    per_topic = (
        per_partition.groupby("topic", as_index=False)
        .agg(
            produced_records=("produced_records", "sum"),
            produced_bytes=("produced_bytes", "sum"),
            compressed=("compressed", "max"),
        )
        .assign(partition=-1)
    )
    produced = pd.concat([per_partition, per_topic], ignore_index=True)
    levels = readings.assign(pl=readings["partition"] >= 0)[
        ["source", "metric", "quantity", "pl"]
    ].drop_duplicates()
    expected = pd.concat(
        [
            levels[levels["pl"]].merge(per_partition[["topic", "partition"]], how="cross"),
            levels[~levels["pl"]].merge(per_topic[["topic", "partition"]], how="cross"),
        ]
    ).drop(columns="pl")
    key_columns = ["source", "metric", "quantity", "topic", "partition"]
    keys = pd.concat([expected, readings[key_columns]]).drop_duplicates()
    seen = pd.concat(
        [
            per_partition[["topic", "partition"]],
            readings.loc[readings["partition"] >= 0, ["topic", "partition"]],
        ]
    ).drop_duplicates()
    width = seen.groupby("topic").size().rename("topic_partitions").reset_index()
    rows = (
        keys.merge(readings, on=key_columns, how="left")
        .merge(produced, on=["topic", "partition"], how="left")
        .merge(width, on="topic", how="left")
    )
    for column in ("produced_records", "produced_bytes", "compressed"):
        rows[column] = rows[column].fillna(0).astype("int64")
    rows["delta"] = rows["observed"] - rows["baseline"].fillna(0.0)
    _bounds(rows, tolerance)
    delta, low, high = rows["delta"], rows["expected_low"], rows["expected_high"]
    missing = rows["observed"].isna() | (rows["last_sample"] < end)
    inside = (delta >= low) & (delta <= high)
    rows["status"] = np.where(missing, "missing", np.where(inside, "ok", "mismatch"))
    rows["difference"] = np.where(
        delta > high, delta - high, np.where(delta < low, delta - low, 0.0)
    )
    rows.loc[delta.isna(), "difference"] = np.nan
    _shares(rows, tolerance)
    rows["samples"] = rows["samples"].astype("Int64")
    rows["partition"] = rows["partition"].astype("int32")
    return rows[list(RESULT_COLUMNS)].reset_index(drop=True)


def _bounds(rows: pd.DataFrame, tolerance: Tolerance) -> None:
    n = rows["produced_records"].to_numpy(dtype=np.float64)
    b = rows["produced_bytes"].to_numpy(dtype=np.float64)
    compressed = rows["compressed"].to_numpy() == 1
    low, high = np.zeros(len(rows)), np.zeros(len(rows))
    for flag in (False, True):
        lb, ln, lc, hb, hn, hc = tolerance.coefficients(flag)
        chosen = compressed == flag
        low = np.where(chosen, np.floor(lb * b + ln * n + lc), low)
        high = np.where(chosen, np.ceil(hb * b + hn * n + hc), high)
    low, high = np.where(n <= 0, 0.0, low), np.where(n <= 0, 0.0, high)
    records = (rows["quantity"] == "records").to_numpy()
    rows["expected_low"] = np.where(records, n - tolerance.records, low)
    rows["expected_high"] = np.where(records, n + tolerance.records, high)


def _shares(rows: pd.DataFrame, tolerance: Tolerance) -> None:
    level = rows["partition"] >= 0
    rows["_produced"] = np.where(
        rows["quantity"] == "records", rows["produced_records"], rows["produced_bytes"]
    ).astype(np.float64)
    group = [rows["source"], rows["metric"], rows["topic"], level]
    even = tolerance.hot_factor / rows["topic_partitions"]
    for column, share, rank in (
        ("_produced", "ledger_share", "ledger_rank"),
        ("delta", "source_share", "source_rank"),
    ):
        total = rows[column].groupby(group).transform("sum")
        rows[share] = (rows[column] / total).where(level & (total > 0))
        ranks = rows[column].groupby(group).rank(method="dense", ascending=False)
        rows[rank] = ranks.where(level).astype("Int64")
    for share, hot in (("ledger_share", "hot_ledger"), ("source_share", "hot_source")):
        rows[hot] = pd.array((rows[share] >= even).fillna(False), dtype="boolean")
        rows.loc[~level, hot] = pd.NA
    bytes_like = rows["quantity"].isin(["bytes", "bytes_out"]) & (rows["produced_records"] > 0)
    per_record = (rows["delta"] - rows["produced_bytes"]) / rows["produced_records"]
    rows["overhead_per_record"] = per_record.where(bytes_like)


def source_stats(result: pd.DataFrame) -> list[SourceStats]:
    """The per (source, metric) counts of the summary, as the Spark job computes them."""
    judged = (result["partition"] >= 0) & (result["status"] != "missing")
    hot_ledger = result["hot_ledger"].fillna(False).astype(bool)
    hot_source = result["hot_source"].fillna(False).astype(bool)
    frame = pd.DataFrame(
        {
            "source": result["source"],
            "metric": result["metric"],
            "quantity": result["quantity"],
            "ok": result["status"] == "ok",
            "mismatch": result["status"] == "mismatch",
            "missing": result["status"] == "missing",
            "hot_ledger": hot_ledger,
            "hot_disagreements": judged & (hot_source != hot_ledger),
            "rank_disagreements": judged
            & hot_ledger
            & (result["source_rank"] != result["ledger_rank"]).fillna(True),
        }
    )
    grouped = frame.groupby(["source", "metric", "quantity"])
    counts = grouped.sum().join(grouped.size().rename("rows")).reset_index()
    return [
        SourceStats(**{str(k): (v if isinstance(v, str) else int(v)) for k, v in r.items()})  # type: ignore[arg-type]
        for r in counts.to_dict("records")
    ]
