"""Hypothesis over the `kconform` command line (issue 33): every subcommand, its flags (read from
the parser itself, so a new flag is fuzzed without touching this file) and awkward values. The
command must answer with exit code 0, 1 or 2 and never a traceback.

Nothing real starts: what would run suites, start a target, a soak, a volume run or a build is
replaced by a stand-in that raises `WouldRun` (the flags passed validation, which is what is
fuzzed here); the test runs in a scratch folder, and stops drawing after `BUDGET_S` seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import time
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kconform.cli import build_parser, main

BUDGET_S = 60.0

VALUES = [
    "", " ", "-1", "0", "1", "3", "99999999999", "1.5", "nan", "-", ",", ",,", ":", "nope",
    "reference", "librdkafka_mock", "apache:0.0.1", "kraft:zzz", "external", "command:/no/such",
    "confluent-kafka", "kafka-python,nope", "kip714.*", "kip714.get.*", "kip714.pushh.*", "*",
    "kip511", "no.such.case", "must", "all", "json", "x=y", "a:b:c", "localhost:0", "host:99999",
    "http://127.0.0.1:1", "/no/such/file.json", "/dev/null", "results.json", "out", "..", "./",
    "00ff", "zz", "0000000a0012", "1/2", "3/2", "0/0", "\x00", "é", "--", "-x", "a" * 300,
]  # fmt: skip


class WouldRun(Exception):
    """The flags passed validation; the real work is not started here."""


def _would_run(*args: object, **kwargs: object) -> NoReturn:
    raise WouldRun


STAND_INS = [
    ("kconform.runner", "run"),
    ("pytest", "main"),
    ("kconform.fixtures.targets.registry", "create_target"),
    ("kconform.fixtures.targets.registry", "create_soak_target"),
    ("kconform.cli.soak", "soak"),
    ("kconform.cli.volumes", "_produce_and_collect"),
    ("kconform.fixtures.targets.kafka_dist", "build_plugin"),
    ("kconform.pipelines.soak_outputs", "rerender"),
    ("kconform.matrix.schedule", "start"),
    ("kconform.cli.matrix", "render_pages"),
]


def _commands() -> dict[str, list[tuple[str, bool]]]:
    """{subcommand words: [(flag, takes a value)]}, `plugin build` included."""
    found: dict[str, list[tuple[str, bool]]] = {}

    def walk(parser: argparse.ArgumentParser, words: str) -> None:
        flags = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{words} {name}".strip())
            elif action.option_strings:
                flags.append((action.option_strings[-1], action.nargs != 0))
            else:
                flags.append(("", True))  # a positional argument
        if words:
            found[words] = flags

    walk(build_parser(), "")
    return found


COMMANDS = _commands()


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    words = draw(st.sampled_from(sorted(COMMANDS)))
    argv = words.split()
    flags = COMMANDS[words]
    if draw(st.integers(0, 19)) == 0:
        return [*argv, "--help"]
    for flag, takes_value in draw(st.lists(st.sampled_from(flags), max_size=5)):
        value = draw(st.sampled_from(VALUES) | st.text(max_size=12))
        if not flag:
            argv.append(value)
        elif takes_value:
            argv += [flag, value]
        else:
            argv.append(flag)
    return argv


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import importlib

    for module, name in STAND_INS:
        monkeypatch.setattr(importlib.import_module(module), name, _would_run)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))  # `decode` reads stdin
    monkeypatch.setenv("KCONFORM_KAFKA_MAVEN", "0")
    monkeypatch.setenv("KCONFORM_KAFKA_DOWNLOAD", "0")
    return tmp_path


def _exit_of(argv: list[str]) -> Any:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return main(argv)
        except SystemExit as exc:  # argparse: --help (0) or a bad flag (2)
            return exc.code
        except WouldRun:
            return 0


def test_the_command_line_never_answers_with_a_traceback(scratch: Path) -> None:
    deadline = time.monotonic() + BUDGET_S
    tried: list[list[str]] = []

    @settings(max_examples=400, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(command_lines())
    def answer(argv: list[str]) -> None:
        if time.monotonic() > deadline:
            return
        tried.append(argv)
        code = _exit_of(argv)
        assert code in (0, 1, 2), f"kconform {' '.join(argv)!r} exited {code!r}"

    answer()
    assert len({tuple(a[:2]) for a in tried}) >= len(COMMANDS), "every subcommand was tried"
    assert os.getcwd() == str(scratch)
