"""Payloads the engine and the cases push: valid OTLP MetricsData as a Java-like producer
would send it (KIP-714 'Metrics naming and format')."""

from __future__ import annotations

import time

from kconform.codecs.otlp import build_metrics_data, counter, gauge
from kconform.fixtures.types import RECEIVER_THROW_METRIC

__all__ = ["payload", "receiver_throw_payload"]


def payload(name_prefix: str = "org.apache.kafka.producer.", points: int = 3) -> bytes:
    """A valid OTLP MetricsData a Java-like producer would push."""
    now = time.time_ns()
    return build_metrics_data([
        *(gauge(f"{name_prefix}record.queue.time.avg", 1.5 + i, time_unix_nano=now)
          for i in range(points - 1)),
        counter(f"{name_prefix}connection.creation.total", 3, delta=True, time_unix_nano=now,
                start_time_unix_nano=now - 1_000_000_000),
    ])  # fmt: skip


def receiver_throw_payload() -> bytes:
    """A valid OTLP MetricsData that also names RECEIVER_THROW_METRIC: a target's receiver with
    the RECEIVER_FAILURE capability throws on it (ruling 18)."""
    now = time.time_ns()
    return build_metrics_data([
        gauge("org.apache.kafka.producer.record.queue.time.avg", 1.5, time_unix_nano=now),
        gauge(RECEIVER_THROW_METRIC, 1, time_unix_nano=now),
    ])  # fmt: skip
