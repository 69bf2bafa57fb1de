"""`kconform certify`: the client suites only, then one certificate per client
(kconform.reports.certificate), written as `certificate.json` and `certificate.svg` beside the
report, which opens with it.

Its exit code is the certificate's headline (kconform.exit_codes): 0 CONFORMS, 1 DOES NOT
CONFORM, 2 INCOMPLETE. Baselines are compared as in `kconform run` (the committed
`baselines/<client>.json` unless `--no-default-baselines`, and any `--baseline`), but their
answer is the certificate's separate `baseline:` line: a known deviation is still a deviation."""

from __future__ import annotations

import argparse
from pathlib import Path

from kconform.cli.base import Command
from kconform.cli.checks import (
    check_cases,
    check_coverage,
    check_outputs,
    readable,
    resolve_clients,
    resolve_targets,
)

__all__ = ["COMMAND"]


def add_arguments(certify: argparse.ArgumentParser) -> None:
    """Every flag of `certify` is in kconform.plugin.option_table."""
    from kconform.plugin.option_table import add_options

    certify.description = (
        "Run the client suites against the reference target, then print one certificate per "
        "client and write certificate.json and certificate.svg beside the report (--out). "
        "Exit codes: 0 CONFORMS (every MUST case judged passed), 1 DOES NOT CONFORM (a MUST "
        "rule failed), 2 INCOMPLETE (interrupted, a driver fault, nothing judged) or bad "
        "usage. Whether the verdicts match a baseline is the certificate's separate "
        "'baseline:' line and never changes the exit code."
    )

    add_options(certify, "certify")


def run(args: argparse.Namespace) -> int:
    from kconform.fixtures.targets.registry import client_cases_target
    from kconform.plugin.workers import default_jobs
    from kconform.runner import DEFAULT_OUT, RunOptions, client_names
    from kconform.runner import run as run_suites

    clients = resolve_clients(args.client, args.client_timeout)
    check_outputs({"--out": args.out or DEFAULT_OUT}, {"--json": args.json, "--junit": args.junit})
    check_cases(args.cases or "", kind="client")
    targets = resolve_targets(client_cases_target(), None, None)
    if args.coverage:
        check_coverage(targets, clients, args.jobs)
    baselines = [readable(Path(b), "baseline") for b in args.baseline]
    options = RunOptions(
        targets=targets, clients=clients, suites=["client"], out=args.out,
        junit=args.junit, json=args.json, cases=args.cases or "", level=args.level,
        baselines=baselines, use_default_baselines=not args.no_default_baselines,
        verbose=args.verbose,
        jobs=1 if args.coverage else args.jobs if args.jobs is not None
        else default_jobs(",".join(client_names(clients))),
        client_timeout=args.client_timeout, coverage=args.coverage, certify=True,
    )  # fmt: skip
    return run_suites(options)


COMMAND = Command(
    "certify",
    "client suites only, then a certificate per client (exit 0 CONFORMS, 1 DOES NOT CONFORM, "
    "2 INCOMPLETE)",
    add_arguments,
    run,
)
