"""The request oracle against fake brokers: slow is not dead, and no answer is owed to a frame
that holds no request (issue 17).

Fake brokers from tests/support play what a real broker does: one that answers late because a
shared network thread is stuck (Apache parsing an AlterConfigs with thousands of equal
resources), one that never answers one api while answering the rest (Apache's duplicate
resource AlterConfigs), one that keeps a half-closed connection open, one that is gone.
Patience is scaled down so each test takes about a second.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import pytest
from fake_broker import FakeBroker, served_by
from hypothesis import HealthCheck, given, settings

from kconform.codecs.framing import RequestFrame
from kconform.codecs.messages import AlterConfigsRequest, RequestHeader
from kconform.codecs.schema import Message
from kconform.engine.fuzz import deviations, oracle
from kconform.engine.fuzz.inputs import FuzzRequest
from kconform.engine.fuzz.mutations import malformed
from kconform.fixtures.targets.base import BrokerAddress
from kconform.fixtures.wirelog import WireLog

QUICK = oracle.Patience(base=0.3, seconds_per_mib=16.0, cap=2.0, grace=0.2, busy_limit=3.0)
GET = FuzzRequest("Get", bytes.fromhex("0047000000000007ffff") + bytes(16))
"""A complete GetTelemetrySubscriptions v0 (zero id, null client id), correlation id 7."""


@dataclass
class StallingBroker(FakeBroker):
    """One network thread for every connection: a request of `stalling_key` occupies it for
    `stall` seconds, and every answer due meanwhile waits (what Apache's processor does while
    it parses a huge request). `silent_keys` are never answered."""

    stalling_key: int = -1
    stall: float = 0.0
    silent_keys: set[int] = field(default_factory=set)
    busy_until: float = 0.0

    def answer(self, request: RequestFrame) -> tuple[Message, int] | None:
        now = time.monotonic()
        if request.api_key == self.stalling_key:
            self.busy_until = max(self.busy_until, now) + self.stall
        self.delays[request.api_key] = max(0.0, self.busy_until - now)  # read right after
        if request.api_key in self.silent_keys:
            return None
        return super().answer(request)


async def _silent_on_eof_server() -> tuple[asyncio.Server, BrokerAddress]:
    """A peer that reads until EOF and then keeps its side of the connection open."""
    held: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        while await reader.read(65536):
            pass
        await asyncio.sleep(3600)

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, BrokerAddress(1, "127.0.0.1", server.sockets[0].getsockname()[1])


def _alter_configs(resources: list[tuple[int, str]], trailing: bytes = b"") -> FuzzRequest:
    body = AlterConfigsRequest(
        resources=[
            AlterConfigsRequest.AlterConfigsResource(resource_type=t, resource_name=n)
            for t, n in resources
        ],
        validate_only=True,
    )
    header = RequestHeader(request_api_key=33, request_api_version=1, correlation_id=3)
    return FuzzRequest("AlterConfigs", header.encode(1) + body.encode(1) + trailing)


# --- which frames are owed an answer -------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "owed"),
    [
        (GET, True),
        (FuzzRequest("short", GET.payload[:5]), False),  # complete, but no correlation id
        (FuzzRequest("empty", b""), False),  # "truncated to 0 of N bytes"
        (FuzzRequest("promises more", GET.payload, size=len(GET.payload) + 8), False),
        (FuzzRequest("negative", GET.payload, size=-1), False),
        (FuzzRequest("first frame short", GET.payload, size=len(GET.payload) - 1), True),
        (FuzzRequest("first frame tiny", GET.payload, size=4), False),
    ],
)
def test_only_a_frame_holding_a_request_is_owed_an_answer(
    request_: FuzzRequest, owed: bool
) -> None:
    assert request_.answerable is owed
    assert (request_.why_unanswerable() == "") is owed


def test_an_incomplete_frame_gets_a_half_close_and_no_answer_is_waited_for() -> None:
    """Issue 17: "truncated to 0 of its 2,115 declared bytes" was called a hang. The oracle now
    half-closes; a peer that keeps the connection open is not wrong."""

    async def run() -> oracle.Outcome:
        server, address = await _silent_on_eof_server()
        try:
            incomplete = FuzzRequest("incomplete", GET.payload, size=2115)
            return await oracle.exchange(address, incomplete, QUICK, WireLog(), "t")
        finally:
            server.close()

    outcome = asyncio.run(run())
    assert outcome.kind == "unanswered" and outcome.problem is None, outcome
    assert "promises 2115 bytes" in outcome.detail
    assert outcome.seconds < QUICK.deadline(2119) + 0.5


def test_a_broker_that_closes_a_headerless_frame_is_fine_too() -> None:
    outcome = asyncio.run(
        served_by(
            FakeBroker(node_id=1),
            lambda address: oracle.exchange(
                address, FuzzRequest("empty", b""), QUICK, WireLog(), "t"
            ),
        )
    )
    assert outcome.kind in ("closed", "unanswered") and outcome.problem is None, outcome


# --- deadlines that grow with size, and slow versus dead ---------------------------------------


def test_the_deadline_grows_with_the_frame_and_is_capped() -> None:
    patience = oracle.Patience()
    assert patience.deadline(0) == patience.base
    assert patience.deadline(64 * 1024) == pytest.approx(patience.base + 1.0)
    assert patience.deadline(1 << 20) == pytest.approx(patience.base + 16.0)
    assert patience.deadline(64 << 20) == patience.cap
    assert patience.longest(1 << 20) > patience.deadline(1 << 20) + patience.busy_limit


def test_a_late_answer_from_a_busy_broker_is_slow_not_a_hang() -> None:
    """The request itself occupies the broker's one network thread for 1 s (deadline 0.3 s):
    the busy check sees new connections wait too, and keeps listening."""
    broker = StallingBroker(node_id=1, stalling_key=71, stall=1.0)
    outcome = asyncio.run(
        served_by(broker, lambda address: oracle.exchange(address, GET, QUICK, WireLog(), "t"))
    )
    assert outcome.kind == "answered" and outcome.problem is None, outcome
    assert outcome.slow and outcome.seconds >= 1.0 > outcome.deadline


def test_no_answer_from_an_idle_broker_is_a_hang_with_its_timings() -> None:
    """Apache's duplicate-resource AlterConfigs: never answered, the rest answered at once."""
    broker = StallingBroker(node_id=1, silent_keys={33})
    request = _alter_configs([(2, "t"), (2, "t")])
    started = time.monotonic()
    outcome = asyncio.run(
        served_by(broker, lambda address: oracle.exchange(address, request, QUICK, WireLog(), "t"))
    )
    assert outcome.kind == "hang" and outcome.problem is not None
    assert "the broker was not busy" in outcome.detail and "deadline 0.3s" in outcome.detail
    assert time.monotonic() - started < QUICK.deadline(0) + QUICK.grace + 1.0  # no long wait
    assert deviations.explain_request(request, outcome.kind) is (
        deviations.ALTER_CONFIGS_DUPLICATE_RESOURCE
    )


def test_a_broker_busy_past_the_limit_is_a_hang_that_says_so() -> None:
    broker = StallingBroker(node_id=1, stalling_key=71, stall=QUICK.busy_limit + 2.0)
    outcome = asyncio.run(
        served_by(broker, lambda address: oracle.exchange(address, GET, QUICK, WireLog(), "t"))
    )
    assert outcome.kind == "hang"
    assert "still busy" in outcome.detail, outcome.detail


def test_liveness_waits_for_a_busy_broker_and_reports_it_slow() -> None:
    broker = StallingBroker(node_id=1, stalling_key=71, stall=1.0)

    async def run(address: BrokerAddress) -> oracle.Liveness:
        stalls = asyncio.ensure_future(oracle.exchange(address, GET, QUICK, WireLog(), "t"))
        await asyncio.sleep(0.05)  # the Get now holds the network thread for 1 s
        try:
            return await oracle.alive(address, QUICK, WireLog())
        finally:
            await stalls

    liveness = asyncio.run(served_by(broker, run))
    assert liveness.alive and liveness.problem is None
    assert liveness.seconds >= 0.9 and liveness.detail.startswith("slow")


def test_a_broker_that_is_gone_fails_liveness() -> None:
    async def run() -> oracle.Liveness:
        broker = FakeBroker(node_id=1)
        await broker.start()
        address = BrokerAddress(1, "127.0.0.1", broker.port)
        await broker.stop()
        return await oracle.alive(address, QUICK, WireLog())

    liveness = asyncio.run(run())
    assert not liveness.alive and "unreachable" in (liveness.problem or "")


# --- naming Apache's known deviation ----------------------------------------------------------


@pytest.mark.parametrize(
    ("resources", "trailing", "named"),
    [
        ([(2, "t"), (2, "t")], b"", True),
        ([(2, "t"), (2, "t")], b"\x00", True),  # Kafka ignores bytes after the body
        ([(-99, "0"), (1, "0")], b"", True),  # both read as ConfigResource.Type.UNKNOWN
        ([(2, "t"), (4, "t")], b"", False),
        ([(16, "a"), (16, "b")], b"", False),
    ],
)
def test_a_hang_on_an_alter_configs_naming_a_resource_twice_is_named(
    resources: list[tuple[int, str]], trailing: bytes, named: bool
) -> None:
    request = _alter_configs(resources, trailing)
    found = deviations.explain_request(request, "hang")
    assert (found is deviations.ALTER_CONFIGS_DUPLICATE_RESOURCE) is named
    assert deviations.explain_request(request, "closed") is None


def test_a_null_resource_list_is_no_duplicate() -> None:
    """Coverage runs ask this of every request they send (to skip what a deviation on record
    explains), malformed ones included: a null array, read leniently, names no resource."""
    header = RequestHeader(request_api_key=33, request_api_version=1, correlation_id=1)
    payload = header.encode(1) + b"\xff\xff\xff\xff" + b"\x01"  # resources: length -1
    assert deviations.explain_request(FuzzRequest("null resources", payload), "hang") is None


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(malformed("configs"))
def test_any_malformed_configs_request_is_read_without_error(request: FuzzRequest) -> None:
    deviations.explain_request(request, "hang")  # raises nothing, whatever the bytes
