"""A tiny asyncio Kafka broker built on the codec, for testing connections and the proxy.

It answers ApiVersions, Metadata (listing itself and its peers), Produce and
GetTelemetrySubscriptions, and records every request it receives. Deterministic and fast;
never a conformance target.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from kconform.codecs.framing import FrameReader, RequestFrame, decode_request, encode_response
from kconform.codecs.messages import (
    ApiVersionsResponse,
    GetTelemetrySubscriptionsResponse,
    MetadataResponse,
    ProduceResponse,
)
from kconform.codecs.schema import Message
from kconform.fixtures.targets.base import BrokerAddress

SUPPORTED = {0: (0, 9), 3: (0, 12), 18: (0, 3), 71: (0, 0)}


@dataclass
class FakeBroker:
    node_id: int
    peers: list[tuple[int, str, int]] = field(default_factory=list)  # filled after start
    received: list[RequestFrame] = field(default_factory=list)
    delays: dict[int, float] = field(default_factory=dict)  # api key -> seconds
    trailing: dict[int, bytes] = field(default_factory=dict)  # api key -> bytes after the body
    server: asyncio.Server | None = None
    port: int = 0
    accepted: int = 0  # connections made to it

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        frames = FrameReader()
        try:
            while data := await reader.read(65536):
                for payload in frames.feed(data):
                    request = decode_request(payload, strict=False)
                    self.received.append(request)
                    answer = self.answer(request)
                    if answer is None:
                        continue
                    await asyncio.sleep(self.delays.get(request.api_key, 0))
                    body, version = answer
                    frame = encode_response(body, version, request.header.correlation_id)
                    extra = self.trailing.get(request.api_key, b"")
                    if extra:  # a sloppy broker (the librdkafka mock's Metadata v13 does this)
                        size = int.from_bytes(frame[:4], "big") + len(extra)
                        frame = size.to_bytes(4, "big") + frame[4:] + extra
                    writer.write(frame)
                    await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    def answer(self, request: RequestFrame) -> tuple[Message, int] | None:
        key, version = request.api_key, request.api_version
        if key == 18:
            keys = [
                ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in SUPPORTED.items()
            ]
            if version > SUPPORTED[18][1]:
                return ApiVersionsResponse(error_code=35, api_keys=keys[2:3]), 0
            return ApiVersionsResponse(api_keys=keys), version
        if key == 3:
            brokers = [
                MetadataResponse.MetadataResponseBroker(node_id=n, host=h, port=p)
                for n, h, p in self.peers
            ]
            return MetadataResponse(brokers=brokers, controller_id=self.node_id), version
        if key == 0:
            if request.body is not None and request.body.acks == 0:
                return None
            return ProduceResponse(), version
        if key == 71:
            return GetTelemetrySubscriptionsResponse(push_interval_ms=1000 + self.node_id), 0
        return None


async def start_cluster(n: int = 3) -> list[FakeBroker]:
    brokers = [FakeBroker(node_id=i + 1) for i in range(n)]
    for broker in brokers:
        await broker.start()
    peers = [(b.node_id, "127.0.0.1", b.port) for b in brokers]
    for broker in brokers:
        broker.peers = peers
    return brokers


T = TypeVar("T")


async def served_by(broker: FakeBroker, test: Callable[[BrokerAddress], Awaitable[T]]) -> T:
    """Run `test` against `broker` (as node 1), started for it and stopped after."""
    await broker.start()
    try:
        return await test(BrokerAddress(1, "127.0.0.1", broker.port))
    finally:
        await broker.stop()
