"""The kraft target's pure parts: versions, per-node configs, image tags, Dockerfile, sink JSON."""

from __future__ import annotations

import base64
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from kconform.errors import HarnessDefect, UsageError
from kconform.fixtures.targets import kraft_config as cfg
from kconform.fixtures.targets.base import PartitionMetric
from kconform.fixtures.targets.kraft_config import HEAP, HEAP_ENV, heap_option

PLUGIN = cfg.plugin_dir()


def image_property(env_name: str) -> str:
    """The apache/kafka image's own rule (core/.../docker/KafkaDockerWrapper.scala,
    getServerConfigsFromEnv): strip KAFKA_, lower-case, `_`->`.`, `...`->`-`, `..`->`_`."""
    key = env_name.replace("KAFKA_", "", 1).lower().replace("_", ".")
    return key.replace("...", "-").replace("..", "_")


# --- versions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parsed"), [("3.7.0", (3, 7, 0)), ("3.9.1", (3, 9, 1)), (" 4.1.0 ", (4, 1, 0))]
)
def test_kafka_versions_parse(text: str, parsed: tuple[int, int, int]) -> None:
    assert cfg.parse_kafka_version(text) == parsed


@pytest.mark.parametrize(
    ("text", "why"),
    [("3.9", "MAJOR.MINOR.PATCH"), ("latest", "MAJOR.MINOR.PATCH"), ("4.1.0-rc1", "MAJOR"),
     ("3.6.2", "predates KIP-714"), ("2.8.0", "3.7.0")],
)  # fmt: skip
def test_bad_kafka_versions_say_why(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        cfg.parse_kafka_version(text)


def test_kraft_variant_defaults_to_the_reference_release() -> None:
    assert cfg.kraft_version("") == cfg.DEFAULT_KAFKA_VERSION == "4.1.0"
    assert cfg.kraft_version("3.9.1") == "3.9.1"
    with pytest.raises(ValueError):
        cfg.kraft_version("nine")


@pytest.mark.parametrize(
    ("version", "cls"),
    [("3.7.0", cfg.REPORTER_CLASS), ("3.9.1", cfg.REPORTER_CLASS), ("4.1.0", cfg.REPORTER_CLASS),
     ("4.2.0", cfg.EXPORTER_REPORTER_CLASS), ("4.3.1", cfg.EXPORTER_REPORTER_CLASS)],
)  # fmt: skip
def test_the_exporter_reporter_is_named_from_4_2_on(version: str, cls: str) -> None:
    assert cfg.reporter_class(version) == cls


def test_reporter_classes_exist_in_the_plugin_sources() -> None:
    for cls, root in ((cfg.REPORTER_CLASS, "main"), (cfg.EXPORTER_REPORTER_CLASS, "exporter")):
        path = PLUGIN / "src" / root / "java" / (cls.replace(".", "/") + ".java")
        text = path.read_text()
        package, _, simple = cls.rpartition(".")
        assert f"package {package};" in text
        assert re.search(rf"public class {simple}\b", text)


# --- cluster id and environment ---------------------------------------------------------------


def test_cluster_ids_are_kafka_uuid_strings() -> None:
    ids = {cfg.new_cluster_id() for _ in range(200)}
    assert len(ids) == 200
    for cid in ids:
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}", cid), cid
        assert len(base64.urlsafe_b64decode(cid + "==")) == 16
        assert cfg.is_cluster_id(cid)
    assert cfg.is_cluster_id("4L6g3nShT-eMCtK--X86sw")  # apache/kafka's compose examples
    for bad in ("", "-L6g3nShT-eMCtK--X86sw", "4L6g3nShT-eMCtK--X86s", "4L6g3nShT+eMCtK--X86sw"):
        assert not cfg.is_cluster_id(bad)


@pytest.mark.parametrize(
    ("prop", "env"),
    [("node.id", "KAFKA_NODE_ID"), ("abc-def", "KAFKA_ABC___DEF"), ("abc_def", "KAFKA_ABC__DEF"),
     ("listener.security.protocol.map", "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP")],
)  # fmt: skip
def test_env_keys_follow_the_image_rules(prop: str, env: str) -> None:
    assert cfg.env_key(prop) == env
    assert image_property(env) == prop


def test_nodes_come_from_two_ports_each() -> None:
    nodes = cfg.plan_nodes([4001, 4002, 4003, 4004, 4005, 4006])
    assert [(n.node_id, n.alias, n.external_port, n.sink_port) for n in nodes] == [
        (1, "kafka-1", 4001, 4002), (2, "kafka-2", 4003, 4004), (3, "kafka-3", 4005, 4006),
    ]  # fmt: skip
    assert cfg.quorum_voters(nodes) == "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093"
    for bad in ([], [1, 2, 3]):
        with pytest.raises(HarnessDefect, match="two host ports"):
            cfg.plan_nodes(bad)


def test_single_node_properties() -> None:
    (node,) = cfg.plan_nodes([40001, 40002])
    props = cfg.node_properties(node, [node], version="3.9.1")
    assert props["node.id"] == "1"
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.voters"] == "1@kafka-1:9093"
    assert props["listeners"] == "BROKER://:19092,CONTROLLER://:9093,EXTERNAL://:9092"
    assert props["advertised.listeners"] == "BROKER://kafka-1:19092,EXTERNAL://127.0.0.1:40001"
    assert props["listener.security.protocol.map"] == (
        "BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT"
    )
    assert props["controller.listener.names"] == "CONTROLLER"
    assert props["inter.broker.listener.name"] == "BROKER"
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["transaction.state.log.replication.factor"] == "1"
    assert props["metric.reporters"] == cfg.REPORTER_CLASS
    assert props["kconform.sink.throw.enabled"] == "true"  # RECEIVER_FAILURE is claimed
    assert "CONTROLLER" not in props["advertised.listeners"]  # controllers are not advertised


def test_three_node_properties() -> None:
    nodes = cfg.plan_nodes([5001, 5002, 5003, 5004, 5005, 5006])
    all_props = [cfg.node_properties(n, nodes, version="4.2.0") for n in nodes]
    assert {p["controller.quorum.voters"] for p in all_props} == {
        "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093"
    }
    assert [p["advertised.listeners"] for p in all_props] == [
        "BROKER://kafka-1:19092,EXTERNAL://127.0.0.1:5001",
        "BROKER://kafka-2:19092,EXTERNAL://127.0.0.1:5003",
        "BROKER://kafka-3:19092,EXTERNAL://127.0.0.1:5005",
    ]
    assert [p["node.id"] for p in all_props] == ["1", "2", "3"]
    assert {p["offsets.topic.replication.factor"] for p in all_props} == {"3"}
    assert {p["metric.reporters"] for p in all_props} == {cfg.EXPORTER_REPORTER_CLASS}


def test_node_env_round_trips_through_the_image() -> None:
    nodes = cfg.plan_nodes([5001, 5002, 5003, 5004])
    cid = cfg.new_cluster_id()
    env = cfg.node_env(nodes[1], nodes, version="3.7.0", cluster_id=cid, extra={"a.b-c_d": "x"})
    assert env["CLUSTER_ID"] == cid
    assert env["KCONFORM_SINK_PORT"] == str(cfg.SINK_PORT)
    assert env["KAFKA_HEAP_OPTS"].startswith("-Xmx")  # excluded from properties by the image
    assert env["KAFKA_JMX_OPTS"] == cfg.JMX_OFF  # no JMX agent, in either network mode
    excluded = {"KAFKA_HEAP_OPTS", "KAFKA_JMX_OPTS"}
    as_props = {image_property(k): v for k, v in env.items() if k.startswith("KAFKA_")}
    as_props = {k: v for k, v in as_props.items() if cfg.env_key(k) not in excluded}
    expected = cfg.node_properties(nodes[1], nodes, version="3.7.0", extra={"a.b-c_d": "x"})
    assert as_props == expected
    with pytest.raises(HarnessDefect, match="CLUSTER_ID"):
        cfg.node_env(nodes[0], nodes, version="3.7.0", cluster_id="not-a-uuid")


# --- image --------------------------------------------------------------------------------------


def test_plugin_files_are_the_dockerfile_and_every_java_source() -> None:
    names = [p.relative_to(PLUGIN).as_posix() for p in cfg.plugin_files(PLUGIN)]
    assert names[0] == "Dockerfile"
    assert "src/main/java/dev/kconform/sink/KconformSinkReporter.java" in names
    assert "src/exporter/java/dev/kconform/sink/KconformSinkExporterReporter.java" in names
    assert names[1:] == sorted(names[1:])


def test_image_tag_follows_sources_and_version(tmp_path: Path) -> None:
    tag = cfg.image_tag("3.9.1", PLUGIN)
    assert re.fullmatch(r"kconform-kraft:3\.9\.1-[0-9a-f]{12}", tag)
    assert cfg.image_tag("3.9.1", PLUGIN) == tag
    assert cfg.image_tag("4.1.0", PLUGIN).split("-")[-1] != tag.split("-")[-1]
    assert cfg.image_tag("3.9.1", PLUGIN, base_image="mirror/kafka") != tag
    copy = tmp_path / "plugin"
    shutil.copytree(PLUGIN, copy)
    assert cfg.image_tag("3.9.1", copy) == tag  # content, not location
    java = copy / "src/main/java/dev/kconform/sink/Json.java"
    java.write_text(java.read_text() + "\n// changed\n")
    assert cfg.image_tag("3.9.1", copy) != tag
    shutil.rmtree(copy / "src")
    with pytest.raises(FileNotFoundError, match="plugin sources missing"):
        cfg.image_tag("3.9.1", copy)


def test_build_args_select_the_kafka_version() -> None:
    args = cfg.build_args("3.9.1")
    assert (args["KAFKA_VERSION"], args["KAFKA_IMAGE"]) == ("3.9.1", "apache/kafka")


def test_dockerfile_stages_and_args() -> None:
    text = (PLUGIN / "Dockerfile").read_text()
    froms = re.findall(r"^FROM (.+)$", text, re.M)
    assert froms == [
        "${KAFKA_IMAGE}:${KAFKA_VERSION} AS kafka",
        "${JDK_IMAGE} AS build",
        "${KAFKA_IMAGE}:${KAFKA_VERSION}",
    ]
    assert f"ARG KAFKA_VERSION={cfg.DEFAULT_KAFKA_VERSION}" in text
    assert "ARG KAFKA_IMAGE=apache/kafka" in text
    assert re.search(r"^ARG JDK_IMAGE=eclipse-temurin:\d+-jdk", text, re.M)
    assert "COPY --from=kafka /opt/kafka/libs /kafka-libs" in text
    assert "-cp '/kafka-libs/*'" in text  # compiled against exactly the broker's jars
    assert "org/apache/kafka/server/telemetry/ClientTelemetryExporterProvider.class" in text
    assert "/src/exporter/java" in text
    assert "COPY --from=build /out/kconform-sink.jar /opt/kafka/libs/" in text
    assert f"ENV KCONFORM_SINK_PORT={cfg.SINK_PORT}" in text
    assert re.search(rf"^EXPOSE .*\b{cfg.SINK_PORT}\b", text, re.M)
    server = (PLUGIN / "src/main/java/dev/kconform/sink/SinkServer.java").read_text()
    assert f"DEFAULT_PORT = {cfg.SINK_PORT};" in server


# --- the sink's JSON ---------------------------------------------------------------------------


def test_mbean_names_parse() -> None:
    assert cfg.parse_mbean("kafka.log:type=Log,name=Size,topic=a.b,partition=3") == (
        "kafka.log", {"type": "Log", "name": "Size", "topic": "a.b", "partition": "3"},
    )  # fmt: skip
    assert cfg.parse_mbean('d:k="quoted"') == ("d", {"k": "quoted"})
    for bad in ("no-domain", "d:novalue"):
        with pytest.raises(ValueError):
            cfg.parse_mbean(bad)


def test_sink_records_parse(telemetry_doc: dict[str, Any]) -> None:
    first, second, third = cfg.parse_sink_records(telemetry_doc, broker_id=2)
    assert first.broker_id == 2
    assert first.client_instance_id == "AAAAAAAAAAEAAAAAAAAAAg"
    assert first.payload == b"\x0a\x02\x08\x01"
    assert first.compression_type == 0
    assert first.subscription_id == -1  # the plugin API does not carry it
    assert (first.client_id, first.software_name, first.software_version) == (
        "producer-1", "apache-kafka-java", "3.9.1",
    )  # fmt: skip
    assert (first.source_address, first.source_port) == ("172.18.0.1", 51234)
    assert first.received_at == 1700000000.25
    assert second.terminating and second.compression_type == 1
    assert second.payload == b"" and second.source_port is None and second.client_id is None
    assert third.compression_type == -1  # raw snappy or garbage: not recognisable
    assert cfg.parse_sink_records({"records": []}, 1) == []


def test_partition_metrics_parse(partition_doc: dict[str, Any]) -> None:
    got = {(m.source, m.topic, m.partition, m.metric): m.value
           for m in cfg.parse_partition_metrics(partition_doc)}  # fmt: skip
    assert got == {
        ("log_size", "t.a", 0, "Size"): 1234.0,
        ("log_end_offset", "t.a", 1, "LogEndOffset"): 7.0,
        ("log", "t.a", 1, "LogStartOffset"): 0.0,
        ("broker_topic", "t.a", -1, "MessagesInPerSec"): 42.0,
        ("kip977", "t.a", 1, "BytesInPerSec"): 99.0,
    }
    assert {m.timestamp for m in cfg.parse_partition_metrics(partition_doc)} == {1700000000.0}


def test_merging_brokers_keeps_the_leaders_log_and_sums_meters() -> None:
    def pm(source: str, value: float, ts: float = 1.0) -> PartitionMetric:
        partition = -1 if source == "broker_topic" else 0
        return PartitionMetric(source, "t", partition, "M", value, ts)

    merged = cfg.merge_partition_metrics([
        [pm("log_end_offset", 10), pm("broker_topic", 5, 1.0)],
        [pm("log_end_offset", 12), pm("broker_topic", 7, 2.0)],
        [pm("log_end_offset", 11)],
    ])  # fmt: skip
    got = {m.source: (m.value, m.timestamp) for m in merged}
    assert got == {"log_end_offset": (12.0, 1.0), "broker_topic": (12.0, 2.0)}


@pytest.mark.parametrize("value", ["-Xmx2g", "-Xmx1536m", " -Xmx4G "])
def test_the_nodes_heap_can_be_given(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(HEAP_ENV, value)
    assert heap_option() == value.strip()


@pytest.mark.parametrize("value", ["2g", "-Xmx", "-Xms1g", "-Xmx2g -XX:+UseZGC", "-Xmx0m"])
def test_a_bad_heap_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(HEAP_ENV, value)
    with pytest.raises(UsageError, match=HEAP_ENV):
        heap_option()
    monkeypatch.delenv(HEAP_ENV)
    assert heap_option() == HEAP  # unset: the default, 512 MB
