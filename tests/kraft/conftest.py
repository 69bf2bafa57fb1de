"""Fixtures for the kraft target's tests: the sink plugin's JSON, and a fake of its endpoint."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class FakeSink:
    """Serves canned JSON per path, the way fixtures/plugin's SinkServer does; records requests."""

    def __init__(self) -> None:
        self.docs: dict[str, Any] = {}  # path -> JSON value, or raw bytes to send as is
        self.requests: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.requests.append(self.path)
                doc = fake.docs.get(self.path.split("?")[0])
                if doc is None:
                    self.send_error(404)
                    return
                body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def fake_sink() -> Iterator[Callable[[], FakeSink]]:
    """A factory: each call starts one more fake sink; all are stopped after the test."""
    started: list[FakeSink] = []

    def make() -> FakeSink:
        sink = FakeSink()
        started.append(sink)
        return sink

    yield make
    for sink in started:
        sink.close()


TELEMETRY_DOC = {
    "node_id": "2",
    "next_seq": 3,
    "dropped": 0,
    "records": [
        {"seq": 1, "received_at_ms": 1700000000250, "via": "receiver",
         "client_instance_id": "AAAAAAAAAAEAAAAAAAAAAg", "terminating": False,
         "content_type": "application/x-protobuf", "compression": "none", "payload_size": 4,
         "payload_b64": "CgIIAQ==", "push_interval_ms": None, "client_address": "172.18.0.1",
         "client_port": 51234, "client_id": "producer-1", "software_name": "apache-kafka-java",
         "software_version": "3.9.1", "error": None},
        {"seq": 2, "received_at_ms": 1700000001000, "via": "exporter",
         "client_instance_id": "x", "terminating": True, "compression": "gzip",
         "payload_b64": None, "client_port": None, "push_interval_ms": 5000},
        {"seq": 3, "received_at_ms": 1700000002000, "client_instance_id": "y",
         "compression": "unknown", "payload_b64": "AQ=="},
    ],
}  # fmt: skip


PARTITION_DOC = {
    "node_id": "1",
    "sampled_at_ms": 1700000000000,
    "error": None,
    "metrics": [
        {"mbean": "kafka.log:type=Log,name=Size,topic=t.a,partition=0", "value": 1234},
        {"mbean": "kafka.log:type=Log,name=LogEndOffset,topic=t.a,partition=1", "value": 7},
        {"mbean": "kafka.log:type=Log,name=LogStartOffset,topic=t.a,partition=1", "value": 0},
        {"mbean": "kafka.log:type=Log,name=LogEndOffset,topic=t.a,partition=1,is-future=true",
         "value": 3},
        {"mbean": "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t.a",
         "value": 42},
        {"mbean": "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=t.a,partition=1",
         "value": 99},
        {"mbean": "kafka.server:type=ReplicaManager,name=LeaderCount,topic=x", "value": 1},
        {"mbean": "kafka.log:type=Log,name=Size,topic=t.a,partition=2", "value": None},
    ],
}  # fmt: skip


@pytest.fixture
def telemetry_doc() -> dict[str, Any]:
    """A `/telemetry` answer as fixtures/plugin's SinkServer writes it."""
    return copy.deepcopy(TELEMETRY_DOC)


@pytest.fixture
def partition_doc() -> dict[str, Any]:
    """A `/partition-metrics` answer as fixtures/plugin's SinkServer writes it."""
    return copy.deepcopy(PARTITION_DOC)


class FakeResource:
    """A docker SDK container, volume, network or image: a name, labels, a removal record."""

    def __init__(self, name: str, labels: dict[str, str] | None = None, id: str = "") -> None:
        self.name, self.id = name, id or f"sha256:{name}"
        self.attrs: dict[str, Any] = {"Labels": dict(labels or {})}
        self.labels = self.attrs["Labels"]
        self.removed = False

    def remove(self, **kwargs: Any) -> None:
        self.removed = True


class FakeCollection:
    """`client.containers` / `.volumes` / `.networks` / `.images`, filtered by `label=k=v`."""

    def __init__(self) -> None:
        self.items: list[FakeResource] = []
        self.pulled: list[tuple[str, str]] = []

    def list(self, all: bool = False, filters: dict[str, str] | None = None,
             names: list[str] | None = None) -> list[FakeResource]:  # fmt: skip
        key, _, value = (filters or {}).get("label", "").partition("=")
        return [
            r for r in self.items
            if not r.removed and (not key or r.labels.get(key) == value)
            and (names is None or any(n in r.name for n in names))
        ]  # fmt: skip

    def create(self, name: str, labels: dict[str, str] | None = None) -> FakeResource:
        self.items.append(FakeResource(name, labels))
        return self.items[-1]

    def get(self, name: str) -> FakeResource:
        for r in self.items:
            if r.name == name and not r.removed:
                return r
        raise type("ImageNotFound", (LookupError,), {})(name)

    def pull(self, repository: str, tag: str) -> FakeResource:
        self.pulled.append((repository, tag))
        return self.create(f"{repository}:{tag}")


class FakeDocker:
    """Just enough of a docker SDK client for the kraft target's own engine calls."""

    def __init__(self, *, bridge: bool = True) -> None:
        self.containers, self.volumes = FakeCollection(), FakeCollection()
        self.networks, self.images = FakeCollection(), FakeCollection()
        self.networks.create("host")
        self.networks.create("none")
        if bridge:
            self.networks.create("bridge")
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def fake_docker() -> FakeDocker:
    return FakeDocker()
