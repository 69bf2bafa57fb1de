"""Spark sessions for the pipelines: one per process, cheap to start, started only when needed.

The pipelines' data are per partition (thousands to hundreds of thousands of rows), so start-up
and small shuffles matter more than parallelism. The harness runs them on `local[2]`; under
spark-submit the master and resources are spark-submit's.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PANDAS_WARNING = "PySpark does not yet fully support pandas"


def local_spark(
    master: str | None = "local[2]",
    *,
    driver_memory: str | None = None,
    app: str = "kconform-volumes",
) -> SparkSession:
    """The session this process uses (created on first call; later calls get the same one).

    Small shuffles (the comparisons are per partition, thousands of rows), no UI, UTC: start-up
    is the cost that matters here, not parallelism. `master` None keeps spark-submit's.
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName(app)
    if master:
        builder = builder.master(master)
    builder = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.adaptive.enabled", "true")
    )
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    # pyspark 4.x probes pandas for optional Arrow paths and warns about pandas 3; this job
    # never converts between Spark and pandas
    warnings.filterwarnings("ignore", PANDAS_WARNING, FutureWarning)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class LazySpark:
    """One SparkSession per process, started on first use: pytest sessions that deselect the
    Spark-backed tests never pay the JVM's ~5 s start. Thread-safe (cases run Spark in a worker
    thread); `stop` is idempotent."""

    def __init__(self, master: str = "local[2]") -> None:
        self.master = master
        self._spark: SparkSession | None = None
        self._lock = threading.Lock()

    def get(self) -> SparkSession:
        with self._lock:
            if self._spark is None:
                self._spark = local_spark(self.master)
            return self._spark

    def stop(self) -> None:
        with self._lock:
            if self._spark is not None:
                self._spark.stop()
                self._spark = None


SHARED_SPARK = LazySpark()
"""The process's session for test fixtures (suites/volumes and tests/pipelines share it)."""
