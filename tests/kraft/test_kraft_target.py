"""KraftContainerTarget without Docker: the unavailable reason, readiness, cleanup, sink reads.

Containers are replaced by fakes with the two methods the target calls (`stop`,
`get_wrapped_container`); brokers by `tests/support/fake_broker.py`; sinks by http.server. None
of this fakes a running Kafka for a conformance verdict: it checks the target's own logic.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fake_broker import FakeBroker, start_cluster

from kconform.fixtures.runtime import LoopThread
from kconform.fixtures.targets import kraft_config as cfg
from kconform.fixtures.targets import kraft_container as kc
from kconform.fixtures.targets import kraft_reaper
from kconform.fixtures.targets.base import (
    Capability,
    Subscription,
    TargetError,
    TargetUnavailable,
    UnsupportedOperation,
)
from kconform.fixtures.targets.kraft_container import KraftContainerTarget
from tests.kraft.conftest import FakeDocker


@dataclass
class FakeWrapped:
    status: str = "running"
    restarts: int = 0
    killed: list[str] = field(default_factory=list)

    def reload(self) -> None:
        pass

    def logs(self, tail: int = 40) -> bytes:
        return b"[KafkaRaftServer] boom\n"

    def restart(self, timeout: int = 10) -> None:
        self.restarts += 1

    def kill(self, signal: str = "SIGKILL") -> None:
        self.killed.append(signal)

    def wait(self, timeout: float = 0) -> dict[str, int]:
        return {"StatusCode": 143}


@dataclass
class FakeContainer:
    fail_stop: bool = False
    stopped: bool = False
    wrapped: FakeWrapped = field(default_factory=FakeWrapped)

    def stop(self) -> None:
        self.stopped = True
        if self.fail_stop:
            raise RuntimeError("engine went away")

    def get_wrapped_container(self) -> FakeWrapped:
        return self.wrapped


@dataclass
class FakeNetwork:
    removed: bool = False

    def remove(self) -> None:
        self.removed = True


# --- no Docker ------------------------------------------------------------------------------


def test_unavailable_reason_names_the_engine_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_socket(timeout: float) -> Any:
        raise RuntimeError(
            "Error while fetching server API version: ('Connection aborted.', "
            "FileNotFoundError(2, 'No such file or directory'))"
        )

    monkeypatch.setattr(kraft_reaper, "docker_client", no_socket)
    reason = kc.docker_unavailable_reason()
    assert reason is not None
    assert reason.startswith("no Docker engine reachable (Error while fetching server API")


def test_unavailable_reason_without_any_docker_library(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(timeout: float) -> Any:
        raise ImportError("No module named 'docker'")

    monkeypatch.setattr(kraft_reaper, "docker_client", missing)
    assert kc.docker_unavailable_reason() == (
        "neither testcontainers nor the docker SDK is installed"
    )


def test_a_pinging_engine_is_available(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Client:
        def ping(self) -> bool:
            calls.append("ping")
            return True

        def close(self) -> None:
            calls.append("close")

    monkeypatch.setattr(kraft_reaper, "docker_client", lambda timeout: Client())
    assert kc.docker_unavailable_reason() is None
    assert calls == ["ping", "close"]


def test_this_machines_reason_is_short_and_clear() -> None:
    reason = kc.docker_unavailable_reason(timeout=2)
    if reason is None:
        pytest.skip("a Docker engine answers here")
    assert reason.startswith("no Docker engine reachable (")
    assert len(reason) < 260


def test_start_without_docker_is_target_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kc, "docker_unavailable_reason", lambda: "no Docker engine reachable (x)")
    target = KraftContainerTarget("3.9.1", brokers=3)
    with pytest.raises(TargetUnavailable) as info:
        target.start()
    assert (info.value.target, info.value.reason) == ("kraft", "no Docker engine reachable (x)")
    target.stop()  # nothing to clean, still fine
    target.stop()


# --- construction ------------------------------------------------------------------------------


def test_names_versions_and_bad_arguments() -> None:
    assert KraftContainerTarget().name == "kraft"
    assert KraftContainerTarget().version == cfg.DEFAULT_KAFKA_VERSION
    target = KraftContainerTarget("3.7.0", brokers=3)
    assert (target.name, target.version, target.broker_count) == ("kraft:3.7.0", "3.7.0", 3)
    assert target.capabilities == frozenset()
    assert list(target.brokers) == []
    assert target.describe()["reporter"] == cfg.REPORTER_CLASS
    with pytest.raises(ValueError, match=r"MAJOR\.MINOR\.PATCH"):
        KraftContainerTarget("latest")
    with pytest.raises(ValueError, match="predates"):
        KraftContainerTarget("3.6.0")
    with pytest.raises(ValueError, match="at least one broker"):
        KraftContainerTarget(brokers=0)


def test_operations_before_start_say_so() -> None:
    target = KraftContainerTarget()
    with pytest.raises(UnsupportedOperation, match="client_metrics_admin"):
        target.set_subscription(Subscription("s", metrics=["*"]))
    for call in (target.telemetry_received, target.partition_metrics, target.check_alive):
        with pytest.raises(TargetError, match="not running"):
            call()
    with pytest.raises(TargetError, match="not running"):
        target.create_topic("t")


# --- cleanup ------------------------------------------------------------------------------------


def test_stop_removes_everything_even_when_one_removal_fails() -> None:
    target = KraftContainerTarget(brokers=3)
    containers = {1: FakeContainer(), 2: FakeContainer(fail_stop=True), 3: FakeContainer()}
    network = FakeNetwork()
    target._containers = dict(containers)
    target._network = network
    with pytest.warns(RuntimeWarning, match="container 2: engine went away"):
        target.stop()
    assert all(c.stopped for c in containers.values())
    assert network.removed
    assert target.cleanup_errors == ["container 2: engine went away"]
    target.stop()  # second call: nothing left
    assert target.cleanup_errors == []


def test_a_failed_start_cleans_up_and_keeps_its_own_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kc, "docker_unavailable_reason", lambda: None)
    target = KraftContainerTarget(brokers=2)
    started = [FakeContainer(), FakeContainer(fail_stop=True)]
    network = FakeNetwork()

    def half_start() -> None:
        target._network = network
        target._containers = {1: started[0], 2: started[1]}
        raise TargetError("node 2 did not come up")

    monkeypatch.setattr(target, "_start", half_start)
    with pytest.raises(TargetError, match="node 2 did not come up") as info:
        target.start()
    assert all(c.stopped for c in started) and network.removed
    assert getattr(info.value, "__notes__", []) == ["kraft cleanup: container 2: engine went away"]


# --- readiness and the sinks, with fake brokers -----------------------------------------------


class FakeCluster:
    """Fake brokers on their own loop (the target runs its own LoopThread)."""

    def __init__(self, n: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.brokers: list[FakeBroker] = self._run(start_cluster(n))

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(5)

    def close(self) -> None:
        for b in self.brokers:
            self._run(b.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def wired(fake_sink: Callable[[], Any]) -> Iterator[tuple[KraftContainerTarget, list[Any]]]:
    """A 2-node target whose nodes point at fake brokers and fake sinks (no containers)."""
    cluster = FakeCluster(2)
    sinks = [fake_sink(), fake_sink()]
    for sink in sinks:
        sink.docs["/health"] = {"ok": True}
    target = KraftContainerTarget("3.9.1", brokers=2, startup_timeout=5)
    target.nodes = [
        cfg.NodePlan(b.node_id, b.port, s.port) for b, s in zip(cluster.brokers, sinks, strict=True)
    ]
    target._containers = {n.node_id: FakeContainer() for n in target.nodes}
    target._runtime = LoopThread("test-kraft")
    yield target, sinks
    target._containers = {}
    target.stop()
    cluster.close()


def test_ready_means_probed_and_sinks_answering(
    wired: tuple[KraftContainerTarget, list[Any]],
) -> None:
    target, _ = wired
    target._wait_ready(deadline=float("inf"))
    # the fake advertises 71 but not 72: no TELEMETRY; the sink capabilities are the target's
    assert Capability.TELEMETRY not in target.capabilities
    assert target.capabilities >= kc.SINK_CAPABILITIES
    assert [b.node_id for b in target.brokers] == [1, 2]
    target.check_alive()
    assert any(e.api_key == 18 for e in target.admin_log.entries())
    assert target.wire_log.entries() == []


def test_not_ready_in_time_shows_why_and_the_logs(
    wired: tuple[KraftContainerTarget, list[Any]],
) -> None:
    target, sinks = wired
    del sinks[1].docs["/health"]  # node 2's plugin never answers
    with pytest.raises(TargetError, match=r"not ready after 5s \(node 2: telemetry sink") as info:
        target._wait_ready(deadline=0)
    assert "[KafkaRaftServer] boom" in str(info.value)


def test_a_dead_container_fails_fast(wired: tuple[KraftContainerTarget, list[Any]]) -> None:
    target, _ = wired
    target._containers[2].wrapped.status = "exited"
    with pytest.raises(TargetError, match="kraft node 2 is exited"):
        target.check_alive()


def test_restart_restarts_in_place_and_waits(
    wired: tuple[KraftContainerTarget, list[Any]],
) -> None:
    target, _ = wired
    target._wait_ready(deadline=float("inf"))
    target.restart(2)
    assert [target._containers[i].wrapped.restarts for i in (1, 2)] == [0, 1]
    target.restart()
    assert [target._containers[i].wrapped.restarts for i in (1, 2)] == [1, 2]
    with pytest.raises(TargetError, match="no node 9"):
        target.restart(9)


def test_sinks_of_all_nodes_are_read_and_merged(
    wired: tuple[KraftContainerTarget, list[Any]],
    telemetry_doc: dict[str, Any],
    partition_doc: dict[str, Any],
) -> None:
    target, sinks = wired
    sinks[0].docs["/telemetry"] = telemetry_doc
    sinks[1].docs["/telemetry"] = {"records": [{"client_instance_id": "late",
                                                "received_at_ms": 1800000000000}]}  # fmt: skip
    sinks[0].docs["/partition-metrics"] = partition_doc
    follower = {"sampled_at_ms": 1700000000500, "metrics": [
        {"mbean": "kafka.log:type=Log,name=LogEndOffset,topic=t.a,partition=1", "value": 5},
        {"mbean": "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t.a",
         "value": 8},
    ]}  # fmt: skip
    sinks[1].docs["/partition-metrics"] = follower
    records = target.telemetry_received()
    assert [(r.broker_id, r.client_instance_id) for r in records][-1] == (2, "late")
    assert {r.broker_id for r in records[:-1]} == {1}
    metrics = {(m.source, m.partition, m.metric): m.value for m in target.partition_metrics()}
    assert metrics[("log_end_offset", 1, "LogEndOffset")] == 7.0  # leader's, not follower's 5
    assert metrics[("broker_topic", -1, "MessagesInPerSec")] == 50.0  # 42 + 8


# --- wiring of containers and image, with testcontainers replaced ------------------------------


class RecordingContainer(FakeContainer):
    """Stands in for testcontainers' DockerContainer: records how the target configures it."""

    made: list[RecordingContainer] = []
    fail_on_start: int | None = None

    def __init__(self, image: str, env: dict[str, str]) -> None:
        super().__init__()
        self.image, self.env = image, env
        self.ports: dict[str, Any] = {}
        self.network: Any = None
        self.aliases: tuple[str, ...] = ()
        self.volumes: dict[str, tuple[str, str]] = {}
        self.kwargs: dict[str, Any] = {}
        self.started = False
        RecordingContainer.made.append(self)

    def with_network(self, network: Any) -> RecordingContainer:
        self.network = network
        return self

    def with_network_aliases(self, *aliases: str) -> RecordingContainer:
        self.aliases = aliases
        return self

    def with_volume_mapping(self, host: str, container: str, mode: str) -> RecordingContainer:
        self.volumes[host] = (container, mode)
        return self

    def with_kwargs(self, **kwargs: Any) -> RecordingContainer:
        self.kwargs.update(kwargs)
        return self

    def start(self) -> RecordingContainer:
        if RecordingContainer.fail_on_start == len(RecordingContainer.made):
            raise RuntimeError("port is already allocated")
        self.started = True
        return self


class RecordingNetwork(FakeNetwork):
    made: list[RecordingNetwork] = []

    def __init__(self, docker_network_kw: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.kw = docker_network_kw or {}
        RecordingNetwork.made.append(self)

    def create(self) -> RecordingNetwork:
        return self


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch, fake_docker: FakeDocker) -> Iterator[FakeDocker]:
    """testcontainers and the engine replaced: containers and networks are recorded."""
    import testcontainers.core.container
    import testcontainers.core.network

    RecordingContainer.made, RecordingContainer.fail_on_start = [], None
    RecordingNetwork.made = []
    monkeypatch.setattr(testcontainers.core.container, "DockerContainer", RecordingContainer)
    monkeypatch.setattr(testcontainers.core.network, "Network", RecordingNetwork)
    monkeypatch.setattr(kc, "docker_unavailable_reason", lambda: None)
    monkeypatch.setattr(kc, "docker_client", lambda timeout: fake_docker)
    monkeypatch.setattr(KraftContainerTarget, "_ensure_image", lambda self, c: "kconform-kraft:x")
    monkeypatch.setattr(KraftContainerTarget, "_watch", lambda self: None)
    monkeypatch.delenv(cfg.NETWORK_ENV, raising=False)
    yield fake_docker


def test_start_wires_n_nodes_on_one_network(
    recording: FakeDocker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(KraftContainerTarget, "_wait_ready", lambda self, deadline: None)
    target = KraftContainerTarget("3.9.1", brokers=3)
    target.start()
    assert target.network_mode == "bridge"
    made = RecordingContainer.made
    assert [c.aliases for c in made] == [("kafka-1",), ("kafka-2",), ("kafka-3",)]
    assert {id(c.network) for c in made} == {id(target._network)}
    assert RecordingNetwork.made[0].kw == {"labels": target.labels()}
    assert {c.image for c in made} == {"kconform-kraft:x"} and all(c.started for c in made)
    assert len({c.env["CLUSTER_ID"] for c in made}) == 1
    volumes = recording.volumes.list(filters={"label": f"{kc.LABEL_RUN}={target.run_id}"})
    assert len(volumes) == 3
    for node, c, volume in zip(target.nodes, made, volumes, strict=True):
        assert c.ports == {
            "9092/tcp": ("127.0.0.1", node.external_port),
            "18099/tcp": ("127.0.0.1", node.sink_port),
        }
        assert c.volumes == {volume.name: (cfg.LOG_DIR, "rw")}
        assert c.kwargs == {"labels": target.labels()}
        assert c.env["KAFKA_ADVERTISED_LISTENERS"].endswith(
            f"EXTERNAL://127.0.0.1:{node.external_port}"
        )
        assert c.env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == (
            "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093"
        )
        assert c.env["KAFKA_METRIC_REPORTERS"] == cfg.REPORTER_CLASS
        assert "KCONFORM_SINK_HOST" not in c.env  # the published port needs every interface
    target.stop()
    assert all(c.stopped for c in made) and target._network is None
    assert all(v.removed for v in volumes)


def test_an_engine_without_bridge_runs_host_mode(
    recording: FakeDocker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(KraftContainerTarget, "_wait_ready", lambda self, deadline: None)
    recording.networks.get("bridge").removed = True  # dockerd --bridge=none
    target = KraftContainerTarget("4.1.0", brokers=3)
    target.start()
    assert target.network_mode == "host" and RecordingNetwork.made == []
    made = RecordingContainer.made
    assert [c.kwargs["network"] for c in made] == ["host"] * 3
    assert all(c.ports == {} and c.aliases == () for c in made)
    ports = [p for n in target._host_nodes for p in (n.port, n.broker_port, n.controller_port,
                                                      n.sink_port)]  # fmt: skip
    assert len(set(ports)) == 12
    for node, c in zip(target._host_nodes, made, strict=True):
        assert c.env["KCONFORM_SINK_HOST"] == "127.0.0.1"
        assert c.env["KCONFORM_SINK_PORT"] == str(node.sink_port)
        assert c.env["KAFKA_LISTENERS"] == (
            f"BROKER://127.0.0.1:{node.broker_port},"
            f"CONTROLLER://127.0.0.1:{node.controller_port},EXTERNAL://127.0.0.1:{node.port}"
        )
    assert target.endpoints[1].port == target._host_nodes[1].port
    target.stop()


def test_bridge_asked_for_on_an_engine_without_one_is_unavailable(
    recording: FakeDocker,
) -> None:
    recording.networks.get("bridge").removed = True
    target = KraftContainerTarget("4.1.0", network="bridge")
    with pytest.raises(TargetUnavailable, match="no bridge network"):
        target.start()
    assert RecordingContainer.made == []


def test_static_settings_recreate_the_nodes_on_their_volumes(
    recording: FakeDocker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(KraftContainerTarget, "_wait_ready", lambda self, deadline: None)
    target = KraftContainerTarget("4.1.0", brokers=2, network="host")
    target.start()
    first = list(RecordingContainer.made)
    target.set_static_config("telemetry.max.bytes", "4096")
    second = RecordingContainer.made[2:]
    assert all(c.stopped for c in first) and all(c.wrapped.killed == ["SIGTERM"] for c in first)
    assert [c.env.get("KAFKA_TELEMETRY_MAX_BYTES") for c in second] == ["4096", "4096"]
    assert [c.volumes for c in second] == [c.volumes for c in first]
    assert [c.env["KAFKA_LISTENERS"] for c in second] == [c.env["KAFKA_LISTENERS"] for c in first]
    assert len({c.env["CLUSTER_ID"] for c in first + second}) == 1
    target.set_static_config("telemetry.max.bytes", None)
    assert "KAFKA_TELEMETRY_MAX_BYTES" not in RecordingContainer.made[-1].env
    assert Capability.STATIC_BROKER_CONFIG in target._extra_capabilities()
    target.stop()


def test_a_container_that_fails_to_start_takes_the_others_down(recording: FakeDocker) -> None:
    RecordingContainer.fail_on_start = 2
    target = KraftContainerTarget("4.1.0", brokers=3)
    with pytest.raises(RuntimeError, match="port is already allocated"):
        target.start()
    assert [c.stopped for c in RecordingContainer.made] == [True, True]
    assert target._containers == {}
    assert all(v.removed for v in recording.volumes.items)
