"""`kconform serve`: start one target and keep it running for other tools (its bootstrap address
on stdout's first line), with CLIENT_METRICS subscriptions set, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kconform.cli.base import Command
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from kconform.fixtures.targets.base import Subscription
    from kconform.fixtures.targets.kind import TargetSpec

__all__ = ["COMMAND"]


def add_arguments(serve: argparse.ArgumentParser) -> None:
    from kconform.fixtures.targets.registry import targets_help
    from kconform.plugin.option_table import add_options

    serve.add_argument("target", help=targets_help(existing=False))
    add_options(serve, "serve")
    serve.add_argument(
        "--subscription", action="append", default=[],
        help="a CLIENT_METRICS subscription: 'metrics=org.apache.kafka.;interval.ms=1000'",
    )  # fmt: skip


def _parse_subscription(text: str, index: int) -> Subscription:
    """`metrics=a,b;interval.ms=500;match=client_id=x` (`;` between keys, as configs are lists)."""
    from kconform.fixtures.targets.base import Subscription

    fields: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        key, sep, value = part.partition("=")
        if not sep or key not in ("metrics", "interval.ms", "match", "name"):
            raise UsageError(
                f"--subscription {text!r}: expected metrics=..;interval.ms=..;match=.."
            )
        fields[key] = value
    try:
        interval = int(fields["interval.ms"]) if "interval.ms" in fields else None
    except ValueError:
        raise UsageError(f"--subscription {text!r}: interval.ms is not an integer") from None
    match = dict(m.split("=", 1) for m in fields.get("match", "").split(",") if "=" in m)
    metrics = [m for m in fields.get("metrics", "").split(",") if m]
    return Subscription(fields.get("name", f"kconform-{index}"), metrics, interval, match)


def _one_target(name: str, brokers: int | None) -> TargetSpec:
    """The one target to start: never an existing cluster (serve starts targets; one already
    running needs no serving)."""
    from kconform.fixtures.targets.registry import UnknownTarget, parse_targets, target_kind

    try:
        if "," in name.strip(","):
            raise UsageError(f"serve takes exactly one target, not {name!r}")
        kind = target_kind(name.strip())
        if kind.needs_bootstrap:
            raise UsageError(
                f"serve starts a target; {kind.name!r} is a cluster already running (run the "
                "suites against it with `kconform run --bootstrap-server host:port`)"
            )
        (spec,) = parse_targets(name, brokers=brokers)
    except UnknownTarget as exc:
        raise UsageError(str(exc)) from None
    return spec


def run(args: argparse.Namespace) -> int:
    import signal
    import threading

    from kconform.fixtures.targets.base import TargetError
    from kconform.fixtures.targets.registry import create_target

    spec = _one_target(args.target, args.brokers)
    subscriptions = [_parse_subscription(t, i) for i, t in enumerate(args.subscription)]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    target = create_target(spec)
    try:
        target.start()
        for subscription in subscriptions:
            target.set_subscription(subscription)
        print(target.bootstrap, flush=True)
        print(f"# {target.name}: {target.implementation} {target.version}", flush=True)
        print(f"# capabilities: {', '.join(sorted(target.capabilities))}", flush=True)
        sinks = _sink_urls(target)
        if sinks:  # a real broker's plugin: what `--sink` needs to judge the telemetry it gets
            print(f"# sink: {sinks}", flush=True)
            print(f"# suites: kconform run --bootstrap-server {target.bootstrap} --sink {sinks}",
                  flush=True)  # fmt: skip
        print("# Ctrl-C or SIGTERM stops it", flush=True)
        while not stop.wait(0.5):
            target.check_alive()
    except KeyboardInterrupt:
        pass
    except TargetError as exc:
        print(f"kconform: target failed: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        target.stop()
    return EXIT_OK


def _sink_urls(target: object) -> str:
    """The sink plugin's address on each node of a served real broker, as `--sink` takes them
    ("" for the embedded targets, whose sink is in the harness)."""
    endpoints = getattr(target, "endpoints", None) or []
    return ",".join(f"http://{e.host}:{e.sink_port}" for e in endpoints)


COMMAND = Command(
    "serve",
    "start a target and keep it running (bootstrap on stdout's first line)",
    add_arguments,
    run,
)
