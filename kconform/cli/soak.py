"""`kconform soak`: a fleet of simulated telemetry clients against one target, then the verdicts.

The soak engine is kconform.soak; this module is its command line. Exit codes
(kconform.exit_codes): 0 every SLO met, 1 an SLO failed, 2 the soak could not decide
(an SLO in error, the target unavailable, an interrupted run, bad flags). Ctrl-C stops the
fleet cleanly and still writes every report; a second Ctrl-C stops harder. Running out of file
descriptors mid-run (EMFILE) stops it as Ctrl-C does, with one line naming the cause.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kconform.cli.base import Command
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_OK, EXIT_USAGE

__all__ = ["COMMAND", "add_arguments", "options_from", "soak"]

DEFAULT_OUT = Path("reports") / "out"
CADENCE_HELP = "none, once (default) or a period such as 2m"


HELP = (
    "thousands of simulated telemetry clients against a broker for minutes to "
    "hours, with churn and restarts; SLO verdicts, plots and a night-over-night diff"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The shared options (kconform.plugin.option_table), then the soak's own."""
    from kconform.plugin.option_table import add_options

    add_options(p, "soak")
    arg = p.add_argument
    arg("--duration", default="60s", help="8h, 20m, 60s (default 60s)")
    arg("--clients", type=int, default=200, help="simulated clients at the start (default 200)")
    arg("--workers", type=int, default=0, help="worker processes for the fleet (0: in-process)")
    arg("--shard", default="0/1", help="i/n: run every n-th client (one host of n; default 0/1)")
    arg(
        "--push-interval-ms",
        type=int,
        default=None,
        help="the fleet subscription's interval.ms (default 30000, or a twelfth of a shorter run)",
    )
    arg("--subscription-churn", default="once", help=f"subscription changes: {CADENCE_HELP}")
    arg(
        "--client-churn", default="once", help=f"client arrivals/closes/kills/moves: {CADENCE_HELP}"
    )
    arg("--restart", default="once", help=f"single-node restarts: {CADENCE_HELP}")
    arg("--rolling-restart", default="once", help=f"rolling restarts (2+ nodes): {CADENCE_HELP}")
    arg(
        "--churn-fraction",
        type=float,
        default=0.05,
        help="share of live clients in each churn role (default 0.05)",
    )
    arg(
        "--real-clients",
        default="",
        help="real clients joining the fleet: confluent-kafka:20,java:4.1.0:5",
    )
    arg("--seed", type=int, default=714, help="the fleet's random seed (default 714)")
    arg("--run-id", default="", help="shared by every shard of one run (default: random)")
    arg(
        "--recovery-intervals",
        type=float,
        default=2.0,
        help="after a subscription change, PushIntervalMs until every client pushes (default 2)",
    )
    arg(
        "--lockout-intervals",
        type=float,
        default=6.0,
        help="PushIntervalMs without an accepted push that counts as locked out (default 6)",
    )
    arg("--max-throttled-percent", type=float, default=1.0, help="default 1")
    arg("--max-memory-growth", type=float, default=256.0, help="MiB per hour (default 256)")
    arg(
        "--memory-min-minutes",
        type=float,
        default=10.0,
        help="memory growth is judged on runs at least this long (default 10)",
    )
    arg(
        "--sample-seconds",
        type=float,
        default=None,
        help="sample interval (default 60, shorter for runs under 12 min)",
    )
    arg("--ramp-seconds", type=float, default=None, help="spread the clients' start over this")
    arg("--request-timeout", type=float, default=10.0, help="seconds (default 10)")
    arg("--compare", type=Path, default=None, help="a previous soak's output folder: the diff")
    arg("--no-spark", action="store_true", help="tables by Python instead of the Spark job")
    arg("--master", default="local[2]", help="Spark master (default local[2])")
    arg("--report", type=Path, default=None, help="only re-render the soak page of this folder")
    arg("-q", "--quiet", action="store_true", help="no line per sample interval")


def options_from(args: argparse.Namespace) -> Any:
    """SoakOptions from the flags; ValueError with a readable reason for bad ones."""
    from kconform.fixtures.targets.registry import default_targets
    from kconform.soak.objectives import Thresholds
    from kconform.soak.options import SoakOptions
    from kconform.soak.schedule import parse_cadence, parse_duration

    duration = parse_duration(args.duration)
    if duration <= 0:
        raise UsageError("--duration must be positive")
    if args.clients < 1 or args.workers < 0:
        raise UsageError("--clients must be at least 1 and --workers at least 0")
    shard_text = args.shard.split("/")
    if len(shard_text) != 2 or not all(s.isdigit() for s in shard_text):
        raise UsageError(f"--shard {args.shard!r}: expected i/n, e.g. 0/3")
    shard = (int(shard_text[0]), int(shard_text[1]))
    if not 0 <= shard[0] < shard[1]:
        raise UsageError(f"--shard {args.shard!r}: i must be in 0..n-1")
    interval = args.push_interval_ms or max(100, min(30_000, int(duration * 1000 / 12)))
    if interval < 100:
        raise UsageError("--push-interval-ms must be at least 100 (CLIENT_METRICS minimum)")
    cadences = {
        "subscription": parse_cadence(args.subscription_churn),
        "client_churn": parse_cadence(args.client_churn),
        "restart": parse_cadence(args.restart),
        "rolling_restart": parse_cadence(args.rolling_restart),
    }
    if args.sample_seconds is not None and args.sample_seconds <= 0:
        raise UsageError(f"--sample-seconds must be positive, not {args.sample_seconds:g}")
    if args.ramp_seconds is not None and args.ramp_seconds < 0:
        raise UsageError(f"--ramp-seconds must not be negative, not {args.ramp_seconds:g}")
    if args.compare is not None and not args.compare.is_dir():
        raise UsageError(f"--compare {args.compare}: not a folder (a previous soak's output)")
    if not 0 < args.churn_fraction <= 0.3:
        raise UsageError("--churn-fraction must be in (0, 0.3]")
    _check_real_clients(args.real_clients)  # a typo is a usage error, not a crash mid-run
    thresholds = Thresholds(
        recovery_intervals=args.recovery_intervals,
        lockout_intervals=args.lockout_intervals,
        max_throttled_percent=args.max_throttled_percent,
        max_memory_growth_mib_per_hour=args.max_memory_growth,
        memory_min_minutes=args.memory_min_minutes,
    )
    out = args.out or DEFAULT_OUT / time.strftime("soak-%Y%m%d-%H%M%S")
    return SoakOptions(
        target=args.target or default_targets(bootstrap=args.bootstrap_server, one=True),
        duration=duration,
        clients=args.clients,
        out=out,
        workers=args.workers,
        shard=shard,
        brokers=args.brokers,
        push_interval_ms=interval,
        cadences=cadences,
        churn_fraction=args.churn_fraction,
        seed=args.seed,
        run_id=args.run_id,
        thresholds=thresholds,
        sample_seconds=args.sample_seconds,
        ramp_seconds=args.ramp_seconds,
        bootstrap_server=args.bootstrap_server,
        sink=args.sink,
        request_timeout=args.request_timeout,
        real_clients=args.real_clients,
        progress=not args.quiet,
    )


def _check_real_clients(text: str) -> None:
    """Every `--real-clients` entry is NAME:COUNT with a client name `--client` takes and a
    count of at least 1, before the soak starts (not a crash once it ran)."""
    from kconform.fixtures.clients.registry import parse_clients
    from kconform.soak.real import parse_real_clients

    for name, count in parse_real_clients(text):
        try:
            parse_clients(name)
        except ValueError as exc:
            raise UsageError(f"--real-clients {name}:{count}: {exc}") from None
        if count < 1:
            raise UsageError(f"--real-clients {name}:{count}: expected a count of at least 1")


def run(args: argparse.Namespace) -> int:
    if args.report is not None:
        from kconform.pipelines.soak_outputs import rerender

        try:
            print(f"soak page: {rerender(args.report, args.compare)}")
        except (OSError, ValueError) as exc:
            raise UsageError(f"--report {args.report}: {exc}") from None
        return EXIT_OK
    from kconform.cli.checks import check_outputs

    check_outputs({"--out": args.out or DEFAULT_OUT})
    try:
        options = options_from(args)
        brokers = _check_target(options)
        baselines = _baselines(args.baseline, brokers)
        _check_descriptors(options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if options.bootstrap_server:  # last: it asks the server ("not Kafka", as `run` says)
        from kconform.cli.checks import check_bootstrap

        check_bootstrap(options.bootstrap_server)
    return soak(
        options, spark=not args.no_spark, master=args.master, compare_dir=args.compare,
        baselines=baselines,
    )  # fmt: skip


def _baselines(
    paths: list[Path], brokers: int
) -> dict[str, tuple[Mapping[str, str], Mapping[str, str]]]:
    """{subject: (verdicts, why)} from `--baseline` files, layered by cluster size as `kconform
    run` layers them (ValueError naming a bad one)."""
    from kconform.reports.model import layered_baselines

    for path in paths:
        if not path.is_file():
            raise UsageError(f"baseline file {path} does not exist")
    return layered_baselines(paths, brokers)


DESCRIPTOR_BASE = 512  # the harness's own files, sockets and pipes, the Spark job aside


def descriptors_needed(options: Any) -> int:
    """File descriptors this process needs for the fleet: one socket per simulated client it
    runs itself (none with --workers: each worker runs its share), and two more per client
    when the target's proxy lives in this process (the reference: the client's connection
    accepted, and the proxy's to the mock)."""
    from kconform.fixtures.targets.registry import target_kind

    in_process = target_kind(options.target).soak_stats == "in_process"
    shards = options.shard[1]
    clients = -(-options.clients // shards)
    own = 0 if options.workers > 0 else clients
    return DESCRIPTOR_BASE + own + (2 * clients if in_process else 0)


def _check_descriptors(options: Any) -> None:
    """Raise the soft descriptor limit to what the fleet needs where the hard limit allows;
    ValueError with the figures when it cannot fit (a fleet that runs out mid-soak floods
    EMFILE tracebacks and overruns its duration)."""
    import resource

    needed = descriptors_needed(options)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if needed <= soft or soft == resource.RLIM_INFINITY:
        return
    if hard == resource.RLIM_INFINITY or needed <= hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
            return
        except (ValueError, OSError):
            pass
    raise UsageError(
        f"--clients {options.clients} against {options.target} needs about {needed} open files "
        f"in this process, above its limit of {max(soft, hard)} (ulimit -n); use fewer "
        "clients, --workers N, or a higher limit"
    )


def _check_target(options: Any) -> int:
    """The one target spec is well-formed; its cluster size (the kind's default if not given)."""
    from kconform.fixtures.targets.registry import UnknownTarget, parse_targets

    try:
        specs = parse_targets(
            options.target,
            brokers=options.brokers,
            bootstrap=options.bootstrap_server,
            sink=options.sink,
        )
    except UnknownTarget as exc:
        raise UsageError(str(exc)) from None
    if len(specs) != 1:
        raise UsageError("soak takes exactly one target")
    return specs[0].brokers


def soak(
    options: Any,
    *,
    spark: bool,
    master: str | None,
    compare_dir: Path | None,
    baselines: dict[str, tuple[Mapping[str, str], Mapping[str, str]]] | None = None,
) -> int:
    """Run, judge, report; print the verdicts; the exit code."""
    from kconform.pipelines.soak_outputs import write_outputs
    from kconform.runner import exit_code, render_summary
    from kconform.soak.run import Coordinator

    options.out.mkdir(parents=True, exist_ok=True)
    print(
        f"kconform soak: {options.clients} clients against {options.target} for "
        f"{options.duration:.0f} s (PushIntervalMs {options.push_interval_ms}), "
        f"output {options.out}",
        flush=True,
    )
    started = time.time()
    coordinator = Coordinator(options)
    try:
        run = asyncio.run(coordinator.run_soak())
    except KeyboardInterrupt:  # a second Ctrl-C: the target is stopped, the report written
        run = coordinator.run
        run.interrupted, run.finished = True, run.finished or time.time()
        run.crash = run.crash or "stopped hard (a second Ctrl-C): the last samples may be missing"
    results = write_outputs(
        run, spark=spark, master=master, compare_dir=compare_dir, baselines=baselines
    )
    for note in run.notes:
        if note != run.out_of_files:  # said once, on stderr
            print(f"note: {note}")
    if run.out_of_files:
        print(f"kconform: {run.out_of_files}", file=sys.stderr)
    if run.unavailable:
        print(f"kconform: target {options.target} unavailable: {run.unavailable}", file=sys.stderr)
    if run.crash:
        print(f"kconform: the soak crashed: {run.crash} (reports written)", file=sys.stderr)
    print(render_summary(results))
    for result in results.results:
        print(f"  {result.verdict:<14} {result.case_id:<36} {result.message[:90]}")
    print(f"soak page: {options.out / 'soak.html'}  ({time.time() - started:.0f} s)")
    if run.unavailable:
        return EXIT_USAGE
    return exit_code(results, 0)


COMMAND = Command("soak", HELP, add_arguments, run)
