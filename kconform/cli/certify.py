"""`kconform certify`: the client suites only, then a certificate-style summary per client.

Baselines apply as in `kconform run`: the committed `baselines/<client>.json` of each client
certified (unless `--no-default-baselines`), and any `--baseline` given, so a known deviation
is expected here as it is there and the exit code says whether a verdict changed."""

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
from kconform.exit_codes import EXIT_ERRORS

__all__ = ["COMMAND"]


def add_arguments(certify: argparse.ArgumentParser) -> None:
    """Every flag of `certify` is in kconform.plugin.option_table."""
    from kconform.plugin.option_table import add_options

    add_options(certify, "certify")


def run(args: argparse.Namespace) -> int:
    from kconform.plugin.workers import default_jobs
    from kconform.reports.model import RunResults
    from kconform.runner import DEFAULT_OUT, RunOptions, certificate, client_names, incomplete
    from kconform.runner import run as run_suites

    clients = resolve_clients(args.client, args.client_timeout)
    check_outputs({"--out": args.out or DEFAULT_OUT}, {"--json": args.json, "--junit": args.junit})
    check_cases(args.cases or "", kind="client")
    targets = resolve_targets(None, None, None, default="reference")
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
        client_timeout=args.client_timeout, coverage=args.coverage,
    )  # fmt: skip
    code = run_suites(options)
    results_path = options.json or ((args.out or Path("reports/out/latest")) / "results.json")
    if results_path.exists():
        results = RunResults.read(results_path)
        print()
        print(certificate(results))
        subjects = {r.subject for r in results.results if r.subject_kind == "client"}
        if any(incomplete(results, subject) for subject in subjects):
            return max(code, EXIT_ERRORS)  # not a certificate: never a success
    return code


COMMAND = Command(
    "certify", "client suites only, with a certificate-style summary", add_arguments, run
)
