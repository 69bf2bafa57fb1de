"""A fake of the kconform sink plugin's HTTP endpoint, and fake brokers on their own thread.

FakeSink serves what fixtures/plugin's SinkServer serves (/health, /telemetry?since=N,
/partition-metrics) for one node id, from a ThreadingHTTPServer on 127.0.0.1, with the plugin's
sequence numbers, so a harness reading it sees the same cursor and restart behaviour.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fake_broker import FakeBroker, start_cluster


class FakeSink:
    """One broker's plugin endpoint: /health, /telemetry?since=N, /partition-metrics."""

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        self.records: list[dict[str, Any]] = []
        self.next_seq = 1
        self.metrics: list[dict[str, Any]] = []
        self.requests: list[str] = []
        self.throw_on_demand: bool | None = None  # None: an older plugin that does not say
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.requests.append(self.path)
                parts = urlsplit(self.path)
                doc = fake.answer(parts.path, parse_qs(parts.query))
                if doc is None:
                    self.send_error(404)
                    return
                body = json.dumps(doc).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def push(self, instance: str, payload: bytes, at_ms: int = 1_000) -> None:
        self.records.append({
            "seq": self.next_seq, "received_at_ms": at_ms, "via": "receiver",
            "client_instance_id": instance, "terminating": False, "content_type": None,
            "compression": "none", "payload_size": len(payload),
            "payload_b64": base64.b64encode(payload).decode(), "client_id": "c",
        })  # fmt: skip
        self.next_seq += 1

    def restart(self) -> None:
        """What a broker restart does to its sink: the buffer and the sequence start over."""
        self.records, self.next_seq = [], 1

    def answer(self, path: str, query: dict[str, list[str]]) -> dict[str, Any] | None:
        if path == "/health":
            health = {"ok": True, "node_id": self.node_id, "records": len(self.records),
                      "dropped": 0}  # fmt: skip
            if self.throw_on_demand is not None:
                health |= {"throw_on_demand": self.throw_on_demand, "thrown": 0}
            return health
        if path == "/telemetry":
            since = int(query.get("since", ["0"])[0])
            return {"node_id": self.node_id, "next_seq": self.next_seq, "dropped": 0,
                    "records": [r for r in self.records if r["seq"] > since]}  # fmt: skip
        if path == "/partition-metrics":
            return {"node_id": self.node_id, "sampled_at_ms": 5_000, "error": None,
                    "metrics": self.metrics}  # fmt: skip
        return None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@contextmanager
def fake_cluster(n: int = 3) -> Iterator[list[FakeBroker]]:
    """`n` fake brokers (node ids 1..n) on their own event loop thread."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    brokers = asyncio.run_coroutine_threadsafe(start_cluster(n), loop).result(5)
    try:
        yield brokers
    finally:
        for broker in brokers:
            asyncio.run_coroutine_threadsafe(broker.stop(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
