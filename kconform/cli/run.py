"""`kconform run`: the main job, the suites against the embedded targets (kconform.runner)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kconform.cli.base import Command
from kconform.cli.checks import (
    ClientSpecs,
    TargetSpecs,
    check_bootstrap,
    check_cases,
    check_coverage,
    check_outputs,
    readable,
    resolve_clients,
    resolve_targets,
)
from kconform.cli.selection import check_keyword
from kconform.errors import UsageError

__all__ = ["COMMAND"]


def add_arguments(run: argparse.ArgumentParser) -> None:
    """Every flag of `run` is in kconform.plugin.option_table."""
    from kconform.plugin.option_table import add_options

    add_options(run, "run")


def _check_jobs(count: int, targets: TargetSpecs) -> None:
    """Workers each start their own targets; an existing cluster would be shared between them
    (one worker's CLIENT_METRICS subscriptions reach another's clients), so -j refuses it."""
    from kconform.fixtures.targets.registry import target_kind

    if count > 1 and any(target_kind(t.kind).needs_bootstrap for t in targets):
        raise UsageError(
            "-j runs each worker against its own targets; an existing cluster "
            "(--bootstrap-server) would be shared by the workers, so use -j 1 with it"
        )


def _warn_baselines(
    baselines: list[Path], targets: TargetSpecs, clients: ClientSpecs | None
) -> None:
    """A `--baseline` for a subject not in the run, or naming cases that do not exist, would be
    silently ignored: say so (a warning: the run still means what it says)."""
    import sys

    from kconform.runner import baseline_warnings, client_names

    if not baselines:
        return
    subjects = {t.label for t in targets} | set(client_names(clients))
    for warning in baseline_warnings(baselines, subjects):
        print(f"kconform: warning: {warning}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from kconform.runner import RunOptions, client_names
    from kconform.runner import run as run_suites

    targets = resolve_targets(args.target, args.brokers, args.bootstrap_server, args.sink)
    clients = resolve_clients(args.client, args.client_timeout)
    check_cases(args.cases or "")
    check_keyword(args.k)
    if args.coverage:
        check_coverage(targets, clients, args.jobs)
    count = 1 if args.coverage else args.jobs
    if count is None:
        from kconform.plugin.workers import default_run_jobs

        whole = not (args.cases or args.k or args.x)
        labels = ",".join(t.label for t in targets)
        count = default_run_jobs(labels, ",".join(client_names(clients)), whole=whole)
    _check_jobs(count, targets)
    if args.bootstrap_server:  # last: it asks the server, the checks above read flags only
        check_bootstrap(args.bootstrap_server)
    baselines = [readable(Path(b), "baseline") for b in args.baseline]
    _warn_baselines(baselines, targets, clients)
    from kconform.runner import DEFAULT_OUT

    check_outputs({"--out": args.out or DEFAULT_OUT}, {"--json": args.json, "--junit": args.junit})
    options = RunOptions(
        targets=targets, brokers=args.brokers,
        cases=args.cases or "", level=args.level, baselines=baselines,
        use_default_baselines=not args.no_default_baselines, out=args.out,
        junit=args.junit, json=args.json, keyword=args.k, exitfirst=args.x, verbose=args.verbose,
        clients=clients, jobs=count, client_timeout=args.client_timeout,
        coverage=args.coverage,
    )  # fmt: skip
    return run_suites(options)


COMMAND = Command("run", "the main job: suites against the embedded targets", add_arguments, run)
