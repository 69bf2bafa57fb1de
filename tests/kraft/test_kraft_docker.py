"""The kraft target against real brokers: needs a Docker engine, skipped with the reason without.

Versions come from KCONFORM_KRAFT_VERSIONS (comma separated, default the reference 4.1.0);
`tox -e docker` sets the SPEC's releases 3.7.0-4.1.0. The first run per version builds the
plugin image (pulls apache/kafka:<version> and a JDK image).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

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
from kconform.fixtures.targets.base import Capability, Subscription
from kconform.fixtures.targets.kraft_container import (
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
    assert "kraft-test" in kraft.list_subscriptions()
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
    assert record.source_port is not None and not record.terminating
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


def test_three_brokers_form_one_cluster_and_are_removed() -> None:
    import docker

    target = KraftContainerTarget(VERSIONS[-1], brokers=3)
    with target:
        assert sorted(b.node_id for b in target.brokers) == [1, 2, 3]
        assert {b.host for b in target.brokers} == {"127.0.0.1"}
        ids = [c.get_container_id() for c in target._containers.values()]
        network = target._network.name
    client = docker.from_env()
    for container_id in ids:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(container_id)
    with pytest.raises(docker.errors.NotFound):
        client.networks.get(network)
