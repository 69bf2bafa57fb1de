"""`kconform list`: every case the installed suites declare, with level, spec and title."""

from __future__ import annotations

import argparse
import json

from kconform.cli.base import Command
from kconform.exit_codes import EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(listing: argparse.ArgumentParser) -> None:
    listing.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from kconform.runner import case_catalogue

    cases = case_catalogue()
    if args.format == "json":
        print(json.dumps(cases, indent=1))
        return EXIT_OK
    for c in cases:
        print(f"{c['id']:<58} {c['level']:<6} {c['title']}")
        print(f"{'':<58} {'':<6} spec: {c['spec']}")
    print(f"{len(cases)} cases")
    return EXIT_OK


COMMAND = Command("list", "every case id with level, spec reference and title", add_arguments, run)
