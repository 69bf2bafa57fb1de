"""Fixtures of the volume cases: one Spark session and one volume run per target, both lazy.

Neither starts anything when requested: a run that deselects these cases, or a target whose
cases are unsupported, pays no JVM start and no traffic (`LazySpark`, `Volumes`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kconform.engine.volumes.session import Volumes
from kconform.fixtures.spark import PANDAS_WARNING, SHARED_SPARK, LazySpark


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("filterwarnings", f"ignore:{PANDAS_WARNING}:FutureWarning")


@pytest.fixture(scope="session")
def lazy_spark() -> Iterator[LazySpark]:
    """The process's Spark session, started by the first case that calls `.get()`."""
    yield SHARED_SPARK
    trouble = SHARED_SPARK.stop()  # an interrupted run still writes its summary and report
    if trouble:
        print(f"kconform: {trouble}", file=sys.stderr)


@pytest.fixture(scope="session")
def volumes(
    lazy_spark: LazySpark, tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Volumes:
    """Each target's volume run, made by the first case that asks for it, in `<folder>/<target>/`:
    the folder `kconform run` names (its report's, shared by its `-j` workers), else beside the
    results file, else a temporary one."""
    folder = pytestconfig.getoption("--kconform-volumes", None)
    results = pytestconfig.getoption("--kconform-results", None)
    if folder:
        directory = Path(folder)
    elif results:
        directory = Path(results).parent / "volumes"
    else:
        directory = tmp_path_factory.mktemp("volumes")
    return Volumes(lazy_spark, directory)
