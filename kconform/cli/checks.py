"""Checks several subcommands share once their flags are parsed: targets and clients resolved
into specs once, and a bad target, client, case selection, baseline or output is a UsageError
(one line, exit 2) before anything starts. The flags themselves, their help and validators:
kconform.plugin.option_table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kconform.errors import UsageError

if TYPE_CHECKING:
    from kconform.fixtures.clients.kind import ClientSpec
    from kconform.fixtures.targets.kind import TargetSpec

__all__ = [
    "ClientSpecs",
    "TargetSpecs",
    "check_bootstrap",
    "check_cases",
    "check_coverage",
    "check_outputs",
    "readable",
    "resolve_clients",
    "resolve_targets",
]

TargetSpecs = tuple["TargetSpec", ...]
"""`--target` (with --brokers, --bootstrap-server, --sink) parsed once, as it travels."""
ClientSpecs = tuple["ClientSpec", ...]
"""`--client` parsed once; None where it travels means every installed driver."""


def check_cases(text: str, kind: str | None = None) -> None:
    """A `--cases` pattern that selects nothing is a usage error naming the nearest case ids,
    rule ids or prefixes, before anything starts (a run of nothing would only say so at the
    end). `kind`: only cases of that kind count (certify runs the client cases)."""
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    if not patterns:
        return
    from kconform.cli.selection import refuse_unmatched
    from kconform.engine.model import CASES
    from kconform.runner import case_catalogue

    case_catalogue()  # imports the suites, which declare their cases
    known = [c for c in CASES.values() if kind is None or c.kind == kind]
    refuse_unmatched(patterns, known, f"{kind} case" if kind else "case", "kconform list")


def check_outputs(
    folders: dict[str, Path | None], files: dict[str, Path | None] | None = None
) -> None:
    """Every output the command was given ({flag: path}; None: the default, not checked here)
    can be written, before anything starts: a UsageError (one line, exit 2) otherwise."""
    from kconform.outputs import output_file, output_folder

    for flag, folder in folders.items():
        if folder is not None:
            output_folder(folder, flag)
    for flag, file in (files or {}).items():
        if file is not None:
            output_file(file, flag)


def resolve_clients(text: str | None, timeout: float | None = None) -> ClientSpecs | None:
    """`--client` parsed once (None when not given: every installed driver). Unknown client
    names, and `command:` drivers describing capabilities kconform does not know, are usage
    errors (a run would judge them against nothing and look certified); a driver's
    `--describe` may take `timeout` s (`--client-timeout`) as its scenarios may."""
    if text is None:
        return None
    from kconform.fixtures.clients.registry import check_clients as check
    from kconform.fixtures.clients.registry import parse_clients

    try:
        specs = tuple(parse_clients(text))
        check(list(specs), timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return specs


def check_coverage(targets: TargetSpecs, clients: ClientSpecs | None, jobs: int | None) -> None:
    """--coverage on subjects it can measure: apache targets, Java clients (a UsageError naming
    the one that is not a JVM kconform starts), in one worker (each case's dumps come from one
    set of JVMs)."""
    from kconform.fixtures.coverage.subjects import coverage_problem

    problem = coverage_problem([(t.label, t.kind) for t in targets], list(clients or ()))
    if problem:
        raise UsageError(problem)
    if jobs is not None and jobs > 1:
        raise UsageError("--coverage attributes each case's coverage in one worker: use -j 1")


def resolve_targets(
    text: str | None,
    brokers: int | None,
    bootstrap: str | None,
    sink: str | None = None,
    *,
    one: bool = False,
) -> TargetSpecs:
    """`--target` parsed once: the names given, else the default targets (`default_targets`:
    the existing cluster with `--bootstrap-server`; `one` for a command taking one target).
    A `--bootstrap-server` that no target given takes is refused (parse_targets)."""
    from kconform.fixtures.targets.registry import UnknownTarget, default_targets, parse_targets

    names = text or default_targets(bootstrap=bootstrap, one=one)
    try:
        return tuple(parse_targets(names, brokers=brokers, bootstrap=bootstrap, sink=sink))
    except UnknownTarget as exc:
        raise UsageError(str(exc)) from None


def check_bootstrap(bootstrap: str) -> None:
    """`--bootstrap-server` names at least one Kafka listener (one ApiVersions request each):
    a port that is something else is said to be so, before anything starts."""
    from kconform.fixtures.targets.external import parse_bootstrap
    from kconform.fixtures.targets.kafka_probe import not_kafka

    try:
        addresses = parse_bootstrap(bootstrap)
    except ValueError as exc:
        raise UsageError(f"--bootstrap-server {bootstrap}: {exc}") from None
    reasons = []
    for host, port in addresses:
        reason = not_kafka(host, port)
        if reason is None:
            return
        reasons.append(reason)
    raise UsageError(f"--bootstrap-server: {'; '.join(reasons)}")


def readable(path: Path, what: str) -> Path:
    if not path.is_file():
        raise UsageError(f"{what} file {path} does not exist")
    from kconform.reports.model import load_baseline

    if what == "baseline":
        try:
            load_baseline(path)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return path
