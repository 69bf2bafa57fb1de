"""`kconform plugin build`: the broker-side telemetry sink (fixtures/plugin), compiled against
the brokers' Kafka distribution, with the server.properties lines that install it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kconform.cli.base import Command, Parser
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(plugin: argparse.ArgumentParser) -> None:
    plugin_sub = plugin.add_subparsers(
        dest="plugin_command", metavar="build", required=True, parser_class=Parser
    )
    plugin_build = plugin_sub.add_parser(
        "build", help="compile the sink jar against a Kafka distribution's libs/ and print the "
        "lines to add to server.properties",
    )  # fmt: skip
    build_arg = plugin_build.add_argument
    build_arg("--kafka-libs", type=Path, required=True,
              help="the libs/ folder of the brokers' Kafka distribution")  # fmt: skip
    from kconform.plugin.option_table import add_options

    add_options(plugin_build, "plugin build")  # --out
    build_arg("--sink-port", type=int, default=18099,
              help="the port the sink listens on (default 18099)")  # fmt: skip


def build(args: argparse.Namespace) -> int:
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
    try:
        is_folder = libs.is_dir()
    except OSError as exc:  # a name too long for the file system
        raise UsageError(f"--kafka-libs {libs}: {exc.strerror or exc}") from None
    if not is_folder:
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


COMMAND = Command(
    "plugin", "the broker-side telemetry sink (fixtures/plugin)", add_arguments, build
)
