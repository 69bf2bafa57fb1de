"""`kconform clients`: which client-driver kinds are available on this machine, and why others
are not; `kconform clients lock <kind>@<version>`: resolve a subject's dependencies once and
write them as its committed lock (`kconform.fixtures.lockfiles`), the only way a build gets one."""

from __future__ import annotations

import argparse

from kconform.cli.base import Command
from kconform.errors import Unavailable, UsageError
from kconform.exit_codes import EXIT_OK, EXIT_USAGE

__all__ = ["COMMAND"]


def add_arguments(clients: argparse.ArgumentParser) -> None:
    actions = clients.add_subparsers(dest="clients_action", metavar="{lock}")
    lock = actions.add_parser(
        "lock",
        help="resolve each subject's whole dependency set now and write it as its lock",
        description="Resolve each named subject's dependencies from its registry now and write "
        "them as its lock under fixtures/lockfiles/<kind>/<version>/ of the checkout (or the "
        "first folder of $KCONFORM_LOCKFILES; an installed kconform without it: lockfiles/ "
        "in its cache, $KCONFORM_CACHE or ~/.cache/kconform): package-lock.json, go.mod and "
        "go.sum, Cargo.lock, pip requirements with hashes, or an Apache release's Maven "
        "artifacts with checksums. Builds use only a committed lock; commit what this writes.",
    )
    lock.add_argument(
        "subjects",
        nargs="+",
        metavar="KIND@VERSION",
        help="as --client takes them: franz-go@v1.22.3, kafkajs@2.2.4, java@4.4.0 (the Apache "
        "release's jars, which apache:4.4.0 uses too), ...",
    )


def run(args: argparse.Namespace) -> int:
    if getattr(args, "clients_action", None) == "lock":
        return _lock(args.subjects)
    from kconform.fixtures.clients.registry import availability

    rows = availability()
    width = max((len(name) for name, _, _ in rows), default=0)
    for name, available, detail in rows:
        print(f"{name:<{width}} {'available' if available else 'unavailable':<12} {detail}")
    return EXIT_OK


def _lock(subjects: list[str]) -> int:
    """Each subject's lock written, or why not; exit 2 when any could not be."""
    from kconform.fixtures import lockfiles
    from kconform.fixtures.clients.registry import lockers, parse_clients

    specs = []
    for text in subjects:
        if not text.strip():
            raise UsageError("clients lock: an empty subject (give KIND@VERSION)")
        specs += parse_clients(text)
    locking = lockers()
    failed = 0
    for spec in specs:
        lock = locking.get(spec.kind)
        if lock is None:
            kinds = ", ".join(sorted(locking))
            raise UsageError(
                f"clients lock: {spec.label}: a {spec.kind} driver is built from no registry, "
                f"so it has no lock (kinds with locks: {kinds})"
            )
        try:
            folder = lock(spec)
        except Unavailable as exc:
            print(f"{spec.label}: not locked: {exc}")
            failed += 1
            continue
        print(f"{spec.label}: {lockfiles.digest(folder)} written to {folder}")
    return EXIT_USAGE if failed else EXIT_OK


COMMAND = Command("clients", "the client drivers available here, and why not; `clients lock`",
                  add_arguments, run)  # fmt: skip
