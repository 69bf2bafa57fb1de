"""What a soak is asked to do (`SoakOptions`) and what it measured (`SoakRun`), and the target.

Plain data shared by the coordinator (`run.py`), the verdicts and reports (`outputs.py`) and the
command; `run.json` records both for every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.fixtures.targets.kind import TargetKind
from kconform.fixtures.targets.registry import default_targets
from kconform.soak.delivery import DeliveryMatcher
from kconform.soak.ledger import Ledger
from kconform.soak.objectives import Thresholds
from kconform.soak.samples import SampleWriter, write_json
from kconform.soak.schedule import Step


@dataclass
class SoakOptions:
    target: str = field(default_factory=lambda: default_targets(one=True))
    duration: float = 60.0
    clients: int = 200
    out: Path = Path("reports/out/soak")
    workers: int = 0
    shard: tuple[int, int] = (0, 1)
    brokers: int | None = None
    push_interval_ms: int = 30_000
    cadences: dict[str, float | str] = field(
        default_factory=lambda: dict.fromkeys(
            ("subscription", "client_churn", "restart", "rolling_restart"), "once"
        )
    )
    churn_fraction: float = 0.05
    seed: int = 714
    run_id: str = ""
    thresholds: Thresholds = field(default_factory=Thresholds)
    sample_seconds: float | None = None
    ramp_seconds: float | None = None
    bootstrap_server: str | None = None
    sink: str | None = None
    request_timeout: float = 10.0
    real_clients: str = ""
    progress: bool = True

    @property
    def leader(self) -> bool:
        return self.shard[0] == 0

    def sample_interval(self) -> float:
        """Every minute; shorter runs get at least ~12 points (5 s at the least)."""
        if self.sample_seconds:
            return self.sample_seconds
        return max(5.0, min(60.0, self.duration / 12))

    def ramp(self) -> float:
        """Clients start spread over this many seconds (a fleet does not start at one instant)."""
        if self.ramp_seconds is not None:
            return self.ramp_seconds
        return min(30.0, self.duration / 10, self.push_interval_ms / 1000)


@dataclass
class SoakRun:
    """What a soak measured; `outputs.write_outputs` judges and reports it."""

    options: SoakOptions
    run_id: str
    started: float
    target_info: dict[str, Any] = field(default_factory=dict)
    capabilities: frozenset[Capability] = frozenset()
    ledger: Ledger | None = None
    matcher: DeliveryMatcher | None = None
    writer: SampleWriter | None = None
    memory_source: str = ""
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    judged_at: float = 0.0
    finished: float = 0.0
    interrupted: bool = False
    crash: str = ""
    out_of_files: str = ""  # the line naming it when the soak ran out of file descriptors
    unavailable: str = ""
    real_clients: list[dict[str, Any]] = field(default_factory=list)


def make_target(options: SoakOptions) -> tuple[BrokerTarget, TargetKind]:
    """The target (restartable where the kind allows: `TargetKind.soak_create`) and its kind."""
    from kconform.fixtures.targets.registry import create_soak_target, parse_targets

    (spec,) = parse_targets(
        options.target,
        brokers=options.brokers,
        bootstrap=options.bootstrap_server,
        sink=options.sink,
    )
    return create_soak_target(spec)


def progress_line(row: dict[str, Any]) -> str:
    """One line per sample interval, for the terminal."""
    span = max(1e-9, row["bucket_end"] - row["bucket_start"])
    memory = row.get("memory_bytes")
    mem = f" mem {memory / (1 << 20):.0f} MiB" if memory else ""
    faults = f"  << {row['faults']}" if row.get("faults") else ""
    return (
        f"[{row['offset_s'] + span:6.0f}s] clients {row['clients_live']:>5} "
        f"pushes {row['pushes'] / span:7.1f}/s ok {row['pushes_accepted']:>6} "
        f"rej {row['pushes_rejected']:>4} 117 {row['rejected_117']:>4} "
        f"p99 {row['latency_p99_ms']:6.1f} ms locked {row['clients_locked_out']:>3} "
        f"missing {row['missing_total']}{mem}{faults}"
    )


def write_run_json(run: SoakRun) -> None:
    """`run.json`: what was asked and what happened (options, target, schedule, notes)."""
    o = run.options
    write_json(
        o.out / "run.json",
        {
            "run_id": run.run_id,
            "target": run.target_info,
            "started": run.started,
            "finished": run.finished,
            "duration_s": o.duration,
            "clients": o.clients,
            "workers": o.workers,
            "shard": list(o.shard),
            "push_interval_ms": o.push_interval_ms,
            "cadences": o.cadences,
            "churn_fraction": o.churn_fraction,
            "seed": o.seed,
            "sample_seconds": o.sample_interval(),
            "steps": [s.__dict__ for s in run.steps],
            "faults": [f.__dict__ for f in (run.ledger.faults if run.ledger else [])],
            "notes": run.notes,
            "interrupted": run.interrupted,
            "crash": run.crash,
            "out_of_files": run.out_of_files,
            "unavailable": run.unavailable,
            "real_clients": run.real_clients,
        },
    )
