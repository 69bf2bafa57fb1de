"""The simulated client's reactions, one KIP-714 row at a time, driven without sockets or clocks.

Each test feeds `SimClient` the responses a broker would send and checks the next action, as
`fleet.py` would see it: what it sends, and when. Times are plain numbers (seconds).
"""

from __future__ import annotations

import random
import uuid

import pytest

from kconform.codecs.compression import decompress
from kconform.codecs.messages import (
    ApiVersionsResponse,
    GetTelemetrySubscriptionsResponse,
    PushTelemetryResponse,
)
from kconform.codecs.otlp import flatten, parse_metrics_data
from kconform.codecs.wire import ZERO_UUID
from kconform.soak.client import Connect, Disconnect, Finished, Phase, Send, SimClient, Wait
from kconform.soak.payload import make_profile

INSTANCE = uuid.UUID(int=0x1234_5678_9ABC_DEF0_1234_5678_9ABC_DEF0)
INTERVAL_MS = 10_000
T0 = 1_000.0


def api_versions(telemetry: bool = True) -> ApiVersionsResponse:
    keys = [18, 3] + ([71, 72] if telemetry else [])
    entry = ApiVersionsResponse.ApiVersion
    return ApiVersionsResponse(
        error_code=0, api_keys=[entry(api_key=k, min_version=0, max_version=3) for k in keys]
    )


def subscription(**fields: object) -> GetTelemetrySubscriptionsResponse:
    values: dict[str, object] = {
        "error_code": 0, "client_instance_id": INSTANCE, "subscription_id": 7,
        "accepted_compression_types": [4, 3, 1, 2], "push_interval_ms": INTERVAL_MS,
        "telemetry_max_bytes": 1 << 20, "delta_temporality": True,
        "requested_metrics": ["org.apache.kafka."],
    }  # fmt: skip
    values.update(fields)
    return GetTelemetrySubscriptionsResponse(**values)


def pushed(code: int) -> PushTelemetryResponse:
    return PushTelemetryResponse(error_code=code)


def client(index: int = 0, nodes: list[int] | None = None) -> SimClient:
    profile = make_profile(index, seed=1, tag="t")
    return SimClient(profile, nodes or [1, 2, 3], rng=random.Random(index), now=T0)


def connected(c: SimClient, now: float = T0) -> None:
    """Connect and complete the KIP-511 handshake."""
    action = c.next_action(now)
    assert isinstance(action, Connect)
    c.on_connected(now)
    handshake = c.next_action(now)
    assert isinstance(handshake, Send) and handshake.api == "apiversions"
    assert handshake.version == 3
    assert handshake.body.client_software_name == c.profile.software_name
    c.on_response(now, "apiversions", api_versions(), 1.0)


def subscribed(c: SimClient, now: float = T0, **fields: object) -> float:
    """Connect, Get, answer it; returns when the first push is due."""
    connected(c, now)
    get = c.next_action(now)
    assert isinstance(get, Send) and get.api == "get"
    c.on_response(now, "get", subscription(**fields), 1.0)
    return c.wake_at


def push_now(c: SimClient, at: float) -> Send:
    action = c.next_action(at)
    assert isinstance(action, Send) and action.api == "push", action
    return action


def test_first_get_has_a_zero_id_and_later_ones_the_assigned_id() -> None:
    c = client()
    connected(c)
    first = c.next_action(T0)
    assert isinstance(first, Send) and first.body.client_instance_id == ZERO_UUID
    c.on_response(T0, "get", subscription(), 1.0)
    push = push_now(c, c.wake_at)
    c.on_response(c.wake_at, "push", pushed(117), 1.0)
    again = c.next_action(c.wake_at)
    assert isinstance(again, Send) and again.api == "get"
    assert again.body.client_instance_id == INSTANCE
    assert push.body.client_instance_id == INSTANCE and push.body.subscription_id == 7


def test_first_push_is_jittered_between_half_and_one_and_a_half_intervals() -> None:
    delays = []
    for index in range(200):
        c = client(index)
        delays.append(subscribed(c) - T0)
    assert min(delays) >= 0.5 * INTERVAL_MS / 1000
    assert max(delays) <= 1.5 * INTERVAL_MS / 1000
    assert max(delays) - min(delays) > 0.5 * INTERVAL_MS / 1000  # really spread, not constant
    c = client()
    due = subscribed(c)
    assert c.next_action(due - 0.01) == Wait(due)


def test_accepted_push_waits_exactly_one_interval() -> None:
    c = client()
    due = subscribed(c)
    push_now(c, due)
    c.on_response(due, "push", pushed(0), 2.0)
    assert c.wake_at == pytest.approx(due + INTERVAL_MS / 1000)
    assert c.events[-1].kind == "push" and c.events[-1].code == 0 and c.events[-1].stamp > 0


@pytest.mark.parametrize("code", [117, 76])
def test_unknown_subscription_and_unsupported_compression_get_again_at_once(code: int) -> None:
    c = client()
    due = subscribed(c)
    push_now(c, due)
    c.on_response(due, "push", pushed(code), 1.0)
    action = c.next_action(due)
    assert isinstance(action, Send) and action.api == "get"
    c.on_response(due, "get", subscription(subscription_id=8), 1.0)
    later = push_now(c, c.wake_at)
    assert later.body.subscription_id == 8
    assert 0.5 * INTERVAL_MS / 1000 <= c.wake_at - due <= 1.5 * INTERVAL_MS / 1000


def test_throttled_push_backs_off_one_interval_then_gets() -> None:
    c = client()
    due = subscribed(c)
    push_now(c, due)
    c.on_response(due, "push", pushed(89), 1.0)
    assert c.phase is Phase.WAIT_GET
    assert c.next_action(due + 1) == Wait(due + INTERVAL_MS / 1000)
    action = c.next_action(due + INTERVAL_MS / 1000)
    assert isinstance(action, Send) and action.api == "get"


def test_throttled_get_backs_off_one_interval() -> None:
    c = client()
    due = subscribed(c)
    push_now(c, due)
    c.on_response(due, "push", pushed(117), 1.0)
    c.next_action(due)
    c.on_response(due, "get", GetTelemetrySubscriptionsResponse(error_code=89), 1.0)
    assert c.phase is Phase.WAIT_GET and c.wake_at == pytest.approx(due + INTERVAL_MS / 1000)


def test_telemetry_too_large_halves_the_payload_and_pushes_after_an_interval() -> None:
    c = client()
    due = subscribed(c)
    before = push_now(c, due)
    c.on_response(due, "push", pushed(118), 1.0)
    assert c.phase is Phase.WAIT_PUSH  # no new Get: the subscription still holds
    retry = push_now(c, due + INTERVAL_MS / 1000)
    size = len(decompress(bytes(before.body.metrics), 4, max_size=1 << 20))
    smaller = len(decompress(bytes(retry.body.metrics), 4, max_size=1 << 20))
    assert smaller < size


@pytest.mark.parametrize("code", [42, 87, 35, 99])
def test_invalid_request_record_and_unknown_codes_stop_telemetry_for_good(code: int) -> None:
    c = client()
    due = subscribed(c)
    push_now(c, due)
    c.on_response(due, "push", pushed(code), 1.0)
    assert c.phase is Phase.IDLE and c.stopped == f"push_{code}"
    assert isinstance(c.next_action(due + 1e6), Wait)  # nothing more to send
    c.on_disconnected(due + 1, "lost")  # a reconnect does not bring it back
    reconnect_at = c.wake_at
    connected(c, reconnect_at)
    assert c.phase is Phase.IDLE
    assert isinstance(c.next_action(reconnect_at + 1e6), Wait)


def test_empty_requested_metrics_gets_again_after_an_interval_without_pushing() -> None:
    c = client()
    connected(c)
    c.next_action(T0)
    c.on_response(T0, "get", subscription(requested_metrics=[]), 1.0)
    assert c.phase is Phase.WAIT_GET and c.wake_at == T0 + INTERVAL_MS / 1000


@pytest.mark.parametrize("delta", [True, False])
def test_payload_is_otlp_compressed_with_the_first_accepted_type(delta: bool) -> None:
    c = client()
    due = subscribed(c, accepted_compression_types=[3, 4], delta_temporality=delta)
    push = push_now(c, due)
    assert push.body.compression_type == 3
    points = flatten(parse_metrics_data(decompress(bytes(push.body.metrics), 3, max_size=1 << 20)))
    assert points and all(p.name.startswith("org.apache.kafka.") for p in points)
    sums = [p for p in points if p.kind == "sum"]
    assert sums and {p.temporality for p in sums} == {"delta" if delta else "cumulative"}
    assert len({p.time_unix_nano for p in points}) == 1  # one stamp names the push


def test_no_accepted_type_means_uncompressed() -> None:
    c = client()
    push = push_now(c, subscribed(c, accepted_compression_types=[]))
    assert push.body.compression_type == 0
    assert parse_metrics_data(bytes(push.body.metrics)).resource_metrics


def test_clean_close_sends_one_terminating_push_then_disconnects() -> None:
    c = client()
    due = subscribed(c)
    c.close()
    final = push_now(c, due - 5)  # immediately, not at the next interval
    assert final.body.terminating
    c.on_response(due - 5, "push", pushed(0), 1.0)
    assert c.next_action(due) == Finished()
    assert [e.detail for e in c.events if e.kind == "life"][-1] == "closed"


def test_close_without_a_loaded_subscription_sends_nothing() -> None:
    c = client()
    connected(c)
    c.close()
    assert c.next_action(T0) == Disconnect(False)
    assert c.next_action(T0) == Finished()


def test_kill_closes_the_socket_without_a_terminating_push() -> None:
    c = client()
    subscribed(c)
    c.close(kill=True)
    assert c.next_action(T0) == Disconnect(True)
    assert not [e for e in c.events if e.kind == "push"]


def test_lost_connection_reconnects_with_backoff_and_gets_with_its_id() -> None:
    c = client(nodes=[1, 2])
    due = subscribed(c)
    push_now(c, due)
    c.on_disconnected(due, "lost")  # the push in flight is lost with it
    assert c.phase is Phase.DISCONNECTED and 0.04 <= c.wake_at - due <= 0.06
    action = c.next_action(c.wake_at)
    assert isinstance(action, Connect)
    c.on_connect_failed(c.wake_at, "refused")  # broker down: back off longer, try the other
    assert isinstance(c.next_action(c.wake_at), Connect)
    assert c.node != action.node
    c.on_connected(c.wake_at)
    c.next_action(c.wake_at)
    c.on_response(c.wake_at, "apiversions", api_versions(), 1.0)
    get = c.next_action(c.wake_at)
    assert isinstance(get, Send) and get.body.client_instance_id == INSTANCE


def test_move_reconnects_to_another_broker() -> None:
    c = client(nodes=[1, 2, 3])
    due = subscribed(c)
    first = c.node
    c.move()
    assert c.next_action(due) == Disconnect(False)
    action = c.next_action(due)
    assert isinstance(action, Connect) and action.node != first


def test_broker_without_telemetry_gets_no_requests() -> None:
    c = client()
    c.next_action(T0)
    c.on_connected(T0)
    c.next_action(T0)
    c.on_response(T0, "apiversions", api_versions(telemetry=False), 1.0)
    assert c.phase is Phase.IDLE and c.stopped == "no_telemetry"


def test_profiles_are_a_mix_of_real_world_software() -> None:
    names = {make_profile(i, seed=3, tag="t").software_name for i in range(300)}
    assert {"apache-kafka-java", "librdkafka"} <= names and len(names) >= 5
    assert make_profile(5, seed=3, tag="t") == make_profile(5, seed=3, tag="t")
