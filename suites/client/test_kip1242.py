"""KIP-1242 on the client side: the cluster and node a client names in ApiVersions v5, and what
it does when the broker answers that it is not that node (REBOOTSTRAP_REQUIRED).

Spec: Apache Kafka 4.4.0 ApiVersionsRequest.json v5 (ClusterId: "The cluster ID the client
intends to connect to", NodeId: "The node ID the client intends to connect to. Provide both
ClusterId and NodeId, if known"), Errors.REBOOTSTRAP_REQUIRED; §B.5. The reference advertises
ApiVersions v0-5 as Apache 4.4 does: a client that never sends v5 to it has none of this
(`unsupported`, from its own requests, never from its name).
"""

from __future__ import annotations

from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.errors import PreconditionUnmet, Unsupported
from kconform.fixtures.clients import ClientDriver
from kconform.fixtures.proxy.injections import Injection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.types import Shown
from kconform.suites.client.helpers import Recording, baseline_run, for_client, produce, run_client
from kconform.suites.client.traffic import API_VERSIONS, Exchange, Traffic

NEEDS_V5 = (Shown.APIVERSIONS_V5,)  # a client sending an older version is `unsupported`

SPEC = "Apache 4.4.0 ApiVersionsRequest.json v5 (KIP-1242); §B.5"
METADATA = 3
V5 = 5
MISROUTED_WINDOW_S = 8.0  # a producer's bootstrap, its leader's connection, the rebootstrap


def _v5_or_unsupported(traffic: Traffic) -> list[Exchange]:
    """The client's ApiVersions v5 requests; `unsupported` when it sent none to a broker that
    advertises v5 (what it sent says what it implements)."""
    sent = traffic.versions(API_VERSIONS)
    if not sent:
        raise PreconditionUnmet("the client sent no ApiVersions in the window")
    if max(sent) < V5:
        raise Unsupported(f"the client sends ApiVersions v{'/v'.join(map(str, sent))} to a broker "
                          "advertising v0-5: no ClusterId/NodeId (KIP-1242 needs v5)")  # fmt: skip
    return [e for e in traffic.of(API_VERSIONS) if e.api_version >= V5 and e.request is not None]


def _named(exchange: Exchange) -> bool:
    body: Any = exchange.request
    return body is not None and (body.cluster_id is not None or body.node_id != -1)


def _cluster_ids(traffic: Traffic) -> set[str]:
    """The cluster ids the client's Metadata answers gave it."""
    return {str(e.response.cluster_id) for e in traffic.of(METADATA)
            if e.response is not None and getattr(e.response, "cluster_id", None)}  # fmt: skip


@case(
    "kip1242.client.identity",
    rules=["kip1242.client.identity_correct"],
    title="ApiVersions v5 names both the cluster id Metadata gave and the connection's node id",
    spec=f"{SPEC}; NetworkClient.handleInitiateApiVersionRequests (4.4.0)",
    level=Level.MUST,
    needs_shown=NEEDS_V5,
    kind="client",
    shares="baseline",
)
async def test_identity(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
    recording = await baseline_run(check, client, client_target)
    v5 = _v5_or_unsupported(recording.traffic)
    named = [e for e in v5 if _named(e)]
    check.observe("ApiVersions v5 requests, and those naming a cluster or node",
                  f"{len(v5)}, {len(named)}")  # fmt: skip
    if not named:
        raise PreconditionUnmet(f"none of the client's {len(v5)} ApiVersions v5 requests names a "
                                "cluster or node (allowed: 'if known')")  # fmt: skip
    clusters = _cluster_ids(recording.traffic)
    check.observe("cluster ids in the client's Metadata answers", sorted(clusters))
    check.observe("what the naming requests named", [
        f"{e}: ClusterId {e.request.cluster_id!r}, NodeId {e.request.node_id}"  # type: ignore[union-attr]
        for e in named[:5]
    ])  # fmt: skip
    wrong = []
    for e in named:
        body: Any = e.request
        said = f"{e}: ClusterId {body.cluster_id!r}, NodeId {body.node_id}"
        if body.cluster_id is None or body.node_id == -1:
            wrong.append(f"{said} (half a pair)")
        elif body.cluster_id not in clusters:
            wrong.append(f"{said} (no Metadata answer gave that cluster id)")
        elif e.broker is not None and body.node_id != e.broker:
            wrong.append(f"{said} (the connection is to node {e.broker})")
    check.expect("ApiVersions v5 naming another cluster or node, or half a pair", [], wrong[:10])


async def _misrouted_run(
    check: Check, client: ClientDriver, target: BrokerTarget
) -> tuple[Recording, Injection | None]:
    fired: list[Injection] = []
    below_v5: list[int] = []  # the client's ApiVersions versions under v5: it has no KIP-1242

    def names_cluster(request: Any) -> bool:
        if request.api_version < V5:
            below_v5.append(request.api_version)
            return False
        return request.body is not None and request.body.cluster_id is not None

    def injections(client_id: str) -> list[Injection]:
        fired.append(for_client(client_id, API_VERSIONS, predicate=names_cluster, times=1,
                                error_code=int(ErrorCode.REBOOTSTRAP_REQUIRED),
                                name="the first ApiVersions v5 naming a cluster: "
                                "REBOOTSTRAP_REQUIRED"))  # fmt: skip
        return fired

    def answered() -> bool:  # or known never to be: the window ends early either way
        return bool(below_v5 or (fired and fired[0].fired))

    recording = await run_client(check, client, target, produce(MISROUTED_WINDOW_S), metrics=None,
                                 injections=injections, until=answered)  # fmt: skip
    return recording, fired[0] if fired else None


@case(
    "kip1242.client.misrouted_disconnects",
    rules=["kip1242.client.misrouted_disconnects"],
    title="On REBOOTSTRAP_REQUIRED to its ApiVersions v5 the client drops that connection",
    spec=f"{SPEC}; Errors.REBOOTSTRAP_REQUIRED ('The client should rebootstrap'); "
    "NetworkClient.handleApiVersionsResponse (4.4.0)",
    level=Level.MUST,
    needs_shown=NEEDS_V5,
    kind="client",
)
async def test_misrouted_disconnects(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording, injection = await _misrouted_run(check, client, client_target)
    traffic = recording.traffic
    v5 = _v5_or_unsupported(traffic)
    hit = next((e for e in v5 if _named(e) and e.error_code == ErrorCode.REBOOTSTRAP_REQUIRED),
               None)  # fmt: skip
    if hit is None:
        raise PreconditionUnmet(
            f"none of the client's {len(v5)} ApiVersions v5 requests named a cluster in "
            f"{MISROUTED_WINDOW_S:g} s (fired {0 if injection is None else injection.fired}): "
            "nothing to answer REBOOTSTRAP_REQUIRED to"
        )
    check.observe("answered REBOOTSTRAP_REQUIRED", str(hit))
    later = [str(e) for e in traffic.on(hit.connection) if e.sent > hit.sent]
    check.expect("requests on that connection after REBOOTSTRAP_REQUIRED", [], later[:10])
    closed = traffic.closed.get(hit.connection)
    check.expect("that connection closed within the window", True, closed is not None)
    others = [str(e) for e in traffic.of(API_VERSIONS) if e.sent > hit.sent]
    check.observe("ApiVersions on new connections afterwards (a rebootstrap)", others[:5])
