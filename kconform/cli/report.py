"""`kconform report`: re-render one result folder's reports, or merge several into one.

It exits as the run it renders would have (0/1/2, kconform.exit_codes): CI merges its jobs'
results with it, and a summary saying "CI fails" must fail CI."""

from __future__ import annotations

import argparse
from pathlib import Path

from kconform.cli.base import Command
from kconform.errors import UsageError

__all__ = ["COMMAND"]


def add_arguments(report: argparse.ArgumentParser) -> None:
    from kconform.plugin.option_table import add_options

    add_options(report, "report")
    report.add_argument("dirs", nargs="+", type=Path, help="result folders or results.json files")


def run(args: argparse.Namespace) -> int:
    from kconform.cli.checks import check_outputs
    from kconform.reports.model import RunResults, merge_runs
    from kconform.runner import DEFAULT_OUT, exit_code, output_dir, render_summary, write_reports

    check_outputs({"--out": args.out or DEFAULT_OUT})
    runs = []
    seen: dict[Path, Path] = {}
    for directory in args.dirs:
        path = directory / "results.json" if directory.is_dir() else directory
        same = seen.setdefault(path.resolve(), directory)
        if same is not directory:  # merged twice, every verdict would count twice
            raise UsageError(f"{directory} is given twice (as {same} too): each run counts once")
        try:
            runs.append(RunResults.read(path))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    merged = merge_runs(runs)
    out = args.out or output_dir(None)
    out.mkdir(parents=True, exist_ok=True)
    merged.write(out / "results.json")
    write_reports(merged, out)
    print(render_summary(merged))
    print(f"report:  {out / 'index.html'}")
    return exit_code(merged, 0)  # as the runs it renders would have exited: CI merges with it


COMMAND = Command("report", "re-render or merge result folders", add_arguments, run)
