"""§C.5: instance expiry at max(60 s, 3 x PushIntervalMs), the LRU bound, disconnects."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest

from kconform.codecs.errors import ErrorCode
from kconform.fixtures.reference import ReferenceBroker, RequestContext
from kconform.fixtures.reference.instances import CACHE_MAX_SIZE
from kconform.fixtures.reference.scenario import BACKEND_APIS, Session, metrics_payload

E = ErrorCode


def session(interval: int | None = None, **options: Any) -> Session:
    broker = ReferenceBroker(BACKEND_APIS, rng=random.Random(3), **options)
    s = Session(broker, RequestContext("conn-1"))
    if interval is not None:
        s.set_subscription("sub", {"metrics": "*", "interval.ms": str(interval)})
    return s


@pytest.mark.parametrize(
    ("interval", "expiry"),
    [(100, 60_000), (1000, 60_000), (20_000, 60_000), (30_000, 90_000), (300_000, 900_000)],
)
def test_instance_expires_at_max_of_60s_and_three_intervals(interval: int, expiry: int) -> None:
    s = session(interval)
    got = s.get()
    telemetry = s.broker.telemetry
    assert telemetry.instance_count(s.now_ms + expiry - 1) == 1
    assert telemetry.instance_count(s.now_ms + expiry) == 0
    assert telemetry.instance(got.client_instance_id) is None


def test_expired_instance_forgets_its_terminating_push() -> None:
    s = session(1000)
    got = s.get()
    payload = metrics_payload()
    assert s.push(got.client_instance_id, got.subscription_id, payload, terminating=True)[0] == 0
    s.advance(60_000 - 1)
    again = s.push(got.client_instance_id, got.subscription_id, payload, terminating=True)
    assert again[0] == E.INVALID_REQUEST  # still cached: the flag holds (and re-arms the timer)
    s.advance(60_000)
    fresh = s.push(got.client_instance_id, got.subscription_id, payload, terminating=True)
    assert fresh[0] == E.NONE  # a new instance with the same deterministic SubscriptionId


def test_every_request_rearms_the_timer() -> None:
    s = session(1000)
    got = s.get()
    s.advance(30_000)
    assert s.push(got.client_instance_id, got.subscription_id)[0] == E.NONE
    telemetry = s.broker.telemetry
    assert telemetry.instance_count(s.now_ms + 60_000 - 1) == 1
    assert telemetry.instance_count(s.now_ms + 60_000) == 0


def test_expired_instance_get_is_not_throttled() -> None:
    s = session(30_000)
    got = s.get()
    s.advance(90_000)
    again = s.get(got.client_instance_id)
    assert again.error_code == E.NONE and again.subscription_id == got.subscription_id


def test_lru_bound_evicts_least_recently_used() -> None:
    s = session(1000, cache_max_size=3)
    ids = [s.get().client_instance_id for _ in range(3)]
    s.advance(1000)
    assert s.get(ids[0]).error_code == E.NONE  # ids[0] is now the most recently used
    newcomer = s.get().client_instance_id
    cached = {i.client_instance_id for i in s.broker.telemetry.instances()}
    assert cached == {ids[0], ids[2], newcomer}
    evicted = s.get(ids[1])  # comes back as a new instance: its Get timestamps are gone
    assert evicted.error_code == E.NONE


def test_default_bound_is_16384() -> None:
    assert CACHE_MAX_SIZE == 16384
    s = session()
    first = s.get().client_instance_id
    for _ in range(CACHE_MAX_SIZE):
        s.get()
    assert s.broker.telemetry.instance_count() == CACHE_MAX_SIZE
    assert s.broker.telemetry.instance(first) is None


def test_closing_the_connection_drops_its_instance() -> None:
    s = session(1000)
    got = s.get()
    other = Session(s.broker, RequestContext("conn-2"), now_ms=s.now_ms)
    kept = other.get()
    s.broker.connection_closed("conn-1")
    assert s.broker.telemetry.instance(got.client_instance_id) is None
    assert s.broker.telemetry.instance(kept.client_instance_id) is not None
    assert s.get(got.client_instance_id).error_code == E.NONE  # a cache miss: not throttled


def test_unknown_connection_close_is_harmless() -> None:
    s = session()
    s.broker.connection_closed("never-seen")
    assert s.get(uuid.uuid4()).error_code == E.NONE
