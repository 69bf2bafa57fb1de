"""`kconform baseline`: record one subject's verdicts from a run as its verdict baseline."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kconform.cli.base import Command
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(baseline: argparse.ArgumentParser) -> None:
    baseline.add_argument("results", type=Path, nargs="?", help="a result folder or results.json")
    baseline.add_argument("--subject", help="the subject to record: a target or client label")
    from kconform.plugin.option_table import add_options

    add_options(baseline, "baseline")  # --out
    baseline.add_argument(
        "--prune", type=Path, action="append", default=[], metavar="BASELINE",
        help="remove the entries naming cases that no longer exist from this baseline file "
        "(instead of recording one)",
    )  # fmt: skip


def _prune(paths: list[Path]) -> int:
    """Drop stale entries (case ids no suite declares) from each baseline, keeping the rest."""
    from kconform.reports.model import read_baseline
    from kconform.runner import case_catalogue, stale_entries

    known = {c["id"] for c in case_catalogue()}
    for path in paths:
        try:
            stale = stale_entries(path, known)
            read_baseline(path)
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        for key in ("verdicts", "why"):
            if isinstance(data.get(key), dict):
                data[key] = {k: v for k, v in data[key].items() if k not in stale}
        if stale:
            path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(
            f"{path}: {len(stale)} stale entries removed"
            + (f" ({', '.join(stale)})" if stale else "")
        )
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    if args.prune:
        if args.results or args.subject or args.out:
            raise UsageError("--prune takes baseline files only (no results, --subject, --out)")
        return _prune(args.prune)
    if args.results is None or not args.subject or args.out is None:
        raise UsageError("baseline needs a results folder, --subject and --out (or --prune)")
    from kconform.cli.checks import check_outputs
    from kconform.reports.model import (
        RunResults,
        bundles_of,
        capabilities_of,
        read_baseline,
        write_baseline,
    )

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
    write_baseline(  # keep_unrun: a run of some cases (--cases) leaves the others' entries be
        args.out, args.subject, results.results, earlier, bundles=bundles_of(results, args.subject),
        capabilities=capabilities_of(results, args.subject), keep_unrun=True,
    )  # fmt: skip
    count = sum(1 for r in results.results if r.subject == args.subject)
    listed = len(read_baseline(args.out).verdicts)
    print(f"baseline for {args.subject}: {count} verdicts, {listed} of them exceptions to what "
          f"its facts derive, written to {args.out}")  # fmt: skip
    return EXIT_OK


COMMAND = Command("baseline", "record a subject's verdicts as its baseline", add_arguments, run)
