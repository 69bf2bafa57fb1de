"""`kconform baseline`: record one subject's verdicts from a run as its verdict baseline."""

from __future__ import annotations

import argparse
from pathlib import Path

from kconform.cli.base import Command
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(baseline: argparse.ArgumentParser) -> None:
    baseline.add_argument("results", type=Path, help="a result folder or results.json")
    baseline.add_argument("--subject", required=True, help="e.g. librdkafka_mock")
    baseline.add_argument(
        "--out", type=Path, required=True, help="e.g. baselines/librdkafka_mock.json"
    )


def run(args: argparse.Namespace) -> int:
    from kconform.cli.checks import check_outputs
    from kconform.reports.model import RunResults, read_baseline, write_baseline

    check_outputs({}, {"--out": args.out})
    source = args.results / "results.json" if args.results.is_dir() else args.results
    try:
        results = RunResults.read(source)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    subjects = sorted({r.subject for r in results.results})
    if args.subject not in subjects:
        raise UsageError(
            f"no results for {args.subject!r} in {source} (has: {', '.join(subjects)})"
        )
    if results.interrupted:
        raise UsageError(f"{source} is an interrupted run; a baseline needs a complete one")
    try:  # rewriting a baseline keeps its `why` texts and the entries known to vary
        earlier = read_baseline(args.out) if args.out.is_file() else None
    except ValueError:
        earlier = None
    write_baseline(args.out, args.subject, results.results, earlier)
    count = sum(1 for r in results.results if r.subject == args.subject)
    print(f"baseline for {args.subject}: {count} verdicts written to {args.out}")
    return EXIT_OK


COMMAND = Command("baseline", "record a subject's verdicts as its baseline", add_arguments, run)
