"""A kind is one file: a toy target kind and a toy client kind, each declared in one module of
tests/support and registered only through `KCONFORM_KINDS`, are found by the help texts, the
listings, availability, the parsers, worker scheduling and a real run (in workers too)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.fixtures.clients.registry import client_kinds, create_driver, parse_clients
from kconform.fixtures.kinds import KINDS_ENV
from kconform.fixtures.targets.registry import (
    UnknownTarget,
    create_target,
    parse_targets,
    target_kinds,
)
from kconform.plugin.workers import default_jobs, default_run_jobs

SUPPORT = Path(__file__).parent / "support"
REPO = Path(__file__).parent.parent
TOY_MODULES = "toy_target_kind,toy_client_kind"


@pytest.fixture
def toys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KINDS_ENV, TOY_MODULES)


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main([*argv, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines


def test_the_shipped_kinds_in_their_order() -> None:
    kinds = target_kinds()
    first = ["reference", "librdkafka_mock", "external", "apache", "kraft"]
    assert [k.name for k in kinds if k.name in first] == first  # fmt: skip
    assert [k.order for k in kinds] == sorted(k.order for k in kinds)  # the rest by `order`
    assert [k.name for k in client_kinds()] == [
        "confluent-kafka",
        "kafka-python",
        "aiokafka",
        "java",
        "kafka-go",
        "franz-go",
        "sarama",
        "confluent-kafka-go",
        "rdkafka",
        "confluent-kafka-javascript",
        "kafkajs",
        "platformatic-kafka",
        "command",
    ]


@pytest.mark.usefixtures("toys")
def test_the_help_texts_list_the_toy_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "fuzz", "soak", "volumes", "serve"):
        assert "toy_broker" in _help(capsys, command), command
    for command in ("run", "certify"):
        assert "toy-client" in _help(capsys, command), command
    run_help = _help(capsys, "run")
    assert re.search(r"on reference and librdkafka_mock and (\S+ and )*toy_broker with", run_help)
    one_node = re.search(r"1 for ([^)]*)\)", run_help)  # --brokers' default: 1 for these
    assert one_node is not None
    assert {"apache", "kraft", "toy_broker"} <= set(one_node.group(1).split(", "))


def test_without_the_variable_the_toys_are_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert "toy_broker" not in _help(capsys, "run")
    with pytest.raises(UnknownTarget, match="unknown target 'toy_broker'"):
        parse_targets("toy_broker")


@pytest.mark.usefixtures("toys")
def test_the_listings_and_availability_name_the_toys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["targets"]) == 0
    targets = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert " available " in targets["toy_broker"] and "toy name" in targets["toy_broker"]
    assert main(["clients"]) == 0
    clients = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert " available " in clients["toy-client"] and "kafka-python" in clients["toy-client"]
    assert "toy-client" in [s.label for s in parse_clients("")]  # an empty --client takes it


@pytest.mark.usefixtures("toys")
def test_the_toys_parse_create_and_schedule_like_their_declarations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (spec,) = parse_targets("toy_broker")
    assert spec.brokers == 1  # its default_brokers
    with pytest.raises(UnknownTarget, match="takes no ':variant'"):
        parse_targets("toy_broker:x")
    with pytest.raises(UnknownTarget, match=r"known: .*kraft, .*toy_broker"):
        parse_targets("nope")
    assert create_target(spec).name == "toy_broker"
    driver = create_driver(parse_clients("toy-client")[0])
    assert driver.unavailable_reason() is None and driver.name == "toy-client"
    with pytest.raises(ValueError, match="command:<path>, toy-client"):
        parse_clients("nope")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert default_jobs("toy-client") == 8  # light
    assert default_run_jobs("reference,toy_broker", "toy-client", whole=True) == 8  # embedded


def test_no_file_outside_the_toy_modules_names_them() -> None:
    """The toys needed no change anywhere else: no shipped file mentions them."""
    shipped = ("kconform", "fixtures", "codecs", "rules", "suites", "reports", "pipelines")
    mentions = [
        path
        for folder in shipped
        for path in (REPO / folder).rglob("*")
        if path.is_file()
        and path.suffix in (".py", ".md", ".json", ".toml", ".txt")
        and ("toy_broker" in path.read_text("utf-8") or "toy-client" in path.read_text("utf-8"))
    ]
    assert mentions == []
    for other in ("Makefile", "README.md", "pyproject.toml"):
        text = (REPO / other).read_text("utf-8")
        assert "toy_broker" not in text and "toy-client" not in text


@pytest.mark.slow
def test_a_run_in_workers_judges_the_toys(tmp_path: Path) -> None:
    """`kconform run -j 2` starts pytest workers: the variable reaches them, and the results
    name the toy subjects."""
    env = {
        **os.environ,
        KINDS_ENV: TOY_MODULES,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")])),
    }
    cases = "kip511.apiversions.valid_software_accepted,kip511.client.software_identity"
    done = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "run", "--target", "toy_broker",
         "--client", "toy-client", "--cases", cases, "-j", "2", "--out", str(tmp_path)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    verdicts = {(r["subject"], r["case_id"]): r["verdict"] for r in results["results"]}
    assert verdicts[("toy_broker", "kip511.apiversions.valid_software_accepted")] == "pass"
    assert verdicts[("toy-client", "kip511.client.software_identity")] == "pass"
    assert {subject for subject, _ in verdicts} == {"toy_broker", "toy-client"}


@pytest.mark.parametrize(
    ("name", "target_class", "reading"),
    [("reference", "RestartableReferenceTarget", "in_process"),
     ("librdkafka_mock", "LibrdkafkaMockTarget", None)],
)  # fmt: skip
def test_the_soak_reads_what_the_kind_declares(
    name: str, target_class: str, reading: str | None
) -> None:
    """Not guessed from the target's attributes: the reference is soaked as a restartable one,
    read in-process; a target without a sink plugin shows nothing."""
    from kconform.fixtures.targets.registry import create_soak_target
    from kconform.soak.broker_stats import BrokerStats

    (spec,) = parse_targets(name, brokers=1)
    target, kind = create_soak_target(spec)
    assert type(target).__name__ == target_class
    assert BrokerStats(target, kind.soak_stats).source == reading


def test_a_kind_module_that_cannot_be_imported_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(KINDS_ENV, "no_such_kind_module")
    with pytest.raises(ImportError, match="KCONFORM_KINDS: cannot import kind module"):
        target_kinds()
    assert main(["targets"]) == 2  # one line, no traceback
    assert capsys.readouterr().err.strip().count("\n") == 0
