"""What every `kconform` subcommand is: one `Command` (name, help line, its flags, what it runs),
declared in its own module of this package and listed once in `kconform.cli.COMMANDS`; and the
argument parser whose errors are one line and exit 2."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from kconform.exit_codes import EXIT_USAGE

__all__ = ["Command", "Parser"]


class Parser(argparse.ArgumentParser):
    """Bad flags: one line naming `kconform --help`, exit 2 (never argparse's usage block). No
    abbreviations: `--case` is not `--cases`, and a flag added later cannot change what an
    abbreviation meant."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"kconform: error: {message} (see `kconform --help`)\n")


@dataclass(frozen=True)
class Command:
    """One subcommand: `kconform <name>`, shown in `kconform --help` as `help`.

    `add_arguments` declares its flags on the subparser: first those kconform.plugin.option_table
    says it takes (`add_options(parser, name)`), then its own; `run` gets the parsed flags and
    returns the exit code (kconform.exit_codes), raising UsageError for bad input."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    def register(self, subparsers: argparse._SubParsersAction[Parser]) -> Parser:
        parser = subparsers.add_parser(self.name, help=self.help)
        self.add_arguments(parser)
        parser.set_defaults(func=self.run)
        return parser
