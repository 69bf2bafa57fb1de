"""Synthetic ledgers and samples for the volume comparison: tests and the scale benchmark.

Shaped like a real volume run, only larger: topics of `partitions_per_topic` partitions with
skewed (Zipf) traffic so some partitions are hot; one ledger range per partition; per partition
and metric `samples` cumulative readings evenly spaced over a 100 s window whose traffic runs
from 10 s to 90 s (end offsets start at a non-zero base, meters at zero), with a batch framing
inside the byte tolerance. `faults` adds a miscount to chosen readings, so tests know exactly
which rows must be flagged. Vectorised with numpy: 10 million sample rows take seconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from kconform.engine.volumes.model import LEDGER_SCHEMA, SAMPLES_SCHEMA

T0 = 1_800_000_000.0
START, END, SPAN = 10.0, 90.0, 100.0
METRICS: tuple[tuple[str, str], ...] = (
    ("list_offsets", "end_offset"),
    ("kip977", "MessagesInPerSec"),
    ("kip977", "BytesInPerSec"),
)
Fault = tuple[str, int, str, float]  # (topic, partition, metric, amount added to the final value)


def synthetic(
    partitions: int,
    *,
    samples: int = 100,
    partitions_per_topic: int = 10,
    records_per_partition: int = 1000,
    metrics: Sequence[tuple[str, str]] = METRICS,
    faults: Sequence[Fault] = (),
    seed: int = 977,
) -> tuple[pa.Table, pa.Table]:
    """(ledger, samples) tables; topic `t{i}` has partitions 0..partitions_per_topic-1."""
    rng = np.random.default_rng(seed)
    per_topic = min(partitions_per_topic, partitions)
    index = np.arange(partitions)
    topic_index, partition = index // per_topic, (index % per_topic).astype(np.int32)
    topics = np.array([f"t{i}" for i in range(int(topic_index.max()) + 1)], dtype=object)
    topic = topics[topic_index]
    # Zipf (s = 2) over the partitions of a topic, shuffled so the hot one is not always 0
    order = np.lexsort((rng.random(partitions), topic_index))
    rank = np.empty(partitions, dtype=np.int64)
    rank[order] = np.arange(partitions) - topic_index[order] * per_topic
    weight = 1.0 / (1.0 + rank) ** 2.0
    records = np.maximum(1, (records_per_partition * per_topic * weight / 3.0).astype(np.int64))
    value_bytes = records * rng.integers(100, 400, partitions)
    key_bytes = records * 6
    payload = key_bytes + value_bytes
    ledger = pa.table(
        {
            "topic": topic,
            "partition": partition,
            "first_offset": np.full(partitions, 500),
            "last_offset": 500 + records - 1,
            "records": records,
            "key_bytes": key_bytes,
            "value_bytes": value_bytes,
            "bytes": payload,
            "first_delivery": np.full(partitions, T0 + START),
            "last_delivery": np.full(partitions, T0 + END),
            "compression": np.full(partitions, "none", dtype=object),
        },
        schema=LEDGER_SCHEMA,
    )
    batches = np.ceil(records / 50.0)
    finals = {
        "end_offset": records.astype(np.float64),
        "MessagesInPerSec": records.astype(np.float64),
        "BytesInPerSec": (payload + 12 * records + 61 * batches).astype(np.float64),
    }
    times = T0 + np.linspace(0.0, SPAN - 1.0, samples)
    ramp = np.clip((times - (T0 + START)) / (END - START), 0.0, 1.0)
    position = {(str(t), int(p)): i for i, (t, p) in enumerate(zip(topic, partition, strict=True))}
    topic_codes = pa.array(np.repeat(topic_index, samples).astype(np.int32))
    chunks = []
    for source, metric in metrics:
        final = finals[metric].copy()
        for f_topic, f_partition, f_metric, amount in faults:
            if f_metric == metric:
                final[position[f_topic, f_partition]] += amount
        values = (500.0 if metric == "end_offset" else 0.0) + np.floor(np.outer(final, ramp))
        rows = partitions * samples
        chunks.append(
            pa.table(
                {
                    "source": _repeated(source, rows),
                    "topic": _strings(topic_codes, topics),
                    "partition": np.repeat(partition, samples),
                    "metric": _repeated(metric, rows),
                    "value": values.ravel(),
                    "timestamp": np.tile(times, partitions),
                },
                schema=SAMPLES_SCHEMA,
            )
        )
    return ledger, pa.concat_tables(chunks)


def _repeated(text: str, n: int) -> pa.Array:
    return _strings(pa.array(np.zeros(n, dtype=np.int32)), np.array([text], dtype=object))


def _strings(codes: pa.Array, names: np.ndarray) -> pa.Array:
    """Strings built through a dictionary: 30 million short strings without 30 million objects."""
    return pa.DictionaryArray.from_arrays(codes, pa.array(names, pa.string())).cast(pa.string())


def write_synthetic(directory: Path, partitions: int, **options: object) -> Mapping[str, Path]:
    """Write `ledger.parquet` and `samples.parquet` under `directory`; their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"ledger": directory / "ledger.parquet", "samples": directory / "samples.parquet"}
    metrics = cast(Sequence[tuple[str, str]], options.pop("metrics", METRICS))
    with pq.ParquetWriter(paths["samples"], SAMPLES_SCHEMA) as writer:
        for one in metrics:  # one metric at a time: the peak is a third of the whole
            ledger, samples = synthetic(partitions, metrics=[one], **options)  # type: ignore[arg-type]
            writer.write_table(samples, row_group_size=1 << 20)
            del samples
    pq.write_table(ledger, paths["ledger"])
    return paths
