"""The reference's restarts, as the soak uses them: a restarted node drops its connections and
its client instances, keeps its subscriptions, and serves again; the sink is drained."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from kconform.codecs.messages import GetTelemetrySubscriptionsRequest
from kconform.codecs.wire import ZERO_UUID
from kconform.fixtures.connection import ConnectionClosed, KafkaConnection
from kconform.fixtures.targets.base import Capability, Subscription
from kconform.fixtures.targets.reference_restart import RestartableReferenceTarget


@pytest.fixture(scope="module")
def target() -> Iterator[RestartableReferenceTarget]:
    with RestartableReferenceTarget(1, downtime=0.2) as started:
        started.set_subscription(Subscription("s", ["org.apache.kafka."], 1000))
        yield started


async def get(connection: KafkaConnection, instance: object = ZERO_UUID) -> object:
    response = await connection.request(
        GetTelemetrySubscriptionsRequest(client_instance_id=instance), 0
    )
    return response.body


def test_restart_drops_connections_and_instances_and_keeps_subscriptions(
    target: RestartableReferenceTarget,
) -> None:
    assert Capability.RESTART in target.capabilities

    async def scenario() -> tuple[object, object, int, int]:
        address = target.brokers[0]
        old = await KafkaConnection.open(address.host, address.port, timeout=5)
        first = await get(old)
        before = sum(target.instance_counts().values())
        await asyncio.to_thread(target.restart, address.node_id)
        with pytest.raises(ConnectionClosed):
            await get(old, first.client_instance_id)  # type: ignore[attr-defined]
        await old.close()
        after = sum(target.instance_counts().values())
        new = await KafkaConnection.open(address.host, address.port, timeout=5)
        again = await get(new, first.client_instance_id)  # type: ignore[attr-defined]
        await new.close()
        return first, again, before, after

    first, again, before, after = asyncio.run(scenario())
    assert before == 1 and after == 0  # the restarted node forgot the instance
    assert again.error_code == 0  # type: ignore[attr-defined]  # not throttled: a fresh instance
    assert again.subscription_id == first.subscription_id  # type: ignore[attr-defined]
    assert list(again.requested_metrics) == ["org.apache.kafka."]  # type: ignore[attr-defined]


def test_a_connection_made_while_down_is_closed(target: RestartableReferenceTarget) -> None:
    async def scenario() -> None:
        address = target.brokers[0]
        restart = asyncio.create_task(asyncio.to_thread(target.restart, address.node_id))
        await asyncio.sleep(0.05)
        connection = await KafkaConnection.open(address.host, address.port, timeout=5)
        with pytest.raises(ConnectionClosed):
            await get(connection)
        await connection.close()
        await restart

    asyncio.run(scenario())
    assert target.drain_telemetry() == [] and target.open_connections() >= 0
