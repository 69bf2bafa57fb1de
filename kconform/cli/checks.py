"""Flag checks and help texts several subcommands share: a bad target, client, baseline or
worker count is a UsageError (one line, exit 2) before anything starts."""

from __future__ import annotations

import argparse
from pathlib import Path

from kconform.errors import UsageError

__all__ = [
    "CASES_HELP",
    "CLIENT_TIMEOUT_HELP",
    "JOBS_HELP",
    "SINK_HELP",
    "check_cases",
    "check_clients",
    "check_coverage",
    "check_outputs",
    "check_targets",
    "client_timeout",
    "jobs",
    "readable",
]

SINK_HELP = (
    "http://host:port[,...]: the kconform sink plugin on each of the external cluster's brokers "
    "(see `kconform plugin build`); the telemetry_sink cases are judged there too"
)
JOBS_HELP = (
    "worker processes, each with its own targets and clients; cases judging one recorded "
    "client run stay together, and a free worker takes the next case"
)


CASES_HELP = (
    "cases to run, comma separated: case ids (kip714.push.terminating.single: that case alone), "
    "prefixes that end at a dot (kip714.push. or kip714.push) or wildcards (kip714.push.*), or "
    "rule ids and wildcards over them (kip714.get.*): a pattern that names no case id selects "
    "the cases that judge the rules it names; `kconform list` shows both"
)


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


CLIENT_TIMEOUT_HELP = (
    "seconds a client under test may take from its start to its first request (default 30); "
    "a driver that hangs costs each case this much, and after two driver faults in a row its "
    "remaining cases are skipped"
)


def client_timeout(text: str) -> float:
    """--client-timeout S: a positive number of seconds."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, not {text!r}") from None
    if not 0 < seconds <= 3600:
        raise argparse.ArgumentTypeError(f"expected seconds in (0, 3600], not {text}")
    return seconds


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


def jobs(text: str) -> int:
    """-j N: a positive worker count."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of workers, not {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 worker, not {count}")
    return count


def check_clients(clients: str, timeout: float | None = None) -> None:
    """Unknown client names, and `command:` drivers describing capabilities kconform does not
    know, are usage errors (a run would judge them against nothing and look certified); a
    driver's `--describe` may take `timeout` s (`--client-timeout`) as its scenarios may."""
    from kconform.fixtures.clients.registry import check_clients as check
    from kconform.fixtures.clients.registry import parse_clients

    try:
        check(parse_clients(clients) if clients.strip() else [], timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def check_coverage(targets: str, clients: str, jobs: int | None) -> None:
    """--coverage on subjects it can measure: apache targets, Java clients (a UsageError naming
    the one that is not a JVM kconform starts), in one worker (each case's dumps come from one
    set of JVMs)."""
    from kconform.fixtures.clients.registry import parse_clients
    from kconform.fixtures.coverage.subjects import coverage_problem

    named = parse_clients(clients) if clients.strip() else []
    entries = [(t.strip(), t.strip()) for t in targets.split(",") if t.strip()]
    problem = coverage_problem(entries, named)
    if problem:
        raise UsageError(problem)
    if jobs is not None and jobs > 1:
        raise UsageError("--coverage attributes each case's coverage in one worker: use -j 1")


def check_targets(
    targets: str,
    brokers: int | None,
    bootstrap: str | None,
    sink: str | None = None,
    *,
    probe: bool = True,
) -> None:
    """The targets parse; `probe`: and `--bootstrap-server` is a Kafka listener
    (`check_bootstrap`, which a caller with cheaper checks still to make runs last)."""
    from kconform.fixtures.targets.registry import UnknownTarget, parse_targets

    try:
        parse_targets(targets, brokers=brokers, bootstrap=bootstrap, sink=sink)
    except UnknownTarget as exc:
        raise UsageError(str(exc)) from None
    if bootstrap and probe:
        check_bootstrap(bootstrap)


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
