"""A target's volume run, made once per pytest session and shared by the volume cases.

The first case that needs a target's run makes it (its wire log holds the run's admin traffic
and its cleanups restore what the run changed); later cases read the same outcome. A failed run
is remembered too, so every later case says why instead of producing traffic again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from kconform.engine.check import Check
from kconform.engine.volumes.run import VolumeRun, compare, run_volumes
from kconform.engine.volumes.workload import Workload
from kconform.errors import Inconclusive
from kconform.fixtures.targets.base import BrokerTarget
from kconform.pipelines.spark import LazySpark
from kconform.pipelines.volumes_model import RESULT_DIR

WORKLOAD = Workload(topics=2, partitions=3, records=300)
"""Small on purpose (make test): 600 keyed records, 64-1024 byte values, 2 topics x 3 partitions."""
VOLUME_RUN = "volume_run"
"""What every volume case declares it `shares`: `kconform -j` then keeps a target's volume cases
in one worker, so the run is made once and one process writes its folder."""


@dataclass
class Outcome:
    """A target's volume run and its comparison (the result Parquet as rows)."""

    run: VolumeRun
    summary: dict[str, Any]
    rows: list[dict[str, Any]]

    def select(self, source: str, metric: str | None = None) -> list[dict[str, Any]]:
        return sorted(
            (
                r
                for r in self.rows
                if r["source"] == source and (metric is None or r["metric"] == metric)
            ),
            key=lambda r: (r["metric"], r["topic"], r["partition"]),
        )


@dataclass
class Volumes:
    """Runs each target's volume run once per session and keeps the outcome (or its error)."""

    spark: LazySpark
    directory: Path
    workload: Workload = WORKLOAD
    _done: dict[str, Outcome | BaseException] = field(default_factory=dict)
    _lock: asyncio.Lock | None = None

    async def outcome(self, check: Check, target: BrokerTarget) -> Outcome:
        check.info.require_shares(VOLUME_RUN, "the volume run")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if target.name not in self._done:
                try:
                    self._done[target.name] = await self._run(check, target)
                except BaseException as exc:
                    # cancelled too (its case ran out of time): never made again, since the
                    # abandoned Spark job may still be writing the same result directory
                    self._done[target.name] = exc
                    raise
        done = self._done[target.name]
        if isinstance(done, asyncio.CancelledError):
            raise Inconclusive(
                f"the volume run on {target.name} did not finish within the case that made it"
            )
        if isinstance(done, BaseException):
            raise Inconclusive(f"the volume run on {target.name} failed earlier: {done}")
        check.note(f"volume run: {done.run.out_dir}")
        return done

    async def _run(self, check: Check, target: BrokerTarget) -> Outcome:
        out = self.directory / target.name.replace(":", "_").replace("+", "_")
        run = await run_volumes(
            target, check.connect, check.defer, self.workload, out, prefix=check.unique("vol")
        )
        summary = await asyncio.to_thread(compare, self.spark.get(), run)
        rows = pq.read_table(out / RESULT_DIR).to_pylist()
        return Outcome(run, summary, rows)
