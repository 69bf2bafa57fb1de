"""`kconform clients`: which client-driver kinds are available on this machine, and why others
are not."""

from __future__ import annotations

import argparse

from kconform.cli.base import Command
from kconform.exit_codes import EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(clients: argparse.ArgumentParser) -> None:
    """No flags."""


def run(args: argparse.Namespace) -> int:
    from kconform.fixtures.clients.registry import availability

    rows = availability()
    width = max((len(name) for name, _, _ in rows), default=0)
    for name, available, detail in rows:
        print(f"{name:<{width}} {'available' if available else 'unavailable':<12} {detail}")
    return EXIT_OK


COMMAND = Command("clients", "the client drivers available here, and why not", add_arguments, run)
