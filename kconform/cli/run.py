"""`kconform run`: the main job, the suites against the embedded targets (kconform.runner)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kconform.cli.base import Command
from kconform.cli.checks import (
    CASES_HELP,
    CLIENT_TIMEOUT_HELP,
    JOBS_HELP,
    SINK_HELP,
    check_bootstrap,
    check_cases,
    check_clients,
    check_coverage,
    check_outputs,
    check_targets,
    client_timeout,
    jobs,
    readable,
)
from kconform.cli.selection import check_keyword
from kconform.errors import UsageError

__all__ = ["COMMAND"]


def add_arguments(run: argparse.ArgumentParser) -> None:
    from kconform.fixtures.clients.registry import clients_help, light_kinds
    from kconform.fixtures.targets.registry import brokers_help, embedded_kinds, targets_help

    run.add_argument("--target", default="",
                     help=f"{targets_help()} (default: reference,librdkafka_mock)")  # fmt: skip
    run.add_argument("--bootstrap-server", default=None, help="host:port of an existing cluster")
    run.add_argument("--sink", default=None, help=SINK_HELP)
    run.add_argument("--brokers", type=int, default=None, help=brokers_help())
    run.add_argument("--cases", default="", help=CASES_HELP)
    run.add_argument("--level", choices=("must", "should", "all"), default="all")
    run.add_argument("--baseline", action="append", default=[], help="verdict baseline JSON")
    run.add_argument("--no-default-baselines", action="store_true",
                     help="ignore the committed baselines/<target>.json")  # fmt: skip
    run.add_argument(
        "--out", type=Path, default=None, help="report folder (default reports/out/<time>)"
    )
    run.add_argument("--junit", type=Path, default=None, help="also write JUnit XML here")
    run.add_argument("--json", type=Path, default=None, help="write the results JSON here")
    run.add_argument("-k", default=None, help="pytest -k expression")
    run.add_argument("-x", action="store_true", help="stop at the first unexpected verdict")
    run.add_argument("-v", "--verbose", action="store_true", help="print failures as they happen")
    run.add_argument("--client", default="",
                     help=f"{clients_help()} (default: every installed one)")  # fmt: skip
    run.add_argument(
        "--client-timeout", type=client_timeout, default=None, help=CLIENT_TIMEOUT_HELP
    )
    run.add_argument("--coverage", action="store_true",
                     help="JaCoCo on the apache target's broker nodes and the Java client's "
                     "JVMs: which of Apache's KIP-511/KIP-714 code each case reaches, in the "
                     "report (docs/coverage.md; runs in one worker)")  # fmt: skip
    run.add_argument("-j", "--jobs", type=jobs, default=None, help=JOBS_HELP + " (default: "
                     f"four per core for a whole run on {' and '.join(embedded_kinds())} with "
                     f"{' and '.join(light_kinds())}; 1 with --cases, -k, -x, other targets "
                     "or other clients)")  # fmt: skip


def _check_jobs(count: int, targets: str, bootstrap_server: str | None) -> None:
    """Workers each start their own targets; an existing cluster would be shared between them
    (one worker's CLIENT_METRICS subscriptions reach another's clients), so -j refuses it."""
    from kconform.fixtures.targets.registry import target_kind

    existing = any(target_kind(t.strip()).needs_bootstrap for t in targets.split(",") if t.strip())
    if count > 1 and (bootstrap_server or existing):
        raise UsageError(
            "-j runs each worker against its own targets; an existing cluster "
            "(--bootstrap-server) would be shared by the workers, so use -j 1 with it"
        )


def _warn_baselines(baselines: list[Path], targets: str, clients: str) -> None:
    """A `--baseline` for a subject not in the run, or naming cases that do not exist, would be
    silently ignored: say so (a warning: the run still means what it says)."""
    import sys

    from kconform.runner import baseline_warnings, client_names

    if not baselines:
        return
    subjects = {s.strip() for s in f"{targets},{client_names(clients)}".split(",") if s.strip()}
    for warning in baseline_warnings(baselines, subjects):
        print(f"kconform: warning: {warning}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from kconform.runner import RunOptions
    from kconform.runner import run as run_suites

    targets = args.target or ("external" if args.bootstrap_server else "reference,librdkafka_mock")
    check_targets(targets, args.brokers, args.bootstrap_server, args.sink, probe=False)
    check_clients(args.client, args.client_timeout)
    check_cases(args.cases)
    check_keyword(args.k)
    if args.coverage:
        check_coverage(targets, args.client, args.jobs)
    count = 1 if args.coverage else args.jobs
    if count is None:
        from kconform.plugin.workers import default_run_jobs
        from kconform.runner import client_names

        whole = not (args.cases or args.k or args.x)
        count = default_run_jobs(targets, client_names(args.client), whole=whole)
    _check_jobs(count, targets, args.bootstrap_server)
    if args.bootstrap_server:  # last: it asks the server, the checks above read flags only
        check_bootstrap(args.bootstrap_server)
    baselines = [readable(Path(b), "baseline") for b in args.baseline]
    _warn_baselines(baselines, targets, args.client)
    from kconform.runner import DEFAULT_OUT

    check_outputs({"--out": args.out or DEFAULT_OUT}, {"--json": args.json, "--junit": args.junit})
    options = RunOptions(
        targets=targets, bootstrap_server=args.bootstrap_server, sink=args.sink,
        brokers=args.brokers,
        cases=args.cases or "", level=args.level, baselines=baselines,
        use_default_baselines=not args.no_default_baselines, out=args.out,
        junit=args.junit, json=args.json, keyword=args.k, exitfirst=args.x, verbose=args.verbose,
        clients=args.client, jobs=count, client_timeout=args.client_timeout,
        coverage=args.coverage,
    )  # fmt: skip
    return run_suites(options)


COMMAND = Command("run", "the main job: suites against the embedded targets", add_arguments, run)
