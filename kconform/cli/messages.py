"""`kconform messages`: the Kafka messages and versions the codec declares."""

from __future__ import annotations

import argparse
import json

from kconform.cli.base import Command
from kconform.exit_codes import EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(messages: argparse.ArgumentParser) -> None:
    messages.add_argument("--format", choices=("text", "json"), default="text",
                          help="text (default) or json")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from kconform.codecs.messages import ALL_MESSAGES

    rows = [
        {
            "name": m.struct_name,
            "api_key": m.api_key,
            "kind": m.kind,
            "versions": str(m.valid_versions),
            "flexible": str(m.flexible_versions),
        }
        for m in ALL_MESSAGES
    ]
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for r in rows:
        key = "-" if r["api_key"] is None else str(r["api_key"])
        print(f"{key:>4}  {r['name']:<36} v{r['versions']:<6} flexible {r['flexible']}")
    return EXIT_OK


COMMAND = Command(
    "messages", "the Kafka messages and versions the codec speaks", add_arguments, run
)
