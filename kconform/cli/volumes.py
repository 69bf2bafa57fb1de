"""`kconform volumes`: one volume run against one target, then the Spark comparison.

The same run the `kip977.volumes.*` cases make, with the workload in the user's hands (topics,
partitions, records, value sizes, key skew, compression) and the evidence kept: `ledger.parquet`,
`samples.parquet`, `run.json`, `volumes-result.parquet` and `volumes-summary.json` in `--out`.
Exit codes (kconform.exit_codes): 0 every source agrees with the ledger, 1 a mismatch or a missing
reading, 2 the run could not be made (bad flags, target unavailable, nothing delivered).
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kconform.cli.base import Command, Parser
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_FAILURES, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from kconform.fixtures.targets.kind import TargetSpec

__all__ = ["COMMAND", "main", "render_table"]

DEFAULT_OUT = Path("reports") / "out"
SHOWN_ROWS = 20

HELP = (
    "produce a known keyed volume and compare the target's partition "
    "metrics with it (KIP-977 meters, end offsets, client telemetry; Spark)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The shared options and the workload's bounds (kconform.plugin.option_table), then the
    run's own."""
    from kconform.plugin.option_table import add_options

    add_options(p, "volumes")
    p.add_argument("--seed", type=int, default=977, help="the workload's seed (default 977)")
    p.add_argument(
        "--compression", default="none", choices=("none", "gzip", "snappy", "lz4", "zstd"),
        help="the producer's compression.type (default none)",
    )  # fmt: skip
    p.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    p.add_argument("--no-spark", action="store_true", help="write ledger and samples only")


def run(args: argparse.Namespace, spark: Any = None) -> int:
    """Run `kconform volumes`; `spark` lets a caller (a test) lend its session.

    Ctrl-C and SIGTERM (a cancelled CI job) end it the same way: the run's settings on the
    target are undone (its metrics.verbosity entry, its CLIENT_METRICS subscription), the target
    it started is stopped, and the files already written stay."""
    from kconform.cli.checks import check_bootstrap, check_outputs, resolve_targets
    from kconform.runner import terminate_as_interrupt

    out = args.out or DEFAULT_OUT / time.strftime("volumes-%Y%m%d-%H%M%S")
    specs = resolve_targets(args.target, args.brokers, args.bootstrap_server, args.sink,
                            one=True)  # fmt: skip
    if len(specs) != 1:
        raise UsageError("volumes takes exactly one target")
    check_outputs({"--out": out})
    if args.bootstrap_server:  # last: it asks the server ("not Kafka", as `run` says)
        check_bootstrap(args.bootstrap_server)
    with terminate_as_interrupt():
        try:
            return _volumes(args, specs[0], out, spark)
        except KeyboardInterrupt:
            kept = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
            print(
                "kconform: volumes interrupted: nothing compared"
                + (f"; kept in {out}: {', '.join(kept)}" if kept else ""),
                file=sys.stderr,
            )
            return EXIT_USAGE


def _volumes(args: argparse.Namespace, spec: TargetSpec, out: Path, spark: Any) -> int:
    from kconform.engine.volumes.run import VolumeRun, compare
    from kconform.fixtures.targets.base import TargetError

    workload = _workload(args)
    try:
        run: VolumeRun = _produce_and_collect(spec, workload, out)
    except TargetError as exc:
        print(f"kconform: volume run failed: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for source, note in run.notes.items():
        print(f"{source:<18} {note}")
    if run.production.records() == 0:
        print(f"kconform: nothing delivered: {run.production.errors[:3]}", file=sys.stderr)
        return EXIT_USAGE
    if args.no_spark:
        print(f"ledger:  {run.ledger_path}\nsamples: {run.samples_path}")
        return EXIT_OK
    if not run.samples:
        print(
            f"kconform: {run.target} offered no source to compare with the ledger "
            f"({run.ledger_path})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from kconform.fixtures.spark import local_spark

    own = spark is None
    try:
        session = spark if spark is not None else local_spark(args.master)
    except Exception as exc:  # a bad --master, no Java: Spark's own log says which
        from kconform.fixtures.spark import spark_log_path

        text = str(exc).strip()
        reason = text.splitlines()[0].rstrip(".") if text else type(exc).__name__
        log = spark_log_path()
        print(
            f"kconform: Spark did not start (--master {args.master}): {reason}. The run's "
            f"ledger and samples are kept in {out}; pipelines/volumes.py compares them later"
            + (f" (Spark's log: {log})" if log else ""),
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        summary = compare(session, run)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if own:
            from kconform.fixtures.spark import stop_session

            trouble = stop_session(session)
            if trouble:
                print(f"kconform: {trouble}", file=sys.stderr)
    print(render_table(summary))
    print(f"summary: {out / 'volumes-summary.json'}")
    totals = summary["totals"]
    return EXIT_FAILURES if totals["mismatch"] or totals["missing"] else EXIT_OK


def _workload(args: argparse.Namespace) -> Any:
    from kconform.engine.volumes.workload import Workload

    try:  # each value is bounded by its option (kconform.plugin.option_table)
        return Workload(
            topics=args.topics,
            partitions=args.partitions,
            records=args.records,
            value_bytes=args.value_bytes,
            keys=args.keys,
            zipf=args.zipf,
            seed=args.seed,
            compression=args.compression,
        )
    except ValueError:
        raise UsageError(
            f"not a workload: --value-bytes {args.value_bytes!r}, --topics "
            f"{args.topics}, --partitions {args.partitions}, --records "
            f"{args.records}, --keys {args.keys}"
        ) from None


def _produce_and_collect(spec: TargetSpec, workload: Any, out: Path) -> Any:
    """Start the target, make the run on a private event loop, undo its settings, stop it."""
    from kconform.engine.volumes.run import run_volumes
    from kconform.fixtures.connection import KafkaConnection
    from kconform.fixtures.runtime import LoopThread
    from kconform.fixtures.targets.base import Capability
    from kconform.fixtures.targets.registry import create_target
    from kconform.fixtures.wirelog import WireLog

    target = create_target(spec)
    runtime = LoopThread("kconform-volumes")
    connections: list[KafkaConnection] = []
    cleanups: list[Any] = []
    wire_log = WireLog()

    async def connect(index: int) -> KafkaConnection:
        broker = list(target.brokers)[index % len(target.brokers)]
        connection = await KafkaConnection.open(
            broker.host,
            broker.port,
            client_id="kconform-volumes",
            wire_log=wire_log,
            label=f"volumes->broker {broker.node_id}",
        )
        connections.append(connection)
        return connection

    target.start()
    try:
        if not target.has(Capability.TOPIC_ADMIN):
            raise UsageError(f"{target.name} lacks topic_admin: the run needs fresh topics")
        prefix = f"kconform-vol-{uuid.uuid4().hex[:8]}"
        print(
            f"kconform: producing {workload.topics} x {workload.records} records to "
            f"{target.name} at {target.bootstrap} (Ctrl-C stops it)",
            file=sys.stderr,
            flush=True,
        )
        return runtime.run(
            run_volumes(target, connect, cleanups.append, workload, out, prefix=prefix),
            timeout=600,
        )
    finally:
        for cleanup in reversed(cleanups):
            try:
                outcome = cleanup()
                if inspect.isawaitable(outcome):
                    runtime.run(_awaited(outcome), timeout=30)
            except Exception as exc:  # the run's evidence is written; say what was left over
                print(f"kconform: cleanup failed: {exc}", file=sys.stderr)
        for connection in connections:
            runtime.run(connection.close(), timeout=10)
        runtime.stop()
        target.stop()


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def render_table(summary: dict[str, Any], limit: int = SHOWN_ROWS) -> str:
    """The summary as the terminal shows it: per-source counts, then rows, mismatches first."""
    lines = [
        f"{'source/metric':<34} {'rows':>5} {'ok':>5} {'mismatch':>8} {'missing':>7} "
        f"{'hot':>4} {'hot?!':>5}"
    ]
    for s in summary["sources"]:
        lines.append(
            f"{s['source'] + '/' + s['metric']:<34} {s['rows']:>5} {s['ok']:>5} "
            f"{s['mismatch']:>8} {s['missing']:>7} {s['hot_ledger']:>4} {s['hot_disagreements']:>5}"
        )
    lines.append("")
    lines.append(
        f"{'status':<9} {'source/metric':<30} {'topic-partition':<34} {'produced':>9} "
        f"{'expected':>17} {'delta':>10} {'share':>6} hot"
    )
    for row in summary["rows"][:limit]:
        produced = row["produced_records" if row["quantity"] == "records" else "produced_bytes"]
        low, high = int(row["expected_low"]), int(row["expected_high"])
        expected = str(low) if low == high else f"{low}..{high}"
        delta = "-" if row["delta"] is None else f"{row['delta']:.0f}"
        share = "" if row["ledger_share"] is None else f"{row['ledger_share']:.0%}"
        where = f"{row['topic']}-{row['partition'] if row['partition'] >= 0 else '*'}"
        lines.append(
            f"{row['status']:<9} {row['source'] + '/' + row['metric']:<30} {where[-34:]:<34} "
            f"{produced:>9} {expected:>17} {delta:>10} {share:>6} "
            f"{'yes' if row['hot_ledger'] else ''}"
        )
    hidden = len(summary["rows"]) - limit + summary.get("rows_truncated", 0)
    if hidden > 0:
        lines.append(f"... {hidden} more rows in the result Parquet")
    return "\n".join(lines)


def main(argv: list[str], *, spark: Any = None) -> int:
    """`kconform volumes [argv]` in this process, with a Spark session lent by the caller (a
    test); bad flags and input are one line on stderr and exit 2, as from the command."""
    parser = Parser(prog="kconform volumes")
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a bad flag, said in one line
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return run(args, spark)
    except UsageError as exc:
        print(f"kconform: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


COMMAND = Command("volumes", HELP, add_arguments, run)
