"""The option table (kconform.plugin.option_table, issue 41 "each option declared once"): every
shared option of every subcommand and of the pytest plugin comes from it, each option has help,
a subcommand the table does not list for an option refuses it (exit 2, never ignored), and
`--bootstrap-server` means the external target wherever a target is chosen.

Nothing starts: runs, soaks, volume runs and the server probe are stand-ins that record what
would have run (the technique of test_selector_fuzz.py). Each test costs milliseconds."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
from pathlib import Path
from typing import Any

import pytest

from kconform.cli import build_parser, main
from kconform.exit_codes import EXIT_USAGE
from kconform.plugin import options as plugin_options
from kconform.plugin.option_table import FROM_TABLE, OPTIONS


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """{subcommand words: its parser}, nested ones (`matrix run`) included."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, words: str) -> None:
        if words:
            found[words] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{words} {name}".strip())

    walk(build_parser(), "")
    return found


PARSERS = _parsers()
TABLE_FLAGS = {flag: option for option in OPTIONS for flag in option.flags}


def test_every_shared_flag_of_every_subcommand_comes_from_the_table() -> None:
    for words, parser in PARSERS.items():
        for action in parser._actions:
            shared = [f for f in action.option_strings if f in TABLE_FLAGS]
            if shared:  # a flag the table declares, added by hand, would drift from it
                assert getattr(action, FROM_TABLE, None), f"kconform {words} {shared[0]}"
    for option in OPTIONS:
        for words in option.commands:
            flags = {f for a in PARSERS[words]._actions for f in a.option_strings}
            assert option.name in flags, f"the table gives kconform {words} {option.name}"


def test_every_option_of_every_subcommand_has_help() -> None:
    for words, parser in PARSERS.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            assert action.help, f"kconform {words} {action.option_strings or action.dest}"


class _Group:
    """What pytest's option group records (`addoption`)."""

    def __init__(self) -> None:
        self.added: dict[str, dict[str, Any]] = {}

    def addoption(self, *flags: str, **kwargs: Any) -> None:
        for flag in flags:
            self.added[flag] = kwargs

    def getgroup(self, name: str) -> _Group:
        return self


def test_the_plugin_takes_the_tables_options_with_the_same_help_and_checks() -> None:
    group = _Group()
    plugin_options.pytest_addoption(group)  # type: ignore[arg-type]
    for option in OPTIONS:
        if option.pytest:
            assert group.added[option.name]["help"] == option.help_text(), option.name
            assert group.added[option.name].get("type") == option.kwargs.get("type")
    own = {f for f in group.added if f not in TABLE_FLAGS}
    for words, parser in PARSERS.items():  # a plugin flag a subcommand has too is shared
        flags = {f for a in parser._actions for f in a.option_strings}
        assert not own & flags, f"kconform {words} and the plugin both declare {own & flags}"
    assert all(f.startswith("--kconform-") or f in PLUGIN_ONLY for f in own), own


PLUGIN_ONLY = {"--stop-target-on-fail", "--coverage-summary"}

# a subcommand's required arguments, so that argparse gets as far as the flag refused
MINIMAL = {
    "run": ["run"],
    "certify": ["certify", "--client", "kafka-python"],
    "fuzz": ["fuzz"],
    "soak": ["soak"],
    "volumes": ["volumes"],
    "serve": ["serve", "reference"],
    "list": ["list"],
    "report": ["report", "results"],
}


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_a_subcommand_the_table_does_not_list_refuses_the_option(
    option: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    takes_value = option.kwargs.get("action") != "store_true"
    for words, argv in MINIMAL.items():
        if words in option.commands:
            continue
        flag = option.flags[-1]
        assert main([*argv, flag, *(["1"] if takes_value else [])]) == EXIT_USAGE, words
        err = capsys.readouterr().err
        assert f"unrecognized arguments: {flag}" in err and err.count("\n") == 1, (words, err)


def test_help_and_version_exit_0_and_a_bad_flag_returns_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--version"]) == 0
    assert main(["run", "--help"]) == 0
    assert main(["run", "--no-such-flag"]) == EXIT_USAGE  # returned, not raised
    assert main(["run", "--case", "kip511.apiversions.schema"]) == EXIT_USAGE  # no abbreviations
    assert "unrecognized arguments: --case " in capsys.readouterr().err


class Started(Exception):
    """A stand-in was reached: what it records is what would have run."""


@pytest.fixture
def started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Stand-ins for everything that would start or probe; they record their arguments."""
    seen: dict[str, Any] = {"probed": []}

    def stand_in(name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            seen[name] = args
            raise Started

        return record

    for module, name in [("kconform.runner", "run"), ("pytest", "main"),
                         ("kconform.cli.soak", "soak"),
                         ("kconform.cli.volumes", "_produce_and_collect"),
                         ("kconform.fixtures.targets.registry", "create_target")]:  # fmt: skip
        monkeypatch.setattr(importlib.import_module(module), name, stand_in(name))
    monkeypatch.setattr("kconform.cli.checks.check_bootstrap", seen["probed"].append)
    monkeypatch.setattr("kconform.cli.run.check_bootstrap", seen["probed"].append)
    monkeypatch.chdir(tmp_path)
    return seen


def _run(argv: list[str]) -> tuple[Any, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            return main(argv), err.getvalue()
        except Started:
            return "started", err.getvalue()


def _aimed_at(command: str, seen: dict[str, Any]) -> list[str]:
    """The target labels the stand-in of `command` was handed."""
    if command == "fuzz":
        argv = seen["main"][0]
        return str(argv[argv.index("--target") + 1]).split(",")
    if command == "soak":
        return [seen["soak"][0].target]
    if command == "volumes":
        return [seen["_produce_and_collect"][0].label]
    return [t.label for t in seen["run"][0].targets]


@pytest.mark.parametrize(
    "command",
    [["fuzz", "--budget", "1s"], ["soak", "--duration", "5s", "--clients", "2", "--no-spark"],
     ["volumes", "--no-spark"], ["run", "--cases", "kip511.apiversions.schema"]],
    ids=lambda c: c[0],
)  # fmt: skip
def test_a_bootstrap_server_alone_means_the_external_target(
    command: list[str], started: dict[str, Any], tmp_path: Path
) -> None:
    """fuzz, soak and volumes ran on the embedded reference, the address unused."""
    code, err = _run([*command, "--bootstrap-server", "broker1:9092", "--out", "out"])
    assert code == "started", err
    assert _aimed_at(command[0], started) == ["external"]
    assert started["probed"] == ["broker1:9092"]  # asked once whether it is Kafka


@pytest.mark.parametrize("command", ["run", "fuzz", "soak", "volumes"])
def test_a_bootstrap_server_with_targets_that_take_none_is_refused(
    command: str, started: dict[str, Any]
) -> None:
    code, err = _run([command, "--target", "reference", "--bootstrap-server", "x:1"])
    assert code == EXIT_USAGE and err.count("\n") == 1, err
    assert "--bootstrap-server names an existing cluster" in err and "--target reference" in err
    assert not started["probed"]


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["--cases="], "argument --cases: '' is empty"),
        (["--client=a,,b"], "argument --client: 'a,,b' has an empty entry"),
        (["--level=info"], "invalid choice: 'info'"),
        (["--target=reference", "--bootstrap-server=x:1"], "only the external target takes"),
    ],
)
def test_plain_pytest_refuses_what_the_command_refuses(
    argv: list[str], text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plugin reads the same table, so its checks are the command's."""
    import os

    from kconform.runner import SUITES_DIR

    args = [str(SUITES_DIR / "broker"), "-c", os.devnull, "--rootdir", str(tmp_path),
            "-p", "no:cacheprovider", "--collect-only", "-q", *argv]  # fmt: skip
    assert pytest.main(args) == pytest.ExitCode.USAGE_ERROR
    assert text in capsys.readouterr().err
