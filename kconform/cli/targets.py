"""`kconform targets`: which target kinds are available on this machine, and why others are not."""

from __future__ import annotations

import argparse

from kconform.cli.base import Command
from kconform.exit_codes import EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(targets: argparse.ArgumentParser) -> None:
    """No flags."""


def run(args: argparse.Namespace) -> int:
    from kconform.fixtures.targets.registry import availability

    for name, available, detail in availability():
        print(f"{name:<18} {'available' if available else 'unavailable':<12} {detail}")
    return EXIT_OK


COMMAND = Command(
    "targets", "the targets available here, and why others are not", add_arguments, run
)
