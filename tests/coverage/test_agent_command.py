"""The agent's command line and where it goes: only on a node's JVM, only with --coverage."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.errors import HarnessDefect
from kconform.fixtures.coverage.agent import CoverageAgent
from kconform.fixtures.coverage.jacoco import JacocoTools, agent_option
from kconform.fixtures.coverage.selection import BROKER_CLASSES, Chosen, includes, lambda_owner
from kconform.fixtures.targets.apache import ApacheTarget, LocalNode
from kconform.fixtures.targets.kafka_dist import PluginBuild
from kconform.fixtures.targets.registry import target_kind

TOOLS = JacocoTools(Path("/c/agent.jar"), Path("/c/cli.jar"), "0.8.13")


def test_agent_option_is_a_tcpserver_on_loopback() -> None:
    option = agent_option(TOOLS, 41234, session="apache-4.4.0-node-1", includes="a.B:a.B$*")
    assert option == (
        "-javaagent:/c/agent.jar=output=tcpserver,address=127.0.0.1,port=41234,"
        "includes=a.B:a.B$*,sessionid=apache-4.4.0-node-1,dumponexit=false,jmx=false"
    )


def test_agent_option_refuses_a_separator_in_a_value() -> None:
    with pytest.raises(HarnessDefect, match="includes"):
        agent_option(TOOLS, 1, session="s", includes="a,b")


def test_includes_name_the_chosen_classes_only() -> None:
    patterns = includes().split(":")
    assert "org.apache.kafka.server.ClientMetricsManager" in patterns
    assert "org.apache.kafka.server.ClientMetricsManager$*" in patterns
    assert "kafka.server.KafkaApis" in patterns and "kafka.server.KafkaApis$*" not in patterns
    assert all(not p.endswith(".*") for p in patterns)  # never a whole package
    assert len(patterns) == sum(2 if c.inner else 1 for c in BROKER_CLASSES)


def test_lambdas_count_with_their_method() -> None:
    assert lambda_owner("$anonfun$handleApiVersionsRequest$1$adapted") == "handleApiVersionsRequest"
    assert lambda_owner("lambda$decompress$0") == "decompress"
    apis = Chosen("kafka/server/KafkaApis", ("handleApiVersionsRequest",), inner=False)
    assert apis.covers_method("$anonfun$handleApiVersionsRequest$1")
    assert not apis.covers_method("handleFetchRequest")
    assert not apis.covers_class("kafka/server/KafkaApis$Inner")


def test_each_node_keeps_its_port_across_restarts() -> None:
    agent = CoverageAgent(TOOLS, "apache-4.4.0")
    first = agent.node_option(1)
    assert agent.node_option(1) == first and agent.node_option(2) != first
    assert f"port={agent.ports[1]}," in first and "sessionid=apache-4.4.0-node-1" in first


def test_only_the_apache_kind_carries_an_agent() -> None:
    assert target_kind("apache").jvm_agent
    assert not target_kind("reference").jvm_agent


class _Agent:
    def node_option(self, node_id: int) -> str:
        return f"-javaagent:x=port={node_id}"

    def before_stop(self, node_id: int) -> None:
        raise AssertionError("not stopping")


def test_node_env_gets_the_agent_format_does_not(tmp_path: Path) -> None:
    target = ApacheTarget("4.4.0")
    target.plugin = PluginBuild(tmp_path / "sink.jar", "R", False)
    node = LocalNode(3, 1, 2, 3, 4, tmp_path)
    assert "KAFKA_OPTS" not in target._env(node, agent=True)  # no agent attached: unchanged
    target.jvm_agent = _Agent()
    assert target._env(node, agent=True)["KAFKA_OPTS"] == "-javaagent:x=port=3"
    assert "KAFKA_OPTS" not in target._env(node)  # kafka-storage.sh format: no agent, no port
