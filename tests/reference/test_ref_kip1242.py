"""§B.5: the reference broker's KIP-1242 checks of ApiVersions v5's ClusterId and NodeId, in
the order `KafkaApis.handleApiVersionsRequest` makes them (Apache 4.4.0)."""

from __future__ import annotations

import random

import pytest

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import ApiVersionsRequest
from kconform.fixtures.reference import Outcome, ReferenceBroker, RequestContext
from kconform.fixtures.reference.scenario import BACKEND_APIS, Session

CLUSTER = "Ms1J3RWxT2K3W2dZqgVz2A"
NODE = 2


def session(cluster_id: str | None = CLUSTER, mutants: frozenset[str] = frozenset()) -> Session:
    broker = ReferenceBroker(BACKEND_APIS, rng=random.Random(7), node_id=NODE, mutants=mutants)
    broker.cluster_id = cluster_id
    return Session(broker, RequestContext("conn-1"))


def ask(
    s: Session, cluster_id: str | None, node_id: int, name: str = "a", version: int = 5
) -> Outcome:
    body = ApiVersionsRequest(client_software_name=name, client_software_version="1",
                              cluster_id=cluster_id, node_id=node_id)  # fmt: skip
    return s.send(body, version)


@pytest.mark.parametrize(("cluster_id", "node_id"), [(None, -1), (CLUSTER, NODE)])
def test_no_one_or_this_broker_is_answered_and_registered(
    cluster_id: str | None, node_id: int
) -> None:
    s = session()
    outcome = ask(s, cluster_id, node_id)
    assert (outcome.response_version, outcome.error_code) == (5, ErrorCode.NONE)
    assert s.broker.client_software("conn-1") == ("a", "1")


@pytest.mark.parametrize(("cluster_id", "node_id"), [(CLUSTER, -1), (None, NODE), ("", -1)])
def test_half_a_pair_is_invalid_request(cluster_id: str | None, node_id: int) -> None:
    s = session()
    outcome = ask(s, cluster_id, node_id)
    assert (outcome.response_version, outcome.error_code) == (5, ErrorCode.INVALID_REQUEST)
    assert outcome.rule == "kip1242.apiversions.identity_pair"
    assert s.broker.client_software("conn-1") is None and not outcome.close_after


@pytest.mark.parametrize(("cluster_id", "node_id"), [("other", NODE), (CLUSTER, NODE + 1)])
def test_another_cluster_or_node_is_rebootstrap_required(cluster_id: str, node_id: int) -> None:
    s = session()
    outcome = ask(s, cluster_id, node_id)
    assert (outcome.response_version, outcome.error_code) == (5, ErrorCode.REBOOTSTRAP_REQUIRED)
    assert outcome.rule == "kip1242.apiversions.misrouted_rebootstrap"
    assert outcome.response_body is not None and not outcome.response_body.api_keys
    assert s.broker.client_software("conn-1") is None and not outcome.close_after


def test_invalid_software_is_checked_before_the_cluster() -> None:
    """`isValid` (pair, then name pattern) comes before the cluster check: INVALID_REQUEST."""
    outcome = ask(session(), "other", NODE, name="has space")
    assert outcome.error_code == ErrorCode.INVALID_REQUEST


def test_below_v5_the_fields_do_not_exist() -> None:
    outcome = ask(session(), "other", NODE + 1, version=4)  # not encoded at v4
    assert outcome.error_code == ErrorCode.NONE


def test_a_broker_without_a_cluster_id_checks_the_node_only() -> None:
    s = session(cluster_id=None)
    assert ask(s, "anything", NODE).error_code == ErrorCode.NONE
    assert ask(s, "anything", NODE + 1).error_code == ErrorCode.REBOOTSTRAP_REQUIRED


@pytest.mark.parametrize(
    ("mutant", "cluster_id", "node_id", "pristine", "mutated"),
    [
        ("kip1242_half_pair_accepted", None, NODE, ErrorCode.INVALID_REQUEST, ErrorCode.NONE),
        ("kip1242_absent_refused", None, -1, ErrorCode.NONE, ErrorCode.REBOOTSTRAP_REQUIRED),
        ("kip1242_own_refused", CLUSTER, NODE, ErrorCode.NONE, ErrorCode.REBOOTSTRAP_REQUIRED),
        ("kip1242_misrouted_served", "other", NODE, ErrorCode.REBOOTSTRAP_REQUIRED,
         ErrorCode.NONE),
    ],
)  # fmt: skip
def test_each_mutant_breaks_its_check(
    mutant: str, cluster_id: str | None, node_id: int, pristine: int, mutated: int
) -> None:
    assert ask(session(), cluster_id, node_id).error_code == pristine
    assert ask(session(mutants=frozenset({mutant})), cluster_id, node_id).error_code == mutated
