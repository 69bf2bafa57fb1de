"""One SparkSession for the pipeline tests (the JVM starts in ~5 s; start it once, lazily).

Shared with suites/volumes through `SHARED_SPARK`, so a `make test` run pays one JVM start for
both. The `spark` marker lets `tox -e spark` select these tests.
"""

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
