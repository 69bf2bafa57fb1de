"""Every option the `kconform` subcommands and the pytest plugin share, declared once (issue 41).

One `Option` says its flags, its validator, its help and which subcommands accept it;
`add_options(parser, command)` gives a subcommand's argparse parser exactly those, and
`add_pytest_options(group)` gives the plugin those it takes. A subcommand not listed for an
option refuses it as argparse refuses any unknown flag (exit 2): never a flag accepted and
ignored. A validator refuses an empty value, and any bad one, in one line naming the flag, the
value and what is accepted.

It lives beside the plugin (kconform.plugin), which the CLI may import and which may not import
the CLI (tests/test_layers.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "CASES_HELP",
    "CLIENT_TIMEOUT_HELP",
    "DROP",
    "JOBS_HELP",
    "LEVELS",
    "OPTIONS",
    "SINK_HELP",
    "Option",
    "add_options",
    "add_pytest_options",
    "client_timeout",
    "jobs",
    "names",
]

LEVELS = ("must", "should", "all")
"""`--level` everywhere (run, certify, list, pytest): must = MUST cases, should = MUST and
SHOULD cases, all = every case (INFO too): the rule book's levels, strongest first."""
LEVEL_HELP = "must (MUST cases), should (MUST and SHOULD cases) or all (every case; default)"

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
CLIENT_TIMEOUT_HELP = (
    "seconds a client under test may take from its start to its first request (default 30); "
    "a driver that hangs costs each case this much, and after two driver faults in a row its "
    "remaining cases are skipped"
)


class _Adder(Protocol):
    """argparse's `add_argument` and pytest's `OptionGroup.addoption` alike."""

    def __call__(self, *flags: str, **kwargs: Any) -> Any: ...


# -- validators: text in, a value out, or argparse.ArgumentTypeError naming what is accepted --


def names(flag: str, accepted: str) -> Callable[[str], str]:
    """A comma list with at least one entry and no empty one (`a,,b` and `''` are refused:
    an empty entry is a typo, never "everything"); its entries stripped, rejoined by commas."""

    def parse(text: str) -> str:
        parts = [p.strip() for p in text.split(",")]
        if not any(parts):
            raise argparse.ArgumentTypeError(f"{text!r} is empty: expected {accepted}")
        if not all(parts):
            raise argparse.ArgumentTypeError(
                f"{text!r} has an empty entry between commas: expected {accepted}"
            )
        return ",".join(parts)

    parse.__name__ = flag  # argparse names the type in its own messages
    return parse


def text(flag: str, accepted: str) -> Callable[[str], str]:
    """Any text but an empty (or blank) one."""

    def parse(value: str) -> str:
        if not value.strip():
            raise argparse.ArgumentTypeError(f"{value!r} is empty: expected {accepted}")
        return value.strip()

    parse.__name__ = flag
    return parse


def number(
    flag: str, kind: Callable[[str], Any], low: float, high: float | None = None, what: str = ""
) -> Callable[[str], Any]:
    """An int or float in [low, high] (high None: no upper bound)."""
    shown = f"[{low:g}, {high:g}]" if high is not None else f"at least {low:g}"
    accepted = f"{what or ('a whole number' if kind is int else 'a number')} {shown}"

    def parse(value: str) -> Any:
        try:
            result = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r}: expected {accepted}") from None
        if result != result or result < low or (high is not None and result > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range: expected {accepted}")
        return result

    parse.__name__ = flag
    return parse


def client_timeout(value: str) -> float:
    """--client-timeout S: a positive number of seconds, at most an hour."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, not {value!r}") from None
    if not 0 < seconds <= 3600:
        raise argparse.ArgumentTypeError(f"expected seconds in (0, 3600], not {value}")
    return seconds


def jobs(value: str) -> int:
    """-j N: a positive worker count."""
    try:
        count = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of workers, not {value!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 worker, not {count}")
    return count


MAX_VALUE_BYTES = 1_000_000
"""The largest record value `volumes` produces: a broker's default message.max.bytes (1 MiB)
less the batch and record framing."""


def value_bytes(value: str) -> tuple[int, int]:
    """--value-bytes MIN:MAX (or N for N:N): 0 <= MIN <= MAX <= MAX_VALUE_BYTES."""
    low, sep, high = value.partition(":")
    accepted = f"MIN:MAX or N, whole numbers with 0 <= MIN <= MAX <= {MAX_VALUE_BYTES}"
    try:
        sizes = (int(low), int(high if sep else low))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected {accepted}") from None
    if not 0 <= sizes[0] <= sizes[1] <= MAX_VALUE_BYTES:
        raise argparse.ArgumentTypeError(f"{value} is out of range: expected {accepted}")
    return sizes


# -- the table --

DROP = object()
"""In `per_command`: this command's parser gets no such keyword (a switch takes no `type`)."""


@dataclass(frozen=True)
class Option:
    """One option: `flags` as typed, `help` (text, or a function for help read from the kind
    registries), `commands` that accept it (`matrix run` for a nested one), argparse's
    `kwargs` (type, default, action, choices...), and per-command changes to them. `pytest`:
    the plugin takes it too, with the same validator (a value it returns is text, as the
    plugin's options are: the runner writes parsed values back as text once)."""

    flags: tuple[str, ...]
    help: str | Callable[[], str]
    commands: frozenset[str]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    per_command: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    pytest: bool = False

    @property
    def name(self) -> str:
        return self.flags[-1]

    def help_text(self) -> str:
        return self.help() if callable(self.help) else self.help

    def arguments(self, command: str | None) -> dict[str, Any]:
        """The keyword arguments for `command`'s parser (None: the pytest plugin's)."""
        if command is None:
            return {"help": self.help_text(), **self.kwargs}
        merged = {"help": self.help_text(), **self.kwargs, **self.per_command.get(command, {})}
        if callable(merged["help"]):
            merged["help"] = merged["help"]()
        return {key: value for key, value in merged.items() if value is not DROP}


def _targets_help() -> str:
    from kconform.fixtures.targets.registry import targets_help

    return f"broker target(s), comma separated: {targets_help()}"


def _one_target_help() -> str:
    from kconform.fixtures.targets.registry import default_targets_help, targets_help

    return f"one target: {targets_help()} (default: {default_targets_help(one=True)})"


def _run_targets_help() -> str:
    from kconform.fixtures.targets.registry import default_targets_help

    return f"{_targets_help()} (default: {default_targets_help()})"


def _list_target_help() -> str:
    from kconform.fixtures.targets.registry import embedded_kinds

    return (f"broker cases whose needed capabilities this embedded target has "
            f"({', '.join(embedded_kinds())}); the others are unsupported on it")  # fmt: skip


def _brokers_help() -> str:
    from kconform.fixtures.targets.registry import brokers_help

    return brokers_help()


def _clients_help() -> str:
    from kconform.fixtures.clients.registry import clients_help

    return f"client driver(s), comma separated: {clients_help()}"


def _jobs_help(command: str) -> Callable[[], str]:
    def text() -> str:
        from kconform.fixtures.clients.registry import light_kinds
        from kconform.fixtures.targets.registry import embedded_kinds

        light = " and ".join(light_kinds())
        if command == "certify":
            return (f"{JOBS_HELP} (default: four per core for {light}, whose cases mostly "
                    "wait; 1 for the others, whose timing bent or is unknown)")  # fmt: skip
        return (f"{JOBS_HELP} (default: four per core for a whole run on "
                f"{' and '.join(embedded_kinds())} with {light}; 1 with --cases, -k, -x, other "
                "targets or other clients)")  # fmt: skip

    return text


RUNS = frozenset({"run", "certify"})
ONE_TARGET = frozenset({"fuzz", "soak", "volumes"})
TARGET_NAMES = "target names as `kconform targets` lists them"
CLIENT_NAMES = "client names as `kconform clients` lists them (kafka-python, java@4.4.0, ...)"
CASE_NAMES = "case ids, prefixes, wildcards or rule ids, as `kconform list` shows them"
REPORT_FOLDER = "report folder (default reports/out/<time>)"

# fmt: off
OPTIONS: tuple[Option, ...] = (
    Option(("--target",), _targets_help, frozenset({"run", "list", *ONE_TARGET}),
           {"type": names("--target", TARGET_NAMES), "default": None},
           per_command={c: {"help": _one_target_help} for c in ONE_TARGET}
           | {"list": {"type": text("--target", "one embedded target, as `kconform targets` "
                                    "lists them"),
                       "help": _list_target_help}}
           | {"run": {"help": _run_targets_help}},
           pytest=True),
    Option(("--bootstrap-server",),
           "host:port[,host:port] of an existing cluster: the external target (with --target, "
           "only external targets take it)", frozenset({"run", *ONE_TARGET}),
           {"type": text("--bootstrap-server", "host:port[,host:port]"), "default": None},
           pytest=True),
    Option(("--sink",), SINK_HELP, frozenset({"run", *ONE_TARGET}),
           {"type": names("--sink", "http://host:port[,...]"), "default": None},
           pytest=True),
    Option(("--brokers",), _brokers_help, frozenset({"run", "serve", *ONE_TARGET}),
           {"type": number("--brokers", int, 1, what="a number of brokers"), "default": None},
           per_command={"fuzz": {"default": 1}}, pytest=True),
    Option(("--without",),
           "capabilities to withhold from every target, comma separated (e.g. telemetry_sink): "
           "its cases run as on a target that lacks them", frozenset(),
           {"type": names("--without", "capability names"), "default": None},
           pytest=True),
    Option(("--client",), lambda: _clients_help() + " (default: every installed one)", RUNS,
           {"type": names("--client", CLIENT_NAMES), "default": None},
           per_command={"certify": {"required": True, "help": _clients_help}},
           pytest=True),
    Option(("--client-timeout",), CLIENT_TIMEOUT_HELP, frozenset({*RUNS, "driver check"}),
           {"type": client_timeout, "default": None}, pytest=True,
           per_command={"driver check": {"help": "seconds the driver may take to answer "
                                         "--describe and to its first delivery (default 10)"}}),
    Option(("--cases",), CASES_HELP, frozenset({*RUNS, "fuzz", "matrix run"}),
           {"type": names("--cases", CASE_NAMES), "default": None},
           per_command={"certify": {"help": CASES_HELP + " (client cases only)"},
                        "fuzz": {"default": "fuzz.", "help": "fuzz case ids, prefixes that "
                                 "end at a dot or wildcards (default: every fuzz case)"},
                        "matrix run": {"help": "only these cases (as `kconform run --cases`); "
                                       "--write-baselines then updates their verdicts and "
                                       "keeps the others'"}},
           pytest=True),
    Option(("--level",), LEVEL_HELP, frozenset({*RUNS, "list"}),
           {"choices": LEVELS, "default": "all"}, pytest=True),
    Option(("--baseline",), "verdict baseline JSON ({subject, verdicts}): a run then fails only "
           "on differences; on top of the committed baselines/<kind>/<version>.json",
           frozenset({*RUNS, "soak"}), {"action": "append", "default": []},
           per_command={"soak": {"type": Path, "help": "verdict baseline JSON for the target "
                                 "(known deviations): only changes then fail"}},
           pytest=True),
    Option(("--no-default-baselines",),
           "ignore the committed baselines/<kind>/<version>.json", RUNS,
           {"action": "store_true"}),
    Option(("--case-timeout",), "seconds per case before the plugin gives up on it",
           frozenset(), {"type": number("--case-timeout", float, 0.001), "default": 120.0},
           pytest=True),
    Option(("--out",), REPORT_FOLDER,
           frozenset({*RUNS, "report", *ONE_TARGET, "baseline", "matrix run", "matrix render",
                      "matrix merge", "plugin build"}),
           {"type": Path, "default": None},
           per_command={"baseline": {"help": "the baseline file written, e.g. "
                                     "baselines/<kind>/<version>.json"},
                        "matrix merge": {"required": True,
                                         "help": "the joined folder (new or empty)"},
                        "matrix run": {"default": Path("build/matrix"),
                                       "help": "results folder (default build/matrix)"},
                        "matrix render": {"default": Path("docs"), "help": "folder of matrix.md "
                                          "and matrix.html (default ./docs)"},
                        "plugin build": {"help": "folder for kconform-sink.jar (default: "
                                         "kconform's cache)"},
                        "soak": {"help": "output folder (default reports/out/soak-<time>)"},
                        "volumes": {"help": "output folder (default reports/out/volumes-<time>)"}}),
    Option(("--json",), "write the results JSON here", frozenset({*RUNS, "decode", "matrix diff"}),
           {"type": Path, "default": None},
           per_command={"decode": {"action": "store_true", "type": DROP, "default": DROP,
                                   "help": "also print every field as JSON"},
                        "matrix diff": {"action": "store_true", "type": DROP, "default": DROP,
                                        "help": "JSON instead of text"}}),
    Option(("--junit",), "also write JUnit XML here", RUNS, {"type": Path, "default": None}),
    Option(("-k",), "pytest -k expression over the case names", frozenset({"run"}),
           {"type": text("-k", "a pytest -k expression"), "default": None}),
    Option(("-x",), "stop at the first unexpected verdict", frozenset({"run"}),
           {"action": "store_true"}),
    Option(("-v", "--verbose"), "print failures as they happen", frozenset({*RUNS, "fuzz"}),
           {"action": "store_true"}),
    Option(("--coverage",),
           "JaCoCo on the apache target's broker nodes and the Java client's JVMs: which of "
           "Apache's KIP-511/KIP-714 code each case reaches, in the report (docs/coverage.md; "
           "one worker)", RUNS, {"action": "store_true"}, pytest=True),
    Option(("-j", "--jobs"), _jobs_help("run"), RUNS | {"matrix run"},
           {"type": jobs, "default": None},
           per_command={"certify": {"help": _jobs_help("certify")},
                        "matrix run": {"help": "subjects run at once, side by side (a pytest "
                                       "process each; default: one per core)"}}),
    # volumes' workload: each bound is the smallest (largest) workload the run can make
    Option(("--topics",), "topics produced to (1-100; default 2)", frozenset({"volumes"}),
           {"type": number("--topics", int, 1, 100, "a number of topics"), "default": 2}),
    Option(("--partitions",), "partitions per topic (1-1000; default 3)",
           frozenset({"volumes"}),
           {"type": number("--partitions", int, 1, 1000, "a number of partitions"),
            "default": 3}),
    Option(("--records",), "records per topic (at least 1; default 300)", frozenset({"volumes"}),
           {"type": number("--records", int, 1, what="a number of records"), "default": 300}),
    Option(("--keys",), "distinct keys (at least 1; default 64)", frozenset({"volumes"}),
           {"type": number("--keys", int, 1, what="a number of keys"), "default": 64}),
    Option(("--value-bytes",), f"value size range MIN:MAX, or N for N:N (0 <= MIN <= MAX <= "
           f"{MAX_VALUE_BYTES}; default 64:1024)", frozenset({"volumes"}),
           {"type": value_bytes, "default": (64, 1024)}),
    Option(("--zipf",), "key skew exponent, 0 (uniform) to 10 (default 1.8)",
           frozenset({"volumes"}),
           {"type": number("--zipf", float, 0, 10, "an exponent"), "default": 1.8}),
)
# fmt: on


FROM_TABLE = "kconform_option"
"""The attribute `add_options` sets on each argparse action it adds (tests/cli check it)."""


def add_options(parser: argparse.ArgumentParser, command: str) -> None:
    """`command`'s options from the table, in the table's order."""
    for declared in OPTIONS:
        if command in declared.commands:
            action = parser.add_argument(*declared.flags, **declared.arguments(command))
            setattr(action, FROM_TABLE, declared.name)


def add_pytest_options(add: _Adder) -> None:
    """The plugin's options from the table (`add`: its group's `addoption`)."""
    for declared in OPTIONS:
        if declared.pytest:
            add(*declared.flags, **declared.arguments(None))
