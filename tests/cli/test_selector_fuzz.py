"""Hypothesis over the selectors and environment of the subcommands that start runs (issue 41,
Deliver 6): an empty or malformed selector (`--cases`, `-k`, `--target`, `--client`) never starts
a run, and no environment value makes any subcommand answer with a traceback or an exit code
other than 0, 1 or 2.

Nothing real starts: `kconform.runner.run` and pytest are replaced by a stand-in that records
what would have run (`Started`). The other flags are fuzzed by tests/test_cli_fuzz.py. Bounded:
at most `EXAMPLES` command lines per test and `BUDGET_S` seconds each (about 25 s in all).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import time
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kconform.cli import main

EXAMPLES = 60
BUDGET_S = 2.0

# Selectors that name nothing: empty parts, separators, whitespace, ids no case or rule has.
NOTHING = st.sampled_from(["", " ", ",", ",,,", " , ", "\t", ";", "*.nothing", "kip999.*", "zz",
                           "no.such.case", "kip714.pushh.*", "..", "[", "]", "?"])  # fmt: skip
SEPARATORS = st.sampled_from([",", " ,", ", ", ",,"])


# A -k expression is pytest's: one that selects nothing ends "nothing judged" (exit 2) once
# pytest ran; what must never start is an empty or unparsable one.
NO_EXPRESSION = st.sampled_from(["", " ", ",", ",,,", "\t", "not", "and", "not and", "(", ")",
                                 "a or", "or or", "((a)"])  # fmt: skip


@st.composite
def empty_selectors(draw: st.DrawFn) -> str:
    """A comma list whose every part names nothing (or nothing at all)."""
    parts = draw(st.lists(NOTHING | st.text(st.sampled_from(" ,\t"), max_size=4), max_size=4))
    return draw(SEPARATORS).join(parts)


@st.composite
def empty_expressions(draw: st.DrawFn) -> str:
    return draw(NO_EXPRESSION) + draw(st.text(st.sampled_from(" \t"), max_size=2))


class Started(Exception):
    """The command got past validation and would have started a run."""


def _started(*args: object, **kwargs: object) -> NoReturn:
    raise Started


@pytest.fixture
def stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for module, name in [("kconform.runner", "run"), ("pytest", "main"),
                         ("kconform.cli.soak", "soak"),
                         ("kconform.cli.volumes", "_produce_and_collect"),
                         ("kconform.fixtures.targets.registry", "create_target")]:  # fmt: skip
        monkeypatch.setattr(importlib.import_module(module), name, _started)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KCONFORM_KAFKA_MAVEN", "0")
    monkeypatch.setenv("KCONFORM_KAFKA_DOWNLOAD", "0")
    return tmp_path


def outcome(argv: list[str]) -> tuple[Any, str]:
    """(exit code, or "started"; standard error)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return main(argv), err.getvalue()
        except SystemExit as exc:  # argparse's own usage errors
            return exc.code, err.getvalue()
        except Started:
            return "started", err.getvalue()


SELECTING = [
    (["run", "--target", "reference"], "--cases"),
    (["run", "--target", "reference"], "-k"),
    (["run"], "--target"),
    (["run", "--target", "reference"], "--client"),
    (["certify"], "--client"),
    (["certify", "--client", "kafka-python"], "--cases"),
    (["fuzz", "--budget", "1s"], "--cases"),
    (["fuzz", "--budget", "1s"], "--target"),
]


@pytest.mark.parametrize(("command", "flag"), SELECTING, ids=lambda v: str(v))
def test_a_selector_that_names_nothing_starts_nothing(
    stand_ins: Path, command: list[str], flag: str
) -> None:
    deadline = time.monotonic() + BUDGET_S

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False)  # fmt: skip
    @given(empty_expressions() if flag == "-k" else empty_selectors())
    @example("")  # first, whatever the machine's load leaves of the budget
    @example(",,,")
    def refused(selector: str) -> None:
        if selector not in ("", ",,,") and time.monotonic() > deadline:
            return
        argv = [*command, f"{flag}={selector}", "--out", str(stand_ins / "out")]
        code, err = outcome(argv)
        assert code == 2, f"kconform {argv!r}: {code!r} (a run over what?)\n{err}"
        assert "Traceback" not in err and err.count("\n") <= 2, err

    refused()


ENVIRONMENT = ["KCONFORM_CACHE", "KCONFORM_KAFKA_MAVEN", "KCONFORM_KAFKA_DISTS",
               "KCONFORM_LOCKFILES", "KCONFORM_JAVA_CLASSPATH", "XDG_CACHE_HOME"]  # fmt: skip
ENV_VALUES = st.sampled_from(["", " ", "0", "1", "false", "/", "/dev/null", "/dev/null/x",
                              "/no/such", ":", "::", "relative", "/proc/1", "é",
                              "a" * 300])  # fmt: skip
CHEAP = [["list"], ["list", "--kip", "714"], ["decode", "0000000a00120000000000010000"],
         ["run", "--target", "reference", "--cases", "kip511.apiversions.valid_software_accepted"],
         ["certify", "--client", "kafka-python", "--cases", "kip511.*"]]  # fmt: skip


def test_no_environment_value_makes_a_traceback(stand_ins: Path, monkeypatch: Any) -> None:
    deadline = time.monotonic() + BUDGET_S

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False)  # fmt: skip
    @given(st.sampled_from(CHEAP), st.dictionaries(st.sampled_from(ENVIRONMENT), ENV_VALUES,
                                                  max_size=3))  # fmt: skip
    def answered(argv: list[str], environment: dict[str, str]) -> None:
        if time.monotonic() > deadline:
            return
        with monkeypatch.context() as patch:
            for name, value in environment.items():
                patch.setenv(name, value)
            code, err = outcome([*argv, *(["--out", "out"] if argv[0] != "list" and
                                         argv[0] != "decode" else [])])  # fmt: skip
        assert code in (0, 1, 2, "started"), f"{environment} kconform {argv!r}: {code!r}\n{err}"
        assert "Traceback" not in err, f"{environment} kconform {argv!r}\n{err}"

    answered()
