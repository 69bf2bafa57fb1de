"""The `kconform` command: one module per subcommand in this package, each declaring itself
once as a `Command` (kconform.cli.base); `COMMANDS` lists them in the order `--help` shows.

Exit codes (kconform.exit_codes): 0 success, 1 conformance failures, 2 harness errors or bad
usage. Bad input gives one clear line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kconform import __version__
from kconform.cli import (
    baseline,
    certify,
    clients,
    decode,
    driver,
    fuzz,
    listing,
    matrix,
    messages,
    report,
    run,
    serve,
    sink_plugin,
    soak,
    targets,
    volumes,
)
from kconform.cli.base import Command, Parser
from kconform.cli.environment import check_environment
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_USAGE

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[Command, ...] = (
    run.COMMAND,
    certify.COMMAND,
    driver.COMMAND,
    listing.COMMAND,
    targets.COMMAND,
    clients.COMMAND,
    baseline.COMMAND,
    matrix.COMMAND,
    report.COMMAND,
    serve.COMMAND,
    messages.COMMAND,
    decode.COMMAND,
    sink_plugin.COMMAND,
    volumes.COMMAND,
    soak.COMMAND,
    fuzz.COMMAND,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="kconform",
        description="Conformance and fuzz testing of the Kafka protocol features that carry "
        "client telemetry (KIP-511, KIP-714, KIP-977), for brokers and client libraries.",
        epilog="Exit codes: 0 every verdict as it should be, 1 conformance failures, 2 harness "
        "errors, bad usage, an interrupted run or one that judged nothing. `kconform certify` "
        "exits with its certificate: 0 CONFORMS, 1 DOES NOT CONFORM, 2 INCOMPLETE. `kconform "
        "run` with no arguments is the main job.",
    )
    parser.add_argument("--version", action="version", version=f"kconform {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
    except ImportError as exc:  # a module KCONFORM_KINDS names: its help lines are missing
        print(f"kconform: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a bad flag (said in one line), or --help / --version (0)
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else EXIT_USAGE
    try:
        check_environment()
        return int(args.func(args))
    except UsageError as exc:
        print(f"kconform: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("kconform: interrupted", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        if exc.filename is None:  # not a path the user gave: a harness defect, with its trace
            raise
        # a path named on the command line the system refuses (too long, a device, no access)
        print(f"kconform: error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
