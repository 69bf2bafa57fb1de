"""The kraft target against real brokers: needs a Docker engine, skipped with the reason without.

Versions come from KCONFORM_KRAFT_VERSIONS (comma separated, default the reference 4.1.0);
`tox -e docker` sets the SPEC's releases 3.7.0-4.1.0. The first run per version builds the
plugin image (pulls apache/kafka:<version> and a JDK image unless they are local). The network
mode is the engine's (KCONFORM_KRAFT_NETWORK); CI's bridge-less engine runs host mode.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kconform.codecs.messages import (
    ApiVersionsRequest,
    GetTelemetrySubscriptionsRequest,
    PushTelemetryRequest,
)
from kconform.codecs.otlp import build_metrics_data, gauge
from kconform.codecs.wire import kafka_uuid_str
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.runtime import LoopThread
from kconform.fixtures.targets import kraft_config as cfg
from kconform.fixtures.targets.base import Capability, Subscription
from kconform.fixtures.targets.kraft_container import (
    LABEL_RUN,
    KraftContainerTarget,
    docker_unavailable_reason,
)

DOCKER_REASON = docker_unavailable_reason()  # computed once for the module
# `tox -e docker` sets KCONFORM_REQUIRE_DOCKER=1: there a missing engine fails, not skips.
REQUIRED = os.environ.get("KCONFORM_REQUIRE_DOCKER") == "1"
pytestmark = pytest.mark.skipif(
    DOCKER_REASON is not None and not REQUIRED, reason=f"kraft target needs Docker: {DOCKER_REASON}"
)
VERSIONS = [v.strip() for v in os.environ.get("KCONFORM_KRAFT_VERSIONS", "4.1.0").split(",")]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=VERSIONS)
def kraft(request: pytest.FixtureRequest) -> Iterator[KraftContainerTarget]:
    with KraftContainerTarget(request.param, brokers=1) as target:
        yield target


def push_once(target: KraftContainerTarget, payload: bytes) -> uuid.UUID:
    """KIP-511 handshake, Get, one Push through the codec; returns the instance id."""
    broker = target.brokers[0]
    runtime = LoopThread("kraft-test-client")

    async def exchange() -> uuid.UUID:
        conn = await KafkaConnection.open(broker.host, broker.port, client_id="kraft-test")
        try:
            hello = ApiVersionsRequest(client_software_name="kconform-test",
                                       client_software_version="1.0")  # fmt: skip
            assert (await conn.request(hello, 3)).body.error_code == 0
            got = (await conn.request(GetTelemetrySubscriptionsRequest(), 0)).body
            assert got.error_code == 0
            pushed = await conn.request(
                PushTelemetryRequest(
                    client_instance_id=got.client_instance_id,
                    subscription_id=got.subscription_id, terminating=False,
                    compression_type=0, metrics=payload,
                ),
                0,
            )  # fmt: skip
            assert pushed.body.error_code == 0
            return got.client_instance_id  # type: ignore[no-any-return]
        finally:
            await conn.close()

    try:
        return runtime.run(exchange())
    finally:
        runtime.stop()


def test_the_broker_advertises_telemetry_and_the_sink_sees_the_push(
    kraft: KraftContainerTarget,
) -> None:
    assert {Capability.TELEMETRY, Capability.CLIENT_METRICS_ADMIN, Capability.TELEMETRY_SINK,
            Capability.PARTITION_METRICS, Capability.RESTART} <= kraft.capabilities  # fmt: skip
    assert Capability.KIP977 not in kraft.capabilities  # no release has metrics.verbosity
    kraft.set_subscription(Subscription("kraft-test", metrics=["*"], interval_ms=1000))
    deadline = time.monotonic() + 15  # the broker lists it once the change reaches its metadata
    while "kraft-test" not in (listed := kraft.list_subscriptions()):
        assert time.monotonic() < deadline, f"listed after 15 s: {listed}"
        time.sleep(0.2)
    payload = build_metrics_data([gauge("org.apache.kafka.test", 1, time_unix_nano=1)])
    instance = push_once(kraft, payload)
    records = [r for r in kraft.telemetry_received()
               if r.client_instance_id == kafka_uuid_str(instance)]  # fmt: skip
    assert len(records) == 1
    (record,) = records
    assert record.payload == payload and record.compression_type == 0
    assert (record.client_id, record.software_name, record.software_version) == (
        "kraft-test", "kconform-test", "1.0",
    )  # fmt: skip
    assert not record.terminating
    # RequestContext.clientPort exists from 3.8 on (KAFKA-15811); 3.7 gives the plugin none
    has_port = cfg.parse_kafka_version(kraft.version) >= (3, 8, 0)
    assert (record.source_port is not None) == has_port, record
    if kraft.network_mode == "host":
        assert record.source_address == "127.0.0.1"
    kraft.delete_subscription("kraft-test")


def test_partition_metrics_follow_a_new_topic(kraft: KraftContainerTarget) -> None:
    kraft.create_topic("kraft-pm", partitions=2)
    deadline = time.monotonic() + 30
    while True:
        ends = {m.partition: m.value for m in kraft.partition_metrics()
                if m.topic == "kraft-pm" and m.source == "log_end_offset"}  # fmt: skip
        if ends == {0: 0.0, 1: 0.0}:
            break
        assert time.monotonic() < deadline, f"log end offsets seen: {ends}"
        time.sleep(1)


def test_a_restarted_broker_comes_back_with_its_sink(kraft: KraftContainerTarget) -> None:
    kraft.restart()
    kraft.check_alive()
    assert kraft.list_subscriptions() is not None
    assert kraft.partition_metrics() is not None


def listening_addresses() -> dict[int, set[str]]:
    """Port -> the addresses something listens on, from the kernel's tables (hex, as listed)."""
    listening: dict[int, set[str]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A":  # LISTEN
                address, port = local.split(":")
                listening.setdefault(int(port, 16), set()).add(address)
    return listening


def test_in_host_mode_every_port_is_on_the_loopback(kraft: KraftContainerTarget) -> None:
    """No listener of a node, the sink included, is reachable from another host."""
    if kraft.network_mode != "host":
        pytest.skip(f"{kraft.network_mode} mode: the nodes listen inside their own network")
    loopback = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1, as v4 and v4-mapped
    listening = listening_addresses()
    (node,) = kraft._host_nodes
    for port in (node.port, node.broker_port, node.controller_port, node.sink_port):
        assert listening.get(port), f"nothing listens on {port}"
        assert listening[port] <= loopback, f"port {port} listens on {listening[port]}"


def telemetry_max_bytes(target: KraftContainerTarget) -> int:
    loop = LoopThread("test-kraft-config")
    try:
        broker = target.brokers[0]
        conn = loop.run(KafkaConnection.open(broker.host, broker.port))
        answer = loop.run(
            conn.request(GetTelemetrySubscriptionsRequest(client_instance_id=uuid.UUID(int=0)), 0)
        )
        loop.run(conn.close())
        return int(answer.body.telemetry_max_bytes)
    finally:
        loop.stop()


def test_static_settings_apply_by_recreating_the_nodes(kraft: KraftContainerTarget) -> None:
    assert kraft.has(Capability.STATIC_BROKER_CONFIG)
    kraft.create_topic("kraft-static", partitions=1)
    assert telemetry_max_bytes(kraft) == 1048576  # Apache's default
    kraft.set_static_config("telemetry.max.bytes", "4096")
    assert telemetry_max_bytes(kraft) == 4096
    kraft.set_static_config("telemetry.max.bytes", None)
    assert telemetry_max_bytes(kraft) == 1048576
    kraft.create_topic("kraft-static", partitions=1)  # the data volume came along: it exists


def labelled(run_id: str) -> dict[str, list[Any]]:
    import docker

    client = docker.from_env()
    filters = {"label": f"{LABEL_RUN}={run_id}"}
    try:
        return {
            "containers": client.containers.list(all=True, filters=filters),
            "volumes": client.volumes.list(filters=filters),
            "networks": client.networks.list(filters=filters),
        }
    finally:
        client.close()


def assert_nothing_left(run_id: str, within: float) -> None:
    deadline = time.monotonic() + within
    while True:
        left = {kind: found for kind, found in labelled(run_id).items() if found}
        if not left:
            return
        assert time.monotonic() < deadline, f"left behind after {within}s: {left}"
        time.sleep(0.5)


@pytest.mark.parametrize("version", VERSIONS)
def test_three_brokers_form_one_cluster_and_are_removed(version: str) -> None:
    target = KraftContainerTarget(version, brokers=3)
    with target:
        assert sorted(b.node_id for b in target.brokers) == [1, 2, 3]
        assert {b.host for b in target.brokers} == {"127.0.0.1"}
        found = labelled(target.run_id)
        assert len(found["containers"]) == 3 and len(found["volumes"]) == 3
        assert len(found["networks"]) == (1 if target.network_mode == "bridge" else 0)
        watcher = target._watcher
        assert watcher is not None and watcher.poll() is None
    assert_nothing_left(target.run_id, within=0)
    assert watcher.poll() == 0  # the watcher found nothing more to remove, and ended


HARNESS = textwrap.dedent(
    """
    import sys, time
    from kconform.fixtures.targets.kraft_container import KraftContainerTarget
    t = KraftContainerTarget(sys.argv[1], brokers=int(sys.argv[2]))
    t.start()
    print(t.run_id, flush=True)
    time.sleep(600)
    """
)


def test_sigkill_of_the_harness_leaves_nothing() -> None:
    """Without ryuk, the target's watcher removes what a killed harness left."""
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS, VERSIONS[-1], "1"], stdout=subprocess.PIPE, cwd=REPO
    )
    try:
        assert harness.stdout is not None
        run_id = harness.stdout.readline().decode().strip()
        assert run_id and labelled(run_id)["containers"]
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    assert_nothing_left(run_id, within=60)
