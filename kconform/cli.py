"""The `kconform` command.

Exit codes: 0 success, 1 conformance failures, 2 harness errors or bad usage. Bad input gives one
clear line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from kconform import __version__, codec_cli
from kconform.exit_codes import EXIT_FAILURES as EXIT_FAILURES  # re-exported: the exit codes
from kconform.exit_codes import EXIT_OK, EXIT_USAGE, UsageError

if TYPE_CHECKING:
    from kconform.fixtures.targets.base import Subscription

SINK_HELP = (
    "http://host:port[,...]: the kconform sink plugin on each of the external cluster's brokers "
    "(see `kconform plugin build`); the telemetry_sink cases are judged there too"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"kconform: error: {message} (see `kconform --help`)\n")


BROKERS_HELP = "nodes per target (default: 3 embedded, 1 for apache and kraft)"
JOBS_HELP = (
    "worker processes, each with its own targets and clients; cases judging one recorded "
    "client run stay together, and a free worker takes the next case"
)


def _jobs(text: str) -> int:
    """-j N: a positive worker count."""
    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of workers, not {text!r}") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 worker, not {jobs}")
    return jobs


def _check_jobs(jobs: int, targets: str, bootstrap_server: str | None) -> None:
    """Workers each start their own targets; an existing cluster would be shared between them
    (one worker's CLIENT_METRICS subscriptions reach another's clients), so -j refuses it."""
    if jobs > 1 and (bootstrap_server or "external" in targets.split(",")):
        raise UsageError(
            "-j runs each worker against its own targets; an existing cluster "
            "(--bootstrap-server) would be shared by the workers, so use -j 1 with it"
        )


def _cmd_run(args: argparse.Namespace) -> int:
    from kconform.runner import RunOptions, run

    targets = args.target or ("external" if args.bootstrap_server else "reference,librdkafka_mock")
    _check_targets(targets, args.brokers, args.bootstrap_server, args.sink)
    _check_clients(args.client)
    jobs = args.jobs
    if jobs is None:
        from kconform.runner import client_names
        from kconform.plugin.workers import default_run_jobs

        whole = not (args.cases or args.k or args.x)
        jobs = default_run_jobs(targets, client_names(args.client), whole=whole)
    _check_jobs(jobs, targets, args.bootstrap_server)
    baselines = [_readable(Path(b), "baseline") for b in args.baseline]
    options = RunOptions(
        targets=targets, bootstrap_server=args.bootstrap_server, sink=args.sink,
        brokers=args.brokers,
        cases=args.cases or "", level=args.level, baselines=baselines,
        use_default_baselines=not args.no_default_baselines, out=args.out,
        junit=args.junit, json=args.json, keyword=args.k, exitfirst=args.x, verbose=args.verbose,
        clients=args.client, jobs=jobs,
    )  # fmt: skip
    return run(options)


def _cmd_fuzz(args: argparse.Namespace) -> int:
    from kconform.fuzzing import run_fuzz

    return run_fuzz(args)


def _cmd_certify(args: argparse.Namespace) -> int:
    from kconform.reports.model import RunResults
    from kconform.runner import RunOptions, certificate, run
    from kconform.plugin.workers import default_jobs

    _check_clients(args.client)
    options = RunOptions(
        targets="reference", clients=args.client, suites=["client"], out=args.out,
        junit=args.junit, json=args.json, cases=args.cases or "", level=args.level,
        use_default_baselines=False, verbose=args.verbose,
        jobs=args.jobs if args.jobs is not None else default_jobs(args.client),
    )  # fmt: skip
    code = run(options)
    results_path = options.json or ((args.out or Path("reports/out/latest")) / "results.json")
    if results_path.exists():
        print()
        print(certificate(RunResults.read(results_path)))
    return code


def _check_clients(clients: str) -> None:
    """Unknown client names, and `command:` drivers describing capabilities kconform does not
    know, are usage errors (a run would judge them against nothing and look certified)."""
    from kconform.fixtures.clients.registry import check_clients, parse_clients

    try:
        check_clients(parse_clients(clients) if clients.strip() else [])
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check_targets(
    targets: str, brokers: int | None, bootstrap: str | None, sink: str | None = None
) -> None:
    from kconform.fixtures.targets.registry import UnknownTarget, parse_targets

    try:
        parse_targets(targets, brokers=brokers, bootstrap=bootstrap, sink=sink)
    except UnknownTarget as exc:
        raise UsageError(str(exc)) from None


def _cmd_plugin_build(args: argparse.Namespace) -> int:
    """Compile the sink jar against a distribution's libs/; the server.properties lines on stdout
    (so they can be appended to a file), what to do with them on stderr."""
    import re
    import subprocess

    from kconform.fixtures.targets.kafka_dist import (
        DistributionUnavailable,
        build_plugin,
        server_properties_lines,
    )

    libs: Path = args.kafka_libs
    if not libs.is_dir():
        raise UsageError(f"--kafka-libs {libs} is not a folder")
    if not any(libs.glob("kafka-clients-*.jar")) and (libs / "libs").is_dir():
        libs = libs / "libs"  # the distribution's folder rather than its libs/
    versions = [m.group(1) for j in sorted(libs.glob("kafka-clients-*.jar"))
                if (m := re.fullmatch(r"kafka-clients-(\d+\.\d+\.\d+)\.jar", j.name))]  # fmt: skip
    if not versions:
        raise UsageError(
            f"--kafka-libs {libs} holds no kafka-clients-<version>.jar: name a Kafka "
            "distribution's libs/ folder"
        )
    if not 0 < args.sink_port < 65536:
        raise UsageError(f"--sink-port {args.sink_port} is not a TCP port")
    try:
        build = build_plugin(libs.resolve(), args.out, version=versions[0])
    except DistributionUnavailable as exc:
        raise UsageError(str(exc)) from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"cannot build the sink plugin: {exc}") from None
    kind = "with the KIP-1217 exporter" if build.exporter else "receiver only"
    print(f"built {build.jar} against kafka-clients {versions[0]} ({kind})", file=sys.stderr)
    print(
        "copy it into every broker's libs/ and add these lines to each broker's "
        "server.properties (a metric.reporters line already there: append the class to it "
        "with a comma; kconform.sink.host: an address the harness can reach), then restart:",
        file=sys.stderr,
    )
    print(server_properties_lines(build, args.sink_port), end="", flush=True)
    return EXIT_OK


def _readable(path: Path, what: str) -> Path:
    if not path.is_file():
        raise UsageError(f"{what} file {path} does not exist")
    from kconform.reports.model import load_baseline

    if what == "baseline":
        try:
            load_baseline(path)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return path


def _cmd_list(args: argparse.Namespace) -> int:
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


def _cmd_targets(args: argparse.Namespace) -> int:
    from kconform.fixtures.targets.availability import availability

    for name, available, detail in availability():
        print(f"{name:<18} {'available' if available else 'unavailable':<12} {detail}")
    return EXIT_OK


def _cmd_baseline(args: argparse.Namespace) -> int:
    from kconform.reports.model import RunResults, read_baseline, write_baseline

    source = args.results / "results.json" if args.results.is_dir() else args.results
    try:
        results = RunResults.read(source)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    subjects = sorted({r.subject for r in results.results})
    if args.subject not in subjects:
        raise UsageError(
            f"no results for {args.subject!r} in {source} (has: {', '.join(subjects)})"
        )
    if results.interrupted:
        raise UsageError(f"{source} is an interrupted run; a baseline needs a complete one")
    try:  # rewriting a baseline keeps its `why` texts and the entries known to vary
        earlier = read_baseline(args.out) if args.out.is_file() else None
    except ValueError:
        earlier = None
    write_baseline(args.out, args.subject, results.results, earlier)
    count = sum(1 for r in results.results if r.subject == args.subject)
    print(f"baseline for {args.subject}: {count} verdicts written to {args.out}")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from kconform.reports.model import RunResults, merge_runs
    from kconform.runner import output_dir, render_summary, write_reports

    runs = []
    for directory in args.dirs:
        path = directory / "results.json" if directory.is_dir() else directory
        try:
            runs.append(RunResults.read(path))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    merged = merge_runs(runs)
    out = args.out or output_dir(None)
    out.mkdir(parents=True, exist_ok=True)
    merged.write(out / "results.json")
    write_reports(merged, out)
    print(render_summary(merged))
    print(f"report:  {out / 'index.html'}")
    return EXIT_OK


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


def _cmd_serve(args: argparse.Namespace) -> int:
    import signal
    import threading

    from kconform.fixtures.targets.base import TargetError
    from kconform.fixtures.targets.registry import UnknownTarget, create_target, parse_targets

    try:
        (spec,) = parse_targets(args.target, brokers=args.brokers)
    except UnknownTarget as exc:
        raise UsageError(str(exc)) from None
    except ValueError:
        raise UsageError("serve takes exactly one target") from None
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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kconform",
        description="Conformance and fuzz testing of the Kafka protocol features that carry "
        "client telemetry (KIP-511, KIP-714, KIP-977), for brokers and client libraries.",
        epilog="Exit codes: 0 every verdict as it should be, 1 conformance failures, 2 harness "
        "errors, bad usage, an interrupted run or one that judged nothing. `kconform run` with "
        "no arguments is the main job.",
    )
    parser.add_argument("--version", action="version", version=f"kconform {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="the main job: suites against the embedded targets")
    run.add_argument("--target", default="", help="default: reference,librdkafka_mock")
    run.add_argument("--bootstrap-server", default=None, help="host:port of an existing cluster")
    run.add_argument("--sink", default=None, help=SINK_HELP)
    run.add_argument("--brokers", type=int, default=None, help=BROKERS_HELP)
    run.add_argument("--cases", default="", help="case ids: prefixes or wildcards, comma separated")
    run.add_argument("--level", choices=("must", "should", "all"), default="all")
    run.add_argument("--baseline", action="append", default=[], help="verdict baseline JSON")
    run.add_argument("--no-default-baselines", action="store_true",
                     help="ignore the committed baselines/<target>.json")  # fmt: skip
    run.add_argument(
        "--out", type=Path, default=None, help="report folder (default reports/out/<time>)"
    )
    run.add_argument("--junit", type=Path, default=None, help="also write JUnit XML here")
    run.add_argument("--json", type=Path, default=None, help="write the results JSON here")
    run.add_argument("-k", default=None, help="pytest -k expression")
    run.add_argument("-x", action="store_true", help="stop at the first unexpected verdict")
    run.add_argument("-v", "--verbose", action="store_true", help="print failures as they happen")
    run.add_argument("--client", default="", help="client drivers (default: every installed one)")
    run.add_argument("-j", "--jobs", type=_jobs, default=None, help=JOBS_HELP + " (default: "
                     "four per core for a whole run on reference and librdkafka_mock with "
                     "confluent-kafka and kafka-python; 1 with --cases, -k, -x, a real broker, "
                     "java or command: clients)")  # fmt: skip
    run.set_defaults(func=_cmd_run)

    certify = sub.add_parser("certify", help="client suites only, with a certificate-style summary")
    certify.add_argument("--client", required=True,
                         help="confluent-kafka, kafka-python, java, command:<path>")  # fmt: skip
    certify.add_argument("--cases", default="")
    certify.add_argument("--level", choices=("must", "should", "all"), default="all")
    certify.add_argument("--out", type=Path, default=None)
    certify.add_argument("--junit", type=Path, default=None)
    certify.add_argument("--json", type=Path, default=None)
    certify.add_argument("-v", "--verbose", action="store_true")
    certify.add_argument("-j", "--jobs", type=_jobs, default=None, help=JOBS_HELP + " (default: "
                         "four per core for confluent-kafka and kafka-python, whose cases mostly "
                         "wait; 1 for java and command: drivers, whose timing bent)")  # fmt: skip
    certify.set_defaults(func=_cmd_certify)

    listing = sub.add_parser("list", help="every case id with level, spec reference and title")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    listing.set_defaults(func=_cmd_list)

    targets = sub.add_parser("targets", help="the targets available here, and why others are not")
    targets.set_defaults(func=_cmd_targets)

    baseline = sub.add_parser("baseline", help="record a subject's verdicts as its baseline")
    baseline.add_argument("results", type=Path, help="a result folder or results.json")
    baseline.add_argument("--subject", required=True, help="e.g. librdkafka_mock")
    baseline.add_argument(
        "--out", type=Path, required=True, help="e.g. baselines/librdkafka_mock.json"
    )
    baseline.set_defaults(func=_cmd_baseline)

    report = sub.add_parser("report", help="re-render or merge result folders")
    report.add_argument("dirs", nargs="+", type=Path, help="result folders or results.json files")
    report.add_argument("--out", type=Path, default=None)
    report.set_defaults(func=_cmd_report)

    serve = sub.add_parser(
        "serve", help="start a target and keep it running (bootstrap on stdout's first line)"
    )
    serve.add_argument("target", help="reference, reference:<mutant>, librdkafka_mock, "
                       "apache:<v>, kraft[:v]")  # fmt: skip
    serve.add_argument("--brokers", type=int, default=None, help=BROKERS_HELP)
    serve.add_argument(
        "--subscription", action="append", default=[],
        help="a CLIENT_METRICS subscription: 'metrics=org.apache.kafka.;interval.ms=1000'",
    )  # fmt: skip
    serve.set_defaults(func=_cmd_serve)

    messages = sub.add_parser("messages", help="the Kafka messages and versions the codec speaks")
    messages.add_argument("--format", choices=("text", "json"), default="text")
    messages.set_defaults(func=codec_cli.cmd_messages)

    decode = sub.add_parser("decode", help="decode one request or response frame given as hex")
    decode.add_argument("hex", help="the frame, with or without its 4-byte size prefix")
    decode.add_argument("--response", action="store_true", help="the frame is a response")
    decode.add_argument("--api-key", type=int, help="for --response: the request's api key")
    decode.add_argument("--api-version", type=int, help="for --response: the request's version")
    decode.add_argument(
        "--lenient", action="store_true", help="accept nulls in non-nullable fields"
    )
    decode.add_argument("--json", action="store_true", help="also print every field as JSON")
    decode.set_defaults(func=codec_cli.cmd_decode)

    plugin = sub.add_parser("plugin", help="the broker-side telemetry sink (fixtures/plugin)")
    plugin_sub = plugin.add_subparsers(
        dest="plugin_command", metavar="build", required=True, parser_class=_Parser
    )
    plugin_build = plugin_sub.add_parser(
        "build", help="compile the sink jar against a Kafka distribution's libs/ and print the "
        "lines to add to server.properties",
    )  # fmt: skip
    build_arg = plugin_build.add_argument
    build_arg("--kafka-libs", type=Path, required=True,
              help="the libs/ folder of the brokers' Kafka distribution")  # fmt: skip
    build_arg("--out", type=Path, default=None,
              help="folder for kconform-sink.jar (default: kconform's cache)")  # fmt: skip
    build_arg("--sink-port", type=int, default=18099,
              help="the port the sink listens on (default 18099)")  # fmt: skip
    plugin_build.set_defaults(func=_cmd_plugin_build)

    from kconform.volumes_cli import add_volumes_parser

    add_volumes_parser(sub)

    from kconform.soak.command import add_soak_parser

    add_soak_parser(sub)

    from kconform.fuzzing import add_arguments as add_fuzz_arguments

    fuzz = sub.add_parser(
        "fuzz", help="fuzz one target for a time budget: malformed requests, random sessions "
        "checked against the reference model",
    )  # fmt: skip
    add_fuzz_arguments(fuzz)
    fuzz.set_defaults(func=_cmd_fuzz)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"kconform: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("kconform: interrupted", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
