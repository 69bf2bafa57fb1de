"""KIP-1242 on the broker: ApiVersions v5's ClusterId and NodeId, and REBOOTSTRAP_REQUIRED for a
client that reached another node than the one it named.

Spec: Apache Kafka 4.4.0 ApiVersionsRequest.json v5 ("Provide both ClusterId and NodeId, if
known"; "Version 5 introduces ClusterId and NodeId checking and REBOOTSTRAP_REQUIRED error"),
`ApiVersionsRequest.isValid`, `KafkaApis.handleApiVersionsRequest`; §B.5. A broker that
advertises ApiVersions below v5 has none of it: `unsupported`, read from its own answer.
"""

from __future__ import annotations

import uuid
from base64 import urlsafe_b64encode
from dataclasses import dataclass
from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import ApiVersionsRequest, MetadataRequest
from kconform.engine.check import Check, present
from kconform.engine.model import Family, Level, case
from kconform.errors import PreconditionUnmet, Unsupported
from kconform.fixtures.connection import ConnectionClosed, KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.types import Shown
from kconform.suites.broker.helpers import err

SPEC = ("Apache 4.4.0 ApiVersionsRequest.json v5 (KIP-1242); ApiVersionsRequest.isValid; "
        "KafkaApis.handleApiVersionsRequest; §B.5")  # fmt: skip
API_VERSIONS = 18
METADATA = 3
V5 = 5
NEEDS_V5 = (Shown.APIVERSIONS_V5,)  # an older range is `unsupported`, read from its answer


@dataclass(frozen=True)
class Identity:
    """Who the broker behind broker 0's address says it is, and a node id that is not it."""

    cluster_id: str
    node_id: int
    other_node_id: int


def _other_cluster_id(cluster_id: str) -> str:
    """A Kafka Uuid string (22 url-safe base64 characters) that is not `cluster_id`."""
    while True:
        text = urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if text != cluster_id:
            return text


async def needs_v5(check: Check, conn: KafkaConnection) -> dict[int, tuple[int, int]]:
    """The ranges the broker advertises at v0; `unsupported` below ApiVersions v5, read from
    that answer and never from a release name."""
    response = await conn.request(ApiVersionsRequest(), 0)
    ranges = {k.api_key: (k.min_version, k.max_version) for k in response.body.api_keys}
    own = ranges.get(API_VERSIONS)
    check.observe("ApiVersions range advertised at v0",
                  None if own is None else f"v{own[0]}-v{own[1]}")  # fmt: skip
    if own is None or own[1] < V5:
        name = check.target.name if check.target is not None else "the broker"
        top = "no ApiVersions entry" if own is None else f"ApiVersions up to v{own[1]}"
        raise Unsupported(f"{name} advertises {top}; ClusterId/NodeId need v5 (KIP-1242)")
    return ranges


async def identity(check: Check, target: BrokerTarget) -> tuple[KafkaConnection, Identity]:
    """Broker 0's cluster id and node id from its own Metadata answer (v2+ carries ClusterId)."""
    conn = await check.connect()
    ranges = await needs_v5(check, conn)
    low, high = ranges.get(METADATA, (0, -1))
    codec = MetadataRequest.valid_versions
    version = min(high, codec.high or high)
    if version < max(2, low):
        raise PreconditionUnmet(
            f"{target.name} answers Metadata only at v{low}-v{high}: "
            "none with ClusterId (v2+) to learn its cluster id from"
        )
    body = (await conn.request(MetadataRequest(topics=[]), version)).body
    if not body.cluster_id:
        raise PreconditionUnmet(f"{target.name}'s Metadata v{version} gives no ClusterId")
    address = target.brokers[0]
    listed = {b.node_id: (b.host, b.port) for b in body.brokers}
    hosts = (address.host, "localhost", "127.0.0.1")
    by_address = [n for n, (host, port) in listed.items() if port == address.port and host in hosts]
    node_id = by_address[0] if len(by_address) == 1 else address.node_id
    check.observe("Metadata: ClusterId, brokers", f"{body.cluster_id}, {sorted(listed)}")
    if node_id not in listed:
        raise PreconditionUnmet(f"{target.name}: no broker of its Metadata {listed} is the one "
                                f"at {address.host}:{address.port}")  # fmt: skip
    others = sorted(set(listed) - {node_id})
    other = others[0] if others else node_id + 1
    return conn, Identity(str(body.cluster_id), node_id, other)


async def ask_v5(check: Check, conn: KafkaConnection, cluster_id: str | None, node_id: int) -> Any:
    """ApiVersions v5 naming (`cluster_id`, `node_id`); a closed connection is no answer."""
    body = ApiVersionsRequest(client_software_name="kconform", client_software_version="1.0",
                              cluster_id=cluster_id, node_id=node_id)  # fmt: skip
    try:
        response = await conn.request(body, V5)
    except ConnectionClosed as exc:
        check.expect("answered", "an ApiVersions v5 response", f"connection closed ({exc})", False)
        return None
    check.expect("response read at v5", V5, response.version)
    return response.body


@case(
    "kip1242.apiversions.identity_matched",
    rules=["kip1242.apiversions.identity_matched"],
    title="ApiVersions v5 naming the broker's own cluster id and node id is answered NONE",
    spec=SPEC,
    level=Level.MUST,
    needs_shown=NEEDS_V5,
)
async def test_identity_matched(target: BrokerTarget, check: Check) -> None:
    conn, me = await identity(check, target)
    body = await ask_v5(check, conn, me.cluster_id, me.node_id)
    if body is not None:
        check.expect("ErrorCode", "NONE (0)", err(body.error_code))
        keys = {k.api_key for k in body.api_keys}
        check.expect("ApiKeys lists ApiVersions (18)", True, API_VERSIONS in keys)


@case(
    "kip1242.apiversions.identity_absent",
    rules=["kip1242.apiversions.identity_absent"],
    title="ApiVersions v5 with neither ClusterId nor NodeId (a client that knows neither) is "
    "answered NONE",
    spec=SPEC,
    level=Level.MUST,
    needs_shown=NEEDS_V5,
)
async def test_identity_absent(target: BrokerTarget, check: Check) -> None:
    conn = await check.connect()
    await needs_v5(check, conn)
    body = await ask_v5(check, conn, None, -1)
    if body is not None:
        check.expect("ErrorCode", "NONE (0)", err(body.error_code))
        keys = {k.api_key for k in body.api_keys}
        check.expect("ApiKeys lists ApiVersions (18)", True, API_VERSIONS in keys)


def _half_case(case_id: str, keeps: str) -> Any:
    @case(
        case_id,
        rules=["kip1242.apiversions.identity_pair"],
        title=f"ApiVersions v5 with its {keeps} but not the other is answered INVALID_REQUEST",
        spec=f"{SPEC} ('Provide both ClusterId and NodeId')",
        level=Level.MUST,
        needs_shown=NEEDS_V5,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        conn, me = await identity(check, target)
        cluster_id, node_id = (me.cluster_id, -1) if keeps == "ClusterId" else (None, me.node_id)
        body = await ask_v5(check, conn, cluster_id, node_id)
        if body is not None:
            check.expect("ErrorCode", err(ErrorCode.INVALID_REQUEST), err(body.error_code))

    return test


HALF = Family(_half_case)
test_cluster_id_only = HALF("kip1242.apiversions.cluster_id_only", "ClusterId")
test_node_id_only = HALF("kip1242.apiversions.node_id_only", "NodeId")


def _misrouted_case(case_id: str, wrong: str) -> Any:
    @case(
        case_id,
        rules=["kip1242.apiversions.misrouted_rebootstrap"],
        title=f"ApiVersions v5 naming another {wrong} than the broker's is answered "
        "REBOOTSTRAP_REQUIRED",
        spec=f"{SPEC} ('ClusterId and NodeId checking and REBOOTSTRAP_REQUIRED error')",
        level=Level.MUST,
        needs_shown=NEEDS_V5,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        conn, me = await identity(check, target)
        if wrong == "cluster":
            cluster_id, node_id = _other_cluster_id(me.cluster_id), me.node_id
        else:
            cluster_id, node_id = me.cluster_id, me.other_node_id
        check.observe("named in the request", f"ClusterId {cluster_id}, NodeId {node_id}")
        body = await ask_v5(check, conn, cluster_id, node_id)
        if body is None:
            return
        check.expect("ErrorCode", err(ErrorCode.REBOOTSTRAP_REQUIRED), err(body.error_code))
        check.observe("ApiKeys in the error answer", len(present(body, "the body").api_keys))

    return test


MISROUTED = Family(_misrouted_case)
test_other_cluster = MISROUTED("kip1242.apiversions.other_cluster", "cluster")
test_other_node = MISROUTED("kip1242.apiversions.other_node", "node")
