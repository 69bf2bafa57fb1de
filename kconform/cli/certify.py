"""`kconform certify`: the client suites only, then a certificate-style summary per client.

Baselines apply as in `kconform run`: the committed `baselines/<client>.json` of each client
certified (unless `--no-default-baselines`), and any `--baseline` given, so a known deviation
is expected here as it is there and the exit code says whether a verdict changed."""

from __future__ import annotations

import argparse
from pathlib import Path

from kconform.cli.base import Command
from kconform.cli.checks import (
    CASES_HELP,
    CLIENT_TIMEOUT_HELP,
    JOBS_HELP,
    check_cases,
    check_clients,
    check_coverage,
    check_outputs,
    client_timeout,
    jobs,
    readable,
)
from kconform.exit_codes import EXIT_ERRORS

__all__ = ["COMMAND"]


def add_arguments(certify: argparse.ArgumentParser) -> None:
    from kconform.fixtures.clients.registry import clients_help, light_kinds

    certify.add_argument("--client", required=True,
                         help=clients_help())  # fmt: skip
    certify.add_argument("--cases", default="", help=CASES_HELP + " (client cases only)")
    certify.add_argument("--level", choices=("must", "should", "all"), default="all",
                         help="must, should (MUST and SHOULD) or all (default)")  # fmt: skip
    certify.add_argument("--baseline", action="append", default=[],
                         help="verdict baseline JSON, on top of the committed ones")  # fmt: skip
    certify.add_argument("--no-default-baselines", action="store_true",
                         help="ignore the committed baselines/<client>.json")  # fmt: skip
    certify.add_argument("--out", type=Path, default=None,
                         help="report folder (default reports/out/<time>)")  # fmt: skip
    certify.add_argument("--junit", type=Path, default=None, help="also write JUnit XML here")
    certify.add_argument("--json", type=Path, default=None, help="write the results JSON here")
    certify.add_argument("-v", "--verbose", action="store_true",
                         help="print failures as they happen")  # fmt: skip
    certify.add_argument(
        "--client-timeout", type=client_timeout, default=None, help=CLIENT_TIMEOUT_HELP
    )
    certify.add_argument(
        "--coverage", action="store_true",
        help="JaCoCo on the Java client's JVMs: which of its KIP-511/KIP-714 code each case "
        "reaches, in the report (docs/coverage.md; one worker)",
    )  # fmt: skip
    certify.add_argument("-j", "--jobs", type=jobs, default=None, help=JOBS_HELP + " (default: "
                         f"four per core for {' and '.join(light_kinds())}, whose cases mostly "
                         "wait; 1 for the others, whose timing bent or is unknown)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from kconform.plugin.workers import default_jobs
    from kconform.reports.model import RunResults
    from kconform.runner import DEFAULT_OUT, RunOptions, certificate, incomplete
    from kconform.runner import run as run_suites

    check_clients(args.client, args.client_timeout)
    check_outputs({"--out": args.out or DEFAULT_OUT}, {"--json": args.json, "--junit": args.junit})
    check_cases(args.cases, kind="client")
    if args.coverage:
        check_coverage("reference", args.client, args.jobs)
    baselines = [readable(Path(b), "baseline") for b in args.baseline]
    options = RunOptions(
        targets="reference", clients=args.client, suites=["client"], out=args.out,
        junit=args.junit, json=args.json, cases=args.cases or "", level=args.level,
        baselines=baselines, use_default_baselines=not args.no_default_baselines,
        verbose=args.verbose,
        jobs=1 if args.coverage else args.jobs if args.jobs is not None
        else default_jobs(args.client),
        client_timeout=args.client_timeout, coverage=args.coverage,
    )  # fmt: skip
    code = run_suites(options)
    results_path = options.json or ((args.out or Path("reports/out/latest")) / "results.json")
    if results_path.exists():
        results = RunResults.read(results_path)
        print()
        print(certificate(results))
        clients = {r.subject for r in results.results if r.subject_kind == "client"}
        if any(incomplete(results, subject) for subject in clients):
            return max(code, EXIT_ERRORS)  # not a certificate: never a success
    return code


COMMAND = Command(
    "certify", "client suites only, with a certificate-style summary", add_arguments, run
)
