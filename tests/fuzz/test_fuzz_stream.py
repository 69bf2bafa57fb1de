"""Pipelined request fuzzing (issue 16): each request of a batch is judged as if it were alone.

Fake brokers from tests/support: a well-behaved one that counts its connections, and one that
reads ahead like the reference's proxy (it takes every frame a read brings and, on one it
closes for, drops the answers still owed to the frames before it). Patience is scaled down.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from fake_broker import FakeBroker, served_by
from hypothesis import find
from hypothesis import strategies as st

from kconform.codecs.framing import FrameReader, decode_request, encode_response
from kconform.codecs.schema import Message
from kconform.engine.fuzz import oracle, stream
from kconform.engine.fuzz.inputs import FuzzRequest
from kconform.fixtures.targets.base import BrokerAddress
from kconform.fixtures.wirelog import WireLog

QUICK = oracle.Patience(base=0.3, seconds_per_mib=16.0, cap=2.0, grace=0.2, busy_limit=3.0)


def get(correlation_id: int) -> FuzzRequest:
    """A GetTelemetrySubscriptions v0 (null client id, no header tags, zero id, no tags)."""
    payload = bytes.fromhex("00470000") + correlation_id.to_bytes(4, "big") + b"\xff\xff"
    return FuzzRequest(f"Get {correlation_id}", payload + bytes(18))


UNKNOWN_KEY = FuzzRequest("api key 1000", bytes.fromhex("03e8000000000063ffff"))
"""A header naming an api key no Kafka release assigns: a broker closes (§B.4)."""


@dataclass
class CountingBroker(FakeBroker):
    """Counts connections; closes at once, without answering anything it has read but not yet
    answered, when a read brings a frame it closes for (unknown api key, or a Get whose
    correlation id is in `close_on`)."""

    connections: int = 0
    close_on: frozenset[int] = frozenset()
    open_now: int = 0
    most_open: int = 0  # connections open at the same time, at most

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            await self._answer_all(reader, writer)
        finally:
            self.open_now -= 1

    async def _answer_all(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        frames = FrameReader()
        try:
            while data := await reader.read(65536):
                requests = [decode_request(p, strict=False) for p in frames.feed(data)]
                if any(self._closes_for(r.api_key, r.header.correlation_id) for r in requests):
                    return
                for request in requests:
                    answer = self.answer(request)
                    if answer is not None:
                        writer.write(_encode(answer, request.header.correlation_id))
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    def _closes_for(self, api_key: int, correlation_id: int) -> bool:
        return api_key not in (18, 71) or correlation_id in self.close_on


def _encode(answer: tuple[Message, int], correlation_id: int) -> bytes:
    body, version = answer
    return encode_response(body, version, correlation_id)


def _run(broker: FakeBroker, requests: list[FuzzRequest], lanes: int = 1) -> stream.Batch:
    return asyncio.run(
        served_by(broker, lambda a: stream.run_batch(a, requests, QUICK, WireLog(), "t", lanes))
    )


def test_a_batch_goes_on_one_connection_and_every_request_is_judged() -> None:
    broker = CountingBroker(node_id=1)
    batch = _run(broker, [get(n) for n in range(40)])
    assert batch.failed is None and len(batch.outcomes) == 40
    assert {o.kind for o in batch.outcomes.values()} == {"answered"}
    assert broker.connections == 2  # the pipeline, and the liveness check after the batch
    assert batch.liveness is not None and batch.liveness.alive and batch.liveness_checks == 1


def test_lanes_deal_a_batch_out_to_connections_open_at_once_each_judged_alone() -> None:
    broker = CountingBroker(node_id=1)
    requests = [get(n) for n in range(1, 31)]
    requests[13] = UNKNOWN_KEY
    batch = _run(broker, requests, lanes=3)
    kinds = [batch.outcomes[i].kind for i in range(30)]
    assert kinds == ["answered"] * 13 + ["closed"] + ["answered"] * 16
    assert batch.failed is None and batch.closes == 1
    assert broker.most_open >= 2  # one lane at a time would never have two open
    assert broker.connections == 3 + 1 + 1  # the lanes, one after the close, the liveness check


def test_a_close_is_the_answer_of_the_one_request_open_on_a_broker_that_reads_ahead() -> None:
    """The frame a broker closes for goes in its turn (the codec cannot read it as a known
    request), so the close is its outcome and the requests around it are still answered."""
    broker = CountingBroker(node_id=1)
    batch = _run(broker, [get(1), get(2), UNKNOWN_KEY, get(3), get(4)])
    kinds = [batch.outcomes[i].kind for i in range(5)]
    assert kinds == ["answered", "answered", "closed", "answered", "answered"]
    assert batch.failed is None and batch.closes == 1
    assert batch.liveness_checks == 2  # first on the new connection, and after the batch


def test_an_unexpected_close_sends_every_request_it_left_unclear_alone() -> None:
    """A request the codec reads closes the connection with others outstanding: which one it
    closed on is unclear, so each of them is judged on its own connection."""
    broker = CountingBroker(node_id=1, close_on=frozenset({3}))
    batch = _run(broker, [get(n) for n in range(1, 7)])
    kinds = [batch.outcomes[i].kind for i in range(6)]
    assert kinds == ["answered", "answered", "closed", "answered", "answered", "answered"]
    assert batch.failed is None


def test_a_one_request_batch_is_judged_the_old_way() -> None:
    broker = CountingBroker(node_id=1)
    batch = _run(broker, [get(1)])
    assert batch.outcomes[0].kind == "answered" and batch.liveness_checks == 1
    assert broker.connections == 2  # its own connection, then liveness on another


def test_a_target_that_is_gone_fails_the_batch() -> None:
    async def run() -> stream.Batch:
        broker = CountingBroker(node_id=1)
        await broker.start()
        address = BrokerAddress(1, "127.0.0.1", broker.port)
        await broker.stop()
        return await stream.run_batch(address, [get(1), get(2)], QUICK, WireLog(), "t")

    batch = asyncio.run(run())
    assert batch.failed == 0 and batch.outcomes[0].kind == "unreachable"
    assert batch.liveness is not None and not batch.liveness.alive


def test_a_failing_batch_shrinks_to_the_one_request_that_fails() -> None:
    requests = st.sampled_from([get(1), get(2), UNKNOWN_KEY])
    shrunk = find(stream.batches(requests, stream.Pipelining(64)), lambda b: UNKNOWN_KEY in b)
    assert shrunk == [UNKNOWN_KEY]


def test_only_frames_that_spoil_the_framing_go_alone_and_unreadable_ones_in_turn() -> None:
    assert not stream.alone(get(1)) and not stream.risky(get(1))
    assert stream.risky(UNKNOWN_KEY) and not stream.alone(UNKNOWN_KEY)
    assert stream.alone(FuzzRequest("promises more", get(1).payload, size=99, eof=True))
    assert stream.alone(FuzzRequest("too short", get(1).payload[:5]))
