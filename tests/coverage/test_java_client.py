"""--coverage on the Java client: the chosen kafka-clients classes, the per-run agent, per-case
attribution on recorded data, and which subjects --coverage accepts.

`data/java-4.4.0-*.exec` are two real dumps of `kconform certify --client java@4.4.0
--coverage`: `instance_id` (a client that subscribes and pushes) and `opt_out`
(`enable.metrics.push=false`); the `.xml.gz` files are `jacococli report` over each and over
both (the run), with the chosen classes of kafka-clients-4.4.0.jar.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.exit_codes import EXIT_USAGE
from kconform.fixtures.clients.kind import ClientSpec
from kconform.fixtures.coverage import wire
from kconform.fixtures.coverage.client_agent import ClientRunsAgent
from kconform.fixtures.coverage.client_selection import CLIENT_CLASSES, INTERNALS
from kconform.fixtures.coverage.jacoco import JacocoTools
from kconform.fixtures.coverage.selection import chosen_for, includes, lambda_owner
from kconform.fixtures.coverage.subjects import coverage_problem
from kconform.reports.coverage import Report, attribute, build_model, parse_xml

DATA = Path(__file__).with_name("data")
TOOLS = JacocoTools(Path("/c/agent.jar"), Path("/c/cli.jar"), "0.8.13")
SENDER = f"{INTERNALS}/ClientTelemetryReporter$DefaultClientTelemetrySender"
BUILDER = "org/apache/kafka/common/requests/ApiVersionsRequest$Builder"
NETWORK = "org/apache/kafka/clients/NetworkClient"


def _xml(name: str) -> Report:
    return parse_xml(gzip.decompress((DATA / f"java-4.4.0-{name}.xml.gz").read_bytes()))


def _exec(name: str) -> wire.Blocks:
    return wire.split_blocks((DATA / f"java-4.4.0-{name}.exec").read_bytes())


def test_the_agent_instrumented_only_the_chosen_classes() -> None:
    for name in ("instance_id", "opt_out"):
        blocks = _exec(name)
        assert blocks.classes and all(chosen_for(c.name, CLIENT_CLASSES) for c in blocks.classes)
    assert "org.apache.kafka.clients.NetworkClient$*" not in includes(CLIENT_CLASSES).split(":")


def test_an_opted_out_client_runs_no_telemetry_code() -> None:
    hit = {c.name for c in _exec("opt_out").classes if c.hit}
    assert hit == {NETWORK, BUILDER}  # ApiVersions (KIP-511) on each connection, nothing else
    assert SENDER in {c.name for c in _exec("instance_id").classes if c.hit}


def _model() -> dict[str, object]:
    cases = [("kip714.client.handshake.instance_id", _xml("instance_id")),
             ("kip714.client.handshake.opt_out", _xml("opt_out"))]  # fmt: skip
    return build_model(_xml("run"), attribute(cases), sources={}, chosen=CLIENT_CLASSES)


def _cases_of(model: dict[str, object], cls_name: str, method: str) -> set[str]:
    classes = model["classes"]
    assert isinstance(classes, list)
    cls = next(c for c in classes if c["name"] == cls_name)
    m = next(m for m in cls["methods"] if m["name"] == method)
    files = model["files"]
    assert isinstance(files, dict)
    lines = files[cls["sourcefile"]]["lines"]
    return {case for first, last in m["lines"] for nr in range(first, last + 1)
            for case, _ in lines.get(str(nr), {}).get("cases", [])}  # fmt: skip


def test_each_line_is_attributed_to_the_runs_that_reached_it() -> None:
    model = _model()
    assert _cases_of(model, SENDER, "createPushRequest") == {"kip714.client.handshake.instance_id"}
    both = {"kip714.client.handshake.instance_id", "kip714.client.handshake.opt_out"}
    assert _cases_of(model, BUILDER, "<clinit>") == both  # DEFAULT_DATA: name and version


def test_the_model_keeps_the_chosen_methods_only() -> None:
    model = _model()
    classes = model["classes"]
    assert isinstance(classes, list)
    by_name = {c["name"]: c for c in classes}
    assert [m["name"] for m in by_name[NETWORK]["methods"]] == [
        "handleApiVersionsResponse", "handleInitiateApiVersionRequests", "isTelemetryApi"
    ]  # fmt: skip
    # the inner TelemetrySender is its own entry, not swallowed by NetworkClient's
    assert f"{NETWORK}$TelemetrySender" in by_name
    assert by_name[SENDER]["counters"]["BRANCH"][1] > 0
    utils = by_name["org/apache/kafka/common/telemetry/internals/ClientTelemetryUtils"]
    assert "static" not in {m["name"] for m in utils["methods"]}  # lambda$static$0: <clinit>


def test_static_and_constructor_lambdas_belong_to_the_initializers() -> None:
    assert lambda_owner("lambda$static$0") == "<clinit>"
    assert lambda_owner("lambda$new$3") == "<init>"
    assert lambda_owner("lambda$createPushRequest$1") == "createPushRequest"


def test_each_jvm_writes_a_file_of_its_own_and_a_dump_gathers_them(tmp_path: Path) -> None:
    agent = ClientRunsAgent(TOOLS, "java-4.4.0", tmp_path / "pending")
    first, second = agent.run_option(), agent.run_option()
    assert "output=file," in first and "dumponexit=true" in first and "port=" not in first
    assert f"destfile={tmp_path / 'pending' / 'run-00000.exec'}," in first
    assert "sessionid=java-4.4.0-run-1" in second
    (tmp_path / "pending" / "run-00000.exec").write_bytes(b"AB")
    (tmp_path / "pending" / "run-00001.exec").write_bytes(b"")  # SIGKILLed: nothing written
    written = agent.write_dump(tmp_path / "exec", "00003")
    assert written == [tmp_path / "exec" / "client" / "00003.exec"]
    assert written[0].read_bytes() == b"AB" and agent.lost == [
        "java-4.4.0 JVM 1: no counters (killed before its exit)"
    ]
    assert agent.write_dump(tmp_path / "exec", "00004") == []  # no JVM since: no file
    assert agent.units == "2 client JVM(s)"


def test_coverage_accepts_jvm_subjects_only() -> None:
    java = ClientSpec("java", "4.4.0")
    assert coverage_problem([("reference", "reference")], [java]) == ""
    assert coverage_problem([("apache:4.4.0", "apache:4.4.0")], []) == ""
    assert "reference" in coverage_problem([("reference", "reference")], [])
    problem = coverage_problem([("reference", "reference")], [java, ClientSpec("kafka-python")])
    assert "kafka-python is not one" in problem


def test_certify_coverage_on_a_client_that_is_no_jvm_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["certify", "--client", "kafka-python", "--coverage"]) == EXIT_USAGE
    assert "kafka-python is not one" in capsys.readouterr().err
    assert main(["run", "--target", "reference", "--client", "java@4.4.0", "--coverage",
                 "-j", "2"]) == EXIT_USAGE  # fmt: skip
