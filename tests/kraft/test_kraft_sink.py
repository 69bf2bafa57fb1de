"""The HTTP client of the sink plugin's endpoint, against a fake http.server on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from kconform.fixtures.targets import sink_cluster
from kconform.fixtures.targets.base import TargetError
from kconform.fixtures.targets.kraft_container import SinkClient, free_ports


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(6)
    assert len(set(ports)) == 6
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_free_ports_come_from_below_the_kernels_ephemeral_range() -> None:
    """A port the kernel could give an outgoing connection while a JVM is still starting would
    keep that broker from binding it."""
    low = sink_cluster._ephemeral_low()
    if low - sink_cluster.LOWEST_FIXED_PORT < 1000:
        pytest.skip(f"no room below this machine's ephemeral range (starts at {low})")
    for _ in range(20):
        assert all(sink_cluster.LOWEST_FIXED_PORT <= p < low for p in free_ports(12))


def test_client_reads_health_telemetry_and_partition_metrics(
    fake_sink: Callable[[], Any], telemetry_doc: dict[str, Any], partition_doc: dict[str, Any]
) -> None:
    sink = fake_sink()
    sink.docs = {
        "/health": {"ok": True, "node_id": "2", "records": 3, "dropped": 0},
        "/telemetry": telemetry_doc,
        "/partition-metrics": partition_doc,
    }
    client = SinkClient("127.0.0.1", sink.port)
    assert client.health()["ok"] is True
    records = client.telemetry(broker_id=2, since=5)
    assert [r.client_instance_id for r in records] == ["AAAAAAAAAAEAAAAAAAAAAg", "x", "y"]
    assert {r.broker_id for r in records} == {2}
    assert "/telemetry?since=5" in sink.requests
    metrics = client.partition_metrics()
    assert {m.source for m in metrics} == {"log_size", "log_end_offset", "log", "broker_topic",
                                           "kip977"}  # fmt: skip


def test_a_failed_sample_is_an_error_not_an_empty_list(fake_sink: Callable[[], Any]) -> None:
    sink = fake_sink()
    sink.docs["/partition-metrics"] = {"sampled_at_ms": 1, "error": "no Yammer registry"}
    with pytest.raises(TargetError, match="sampling failed: no Yammer registry"):
        SinkClient("127.0.0.1", sink.port).partition_metrics()


@pytest.mark.parametrize(
    ("doc", "why"), [(b"not json", "Expecting value"), ([1, 2], "not a JSON object"),
                     (None, "404")],
)  # fmt: skip
def test_bad_answers_are_target_errors(fake_sink: Callable[[], Any], doc: object, why: str) -> None:
    sink = fake_sink()
    if doc is not None:
        sink.docs["/health"] = doc
    with pytest.raises(TargetError, match=why):
        SinkClient("127.0.0.1", sink.port).health()


def test_nothing_listening_is_a_target_error() -> None:
    (port,) = free_ports(1)
    with pytest.raises(TargetError, match=rf"telemetry sink http://127\.0\.0\.1:{port}/health"):
        SinkClient("127.0.0.1", port, timeout=2).health()
