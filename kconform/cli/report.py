"""`kconform report`: re-render one result folder's reports, or merge several into one.

It exits as the run it renders would have (0/1/2, kconform.exit_codes): CI merges its jobs'
results with it, and a summary saying "CI fails" must fail CI."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from kconform.cli.base import Command
from kconform.errors import UsageError

if TYPE_CHECKING:
    from kconform.reports.model import RunResults

__all__ = ["COMMAND"]


def add_arguments(report: argparse.ArgumentParser) -> None:
    from kconform.plugin.option_table import add_options

    add_options(report, "report")
    report.add_argument("dirs", nargs="+", type=Path, help="result folders or results.json files")


def run(args: argparse.Namespace) -> int:
    from kconform.cli.checks import check_outputs
    from kconform.reports.certificate_files import CERTIFICATE_JSON
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
    certified = [
        d for d in args.dirs if (d if d.is_dir() else d.parent).joinpath(CERTIFICATE_JSON).exists()
    ]
    if not certified:
        write_reports(merged, out)
        print(render_summary(merged))
        print(f"report:  {out / 'index.html'}")
        return exit_code(merged, 0)  # as the runs it renders would have exited: CI merges with it
    return _recertify(merged, out)


def _recertify(merged: RunResults, out: Path) -> int:
    """A folder `kconform certify` wrote is re-rendered as certify renders it: the certificate
    leads the page, its files are rewritten, and its exit code is the command's (a certificate
    is made from the results alone: each result carries the baseline verdict it was held to)."""
    from kconform.reports.certificate import certify, render_text
    from kconform.reports.certificate import exit_code as certificate_exit
    from kconform.reports.certificate_files import (
        CERTIFICATE_JSON,
        render_section,
        write_certificates,
    )
    from kconform.runner import default_baselines, render_summary, write_reports

    named = [str(s.get("name", "")) for s in merged.subjects]
    certificates = certify(merged, default_baselines(named))
    write_reports(merged, out, lead=render_section(certificates))
    write_certificates(certificates, out)
    print(render_summary(merged, overall=False))
    print(f"report:  {out / 'index.html'}")
    print(f"certificate: {out / CERTIFICATE_JSON}\n")
    print(render_text(certificates), flush=True)
    return certificate_exit(certificates)


COMMAND = Command("report", "re-render or merge result folders", add_arguments, run)
