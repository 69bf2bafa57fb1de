"""`kconform driver check <command>`: is a driver of your own ready for `kconform certify`?

It runs the driver for a few seconds per scenario against the embedded reference broker and
prints each problem with its fix (the checks: kconform.cli.driver_check). Exit 0 when clean, 1
when it found problems, 2 for bad usage (no such file, not executable, a `--describe` that is not
one JSON object)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kconform.cli.base import Command
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_FAILURES, EXIT_OK

if TYPE_CHECKING:
    from kconform.cli.driver_check import Finding

__all__ = ["COMMAND"]

CHECK_HELP = (
    "run your driver briefly through each scenario against the reference broker and say what "
    "breaks the contract"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kconform.plugin.option_table import add_options

    actions = parser.add_subparsers(dest="action", required=True, metavar="{check}")
    check = actions.add_parser("check", help=CHECK_HELP)
    check.add_argument("command", help="the driver program (a path; a .py runs with kconform's "
                       "Python), as `--client command:<path>` takes it")  # fmt: skip
    add_options(check, "driver check")


def run(args: argparse.Namespace) -> int:
    from kconform.cli.driver_check import check_describe, check_driver
    from kconform.fixtures.clients.command import CommandDriver
    from kconform.fixtures.targets.reference import ReferenceTarget

    driver = CommandDriver(f"command:{args.command}", args.command)
    timeout = args.client_timeout or 10.0
    driver.start_timeout = timeout
    if driver.path.is_dir() or not driver.path.is_file():
        raise UsageError(driver.unavailable_reason() or f"{driver.path} is not a file")
    if (reason := driver.unavailable_reason()) and "not executable" in reason:
        raise UsageError(f"{reason} (chmod +x it, or name the built binary)")
    described, usage = check_describe(driver, timeout)
    if usage is not None:
        raise UsageError(usage)
    findings = [described]
    print(f"kconform driver check {args.command}", flush=True)
    _show(described)
    with ReferenceTarget(brokers=1) as target:
        for found in check_driver(driver, target, timeout):
            findings.append(found)
            _show(found)
    problems = sum(len(f.problems) for f in findings)
    if problems:
        print(f"{problems} problem{'s' if problems > 1 else ''}: fix them, then run this again "
              "(the contract: fixtures/clients/__init__.py)")  # fmt: skip
        return EXIT_FAILURES
    print(f"clean: next, `kconform certify --client command:{args.command}`")
    return EXIT_OK


def _show(found: Finding) -> None:
    status = "PROBLEM" if found.problems else "ok" if found.ran else "-"
    seen = f" ({'; '.join(found.seen)})" if found.seen else ""
    print(f"  {found.step}: {status}{seen}")
    for problem in found.problems:
        print(f"    - {found.step}: {problem}")
    sys.stdout.flush()


COMMAND = Command("driver", "check a driver of your own against the contract before certify",
                  add_arguments, run)  # fmt: skip
