"""The Spark session the soak pipeline's tests share with the volume tests (one JVM start)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from kconform.fixtures.spark import PANDAS_WARNING, SHARED_SPARK

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("filterwarnings", f"ignore:{PANDAS_WARNING}:FutureWarning")


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    yield SHARED_SPARK.get()
    SHARED_SPARK.stop()
