"""A target's volume run is made once per session, even when the case making it runs out of time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kconform.engine.check import Check
from kconform.engine.model import CaseInfo, Level
from kconform.engine.volumes.session import VOLUME_RUN, Outcome, Volumes
from kconform.errors import HarnessDefect, Inconclusive
from kconform.fixtures.spark import LazySpark

INFO = CaseInfo(
    "kip977.example", "example", "none", Level.MUST, "KIP-977", frozenset(), "broker",
    shares=VOLUME_RUN,
)  # fmt: skip


class SlowVolumes(Volumes):
    """A run that never finishes by itself, counting how often it was started."""

    started = 0

    async def _run(self, check: Check, target: Any) -> Outcome:
        self.started += 1
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


def test_a_run_cut_off_by_its_case_timeout_is_not_made_again(tmp_path: Path) -> None:
    volumes = SlowVolumes(LazySpark(), tmp_path)
    target: Any = type("Target", (), {"name": "reference"})()

    async def two_cases() -> None:
        with pytest.raises(TimeoutError):  # the first case's bound, as the plugin applies it
            await asyncio.wait_for(volumes.outcome(Check(INFO, None), target), 0.05)
        with pytest.raises(Inconclusive, match="did not finish within the case that made it"):
            await asyncio.wait_for(volumes.outcome(Check(INFO, None), target), 5)

    asyncio.run(two_cases())
    assert volumes.started == 1  # the abandoned run may still be writing its result directory


def test_a_case_that_does_not_declare_the_shared_run_is_refused(tmp_path: Path) -> None:
    """Undeclared, `kconform -j` would give the case a worker of its own, which makes the same
    target's run again into the same folder (two Spark jobs committing one Parquet directory)."""
    volumes = SlowVolumes(LazySpark(), tmp_path)
    lone = CaseInfo("kip977.lone", "lone", "none", Level.MUST, "KIP-977", frozenset(), "broker")
    with pytest.raises(HarnessDefect, match=r"kip977\.lone judges the volume run but declares"):
        asyncio.run(volumes.outcome(Check(lone, None), object()))  # type: ignore[arg-type]
    assert volumes.started == 0
