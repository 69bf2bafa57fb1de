"""Every mutant provably changes behaviour: one short scenario each, run with and without it."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kconform.codecs.compression import compress
from kconform.codecs.messages import (
    ApiVersionsRequest,
    DescribeConfigsRequest,
    ListConfigResourcesRequest,
    ProduceRequest,
)
from kconform.codecs.wire import ZERO_UUID
from kconform.engine.payloads import receiver_throw_payload
from kconform.fixtures.reference import MUTANTS, ReferenceBroker, RequestContext, check_mutants
from kconform.fixtures.reference.kip977 import partition_counts
from kconform.fixtures.reference.scenario import (
    BACKEND_APIS,
    Session,
    metrics_payload,
    raw_request_frame,
)
from kconform.rules import RULES

PAYLOAD = metrics_payload(2)
BIG = metrics_payload(4, padding=2000)  # ~8 KB, compresses to a few hundred bytes


def session(
    mutants: frozenset[str],
    seed: int = 1,
    subscriptions: dict[str, dict[str, str]] | None = None,
    conn: str = "conn-1",
    **options: Any,
) -> Session:
    broker = ReferenceBroker(BACKEND_APIS, mutants=mutants, rng=random.Random(seed), **options)
    s = Session(broker, RequestContext(conn))
    subs = (
        {"sub": {"metrics": "*", "interval.ms": "1000"}} if subscriptions is None else subscriptions
    )
    for name, configs in subs.items():
        s.set_subscription(name, configs)
    return s


def pushed(m: frozenset[str], *pushes: dict[str, object], **options: Any) -> object:
    """Get, then the pushes in order; the last push's error code."""
    s = session(m, **options)
    got = s.get()
    result: object = None
    for push in pushes:
        args: dict[str, object] = {"subscription_id": got.subscription_id, "metrics": PAYLOAD}
        args.update(push)
        result = s.push(got.client_instance_id, **args)[0]
    return result


def after_unknown_subscription(m: frozenset[str]) -> object:
    s = session(m)
    got = s.get()
    s.set_subscription("sub", {"metrics": "org.a.", "interval.ms": "1000"})
    s.push(got.client_instance_id, got.subscription_id, PAYLOAD)
    return s.get(got.client_instance_id).error_code


def terminating_retry(m: frozenset[str]) -> object:
    s = session(m)
    got = s.get()
    s.set_subscription("sub", {"metrics": "org.a.", "interval.ms": "1000"})
    s.push(got.client_instance_id, got.subscription_id, PAYLOAD, terminating=True)
    fresh = s.get(got.client_instance_id)
    return s.push(got.client_instance_id, fresh.subscription_id, PAYLOAD, terminating=True)[0]


def size_on_wire(m: frozenset[str]) -> object:
    wire = compress(BIG, 4)
    return pushed(m, {"metrics": wire, "compression_type": 4}, telemetry_max_bytes=len(wire))


def two_ids(m: frozenset[str]) -> object:
    """Two clients' first Gets: how many instances the broker ends up with."""
    s = session(m)
    s.get()
    Session(s.broker, RequestContext("conn-2"), now_ms=s.now_ms).get()
    return s.broker.telemetry.instance_count()


def unknown_instance(m: frozenset[str]) -> object:
    origin = session(frozenset()).get()
    return session(m, seed=2).push(origin.client_instance_id, origin.subscription_id, PAYLOAD)[0]


def throttled_get_is_bare(m: frozenset[str]) -> object:
    s = session(m)
    got = s.get()
    again = s.get(got.client_instance_id)
    return (again.error_code, again.client_instance_id == ZERO_UUID, again.push_interval_ms)


def alive_at_60s(m: frozenset[str]) -> object:
    s = session(m, subscriptions={"sub": {"metrics": "*", "interval.ms": "30000"}})
    s.get()
    return s.broker.telemetry.instance_count(s.now_ms + 60_000)


def requested(subscriptions: dict[str, dict[str, str]], client_id: str = "kconform") -> Callable[
    [frozenset[str]], object
]:  # fmt: skip
    def run(m: frozenset[str]) -> object:
        s = session(m, subscriptions=subscriptions)
        s.client_id = client_id
        got = s.get()
        return sorted(got.requested_metrics), got.push_interval_ms

    return run


def same_id_on_two_brokers(m: frozenset[str]) -> object:
    one = session(m, seed=1).get()
    return session(m, seed=2).get(one.client_instance_id).subscription_id == one.subscription_id


def config_error(configs: dict[str, str]) -> Callable[[frozenset[str]], object]:
    def run(m: frozenset[str]) -> object:
        return session(m, subscriptions={}).alter(16, "s", {k: (0, v) for k, v in configs.items()})[
            0
        ]

    return run


def listed_for_broker_type(m: frozenset[str]) -> object:
    """What ListConfigResources v1 lists when asked for BROKER (4) only, with a subscription."""
    s = session(m, subscriptions={"s": {"metrics": "*"}})
    outcome = s.send(ListConfigResourcesRequest(resource_types=[4]), 1)
    assert outcome.response_body is not None
    return sorted(r.resource_type for r in outcome.response_body.config_resources)


def described_keys(m: frozenset[str]) -> object:
    """The keys DescribeConfigs v4 lists for a subscription that sets `metrics` only."""
    s = session(m, subscriptions={"s": {"metrics": "*"}})
    req = DescribeConfigsRequest
    resource = req.DescribeConfigsResource(resource_type=16, resource_name="s",
                                           configuration_keys=None)  # fmt: skip
    outcome = s.send(req(resources=[resource]), 4)
    assert outcome.response_body is not None
    (result,) = outcome.response_body.results
    return sorted(c.name for c in result.configs)


def api_versions(name: str) -> Callable[[frozenset[str]], object]:
    def run(m: frozenset[str]) -> object:
        outcome = session(m, subscriptions={}).api_versions(3, name, "1.0")
        return outcome.error_code, outcome.close_after

    return run


def api_versions_v5(cluster_id: str | None, node_id: int) -> Callable[[frozenset[str]], object]:
    """The error code of ApiVersions v5 naming (`cluster_id`, `node_id`) at broker 0 of cluster
    "c" (KIP-1242, §B.5)."""

    def run(m: frozenset[str]) -> object:
        s = session(m, subscriptions={})
        s.broker.cluster_id = "c"
        body = ApiVersionsRequest(client_software_name="a", client_software_version="1",
                                  cluster_id=cluster_id, node_id=node_id)  # fmt: skip
        return s.send(body, 5).error_code

    return run


def fallback_keys(m: frozenset[str]) -> object:
    outcome = session(m, subscriptions={}).send_frame(raw_request_frame(18, 32767, b"\x00"))
    assert outcome.response_body is not None
    return sorted(k.api_key for k in outcome.response_body.api_keys)


def telemetry_advertised(m: frozenset[str]) -> object:
    s = session(m, subscriptions={}, telemetry_enabled=False)
    assert s.api_versions().response_body is not None
    return 71 in {k.api_key for k in s.api_versions().response_body.api_keys}


def verbosity(m: frozenset[str]) -> object:
    return session(m, subscriptions={}).alter(4, "0", {"metrics.verbosity": (0, "[{]")})[0]


def messages_in(m: frozenset[str]) -> object:
    s = session(m, subscriptions={})
    s.alter(4, "0", {"metrics.verbosity": (0, json.dumps(
        [{"level": "high", "filters": [{"topics": ["t"]}]}]))})  # fmt: skip
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    for i in range(5):
        builder.append(i, timestamp=0, key=None, value=b"v", headers=[])
    req = ProduceRequest
    part = req.PartitionProduceData(index=0, records=bytes(builder.build()))
    s.broker.observe_produce(
        req(topic_data=[req.TopicProduceData(name="t", partition_data=[part])]), 9
    )
    return partition_counts(s.broker.partition_meters(), "MessagesInPerSec", "t")


def exported_of_100(m: frozenset[str]) -> object:
    """100 accepted pushes, one per interval: how many reached the sink."""
    s = session(m)
    got = s.get()
    exported = 0
    for _ in range(100):
        code, sink = s.push(got.client_instance_id, got.subscription_id, PAYLOAD)
        exported += code == 0 and sink is not None
        s.advance(1000)
    return exported


def push_after_change(m: frozenset[str]) -> object:
    """A subscription change, the Get that follows, a push with the id that Get gave."""
    s = session(m)
    got = s.get()
    s.set_subscription("sub", {"metrics": "org.a.", "interval.ms": "1000"})
    fresh = s.get(got.client_instance_id)
    return s.push(got.client_instance_id, fresh.subscription_id, PAYLOAD)[0]


SCENARIOS: dict[str, tuple[Callable[[frozenset[str]], object], object]] = {
    "no_push_throttle": (lambda m: pushed(m, {}, {}), 89),
    "no_get_throttle": (lambda m: (lambda s: s.get(s.get().client_instance_id).error_code)(
        session(m)), 89),
    "get_throttled_after_unknown_subscription": (after_unknown_subscription, 0),
    "terminating_twice_allowed": (
        lambda m: pushed(m, {"terminating": True}, {"terminating": True}), 42),
    "terminating_flag_on_failed_push": (terminating_retry, 0),
    "subscription_id_ignored": (lambda m: pushed(m, {"subscription_id": 12345}), 117),
    "no_size_limit": (lambda m: pushed(m, {"metrics": BIG}, telemetry_max_bytes=1000), 118),
    "size_limit_uncompressed": (size_on_wire, 0),
    "compression_type_unchecked": (lambda m: pushed(m, {"compression_type": 9}), 76),
    "none_compression_rejected": (lambda m: pushed(m, {"compression_type": 0}), 0),
    "bomb_accepted": (lambda m: pushed(m, {"metrics": compress(BIG, 4), "compression_type": 4},
                                       max_decompressed_bytes=5000), 118),
    "invalid_record_accepted": (lambda m: pushed(m, {"metrics": b"test-data"}), 87),
    "receiver_failure_swallowed": (lambda m: pushed(m, {"metrics": receiver_throw_payload()}), 87),
    "reserved_instance_id_accepted": (
        lambda m: session(m).push(ZERO_UUID, 0, PAYLOAD)[0], 42),
    "instance_id_reused_for_null": (two_ids, 2),
    "zero_instance_id_issued": (lambda m: session(m).get().client_instance_id == ZERO_UUID, False),
    "unknown_instance_push_rejected": (unknown_instance, 0),
    "throttled_get_fields_filled": (throttled_get_is_bare, (89, True, 0)),
    "cache_expiry_ignores_interval": (alive_at_60s, 1),
    "subscriptions_never_applied": (
        requested({"s": {"metrics": "org.a.", "interval.ms": "1000", "match": "client_id=a"}}, "a"),
        (["org.a."], 1000)),
    "match_not_anchored": (requested({"s": {"metrics": "*", "match": "client_id=app"}}, "my-app-1"),
                           ([], 300000)),
    "match_absent_selects_none": (requested({"s": {"metrics": "org.a.", "interval.ms": "1000"}}),
                                  (["org.a."], 1000)),
    "metrics_star_not_collapsed": (requested({"a": {"metrics": "*"}, "b": {"metrics": "org.a."}}),
                                   (["*"], 300000)),
    "interval_not_minimum": (
        requested({"a": {"interval.ms": "1000"}, "b": {"interval.ms": "5000"}}), ([], 1000)),
    "subscription_id_unstable": (same_id_on_two_brokers, True),
    "empty_subscription_pushes_all": (requested({}), ([], 300000)),
    "config_interval_unchecked": (config_error({"interval.ms": "50"}), 42),
    "config_unknown_key_accepted": (config_error({"colour": "red"}), 42),
    "list_types_ignored": (listed_for_broker_type, []),
    "describe_omits_defaults": (described_keys, ["interval.ms", "match", "metrics"]),
    "kip1242_half_pair_accepted": (api_versions_v5(None, 0), 42),
    "kip1242_absent_refused": (api_versions_v5(None, -1), 0),
    "kip1242_own_refused": (api_versions_v5("c", 0), 0),
    "kip1242_misrouted_served": (api_versions_v5("other", 0), 129),
    "software_name_unchecked": (api_versions("kafka_python"), (42, False)),
    "invalid_software_name_closes": (api_versions("-bad"), (42, False)),
    "apiversions_no_fallback": (fallback_keys, [18]),
    "fallback_lists_all_keys": (fallback_keys, [18]),
    "telemetry_keys_always_advertised": (telemetry_advertised, False),
    "kip977_verbosity_unchecked": (verbosity, 40),
    "kip977_partition_miscount": (messages_in, {0: 5}),
    "sink_drops_every_100th": (exported_of_100, 100),
    "subscription_id_kept_after_change": (push_after_change, 0),
}  # fmt: skip


def test_every_mutant_has_a_scenario() -> None:
    assert SCENARIOS.keys() == MUTANTS.keys()


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_changes_behaviour(name: str) -> None:
    scenario, correct = SCENARIOS[name]
    assert scenario(frozenset()) == correct
    assert scenario(frozenset({name})) != correct


def test_registry_entries_cite_their_rule() -> None:
    assert len(MUTANTS) >= 20
    modules = {"apiversions", "telemetry", "configs", "kip977"}
    for name, mutant in MUTANTS.items():
        assert mutant.name == name and mutant.rule.strip() and mutant.effect.strip()
        assert mutant.module in modules
        assert mutant.rule in RULES  # the rule book holds the sentence it breaks


def test_unknown_mutant_names_are_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="no_push_throttle") as info:
        check_mutants({"no_push_throttle", "made_up"})
    assert "made_up" in str(info.value)
    with pytest.raises(ValueError):
        ReferenceBroker(BACKEND_APIS, mutants={"made_up"})
    assert check_mutants(["bomb_accepted"]) == frozenset({"bomb_accepted"})


def test_mutants_combine() -> None:
    both = frozenset({"no_push_throttle", "subscription_id_ignored"})
    assert pushed(both, {}, {"subscription_id": uuid.uuid4().int % 1000}) == 0
