"""Declarations of every Kafka message kconform speaks, and the header-version rule.

`REQUESTS[api_key]` / `RESPONSES[api_key]` give the declaration the harness uses for a key (for
key 74 the 4.1 name, ListConfigResources; its 3.7-4.0 twin ListClientMetricsResources is declared
too). `request_header_version` / `response_header_version` follow Kafka's message generator.
"""

from kconform.codecs.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kconform.codecs.messages.cluster import (
    DescribeClusterRequest,
    DescribeClusterResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from kconform.codecs.messages.configs import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    ListClientMetricsResourcesRequest,
    ListClientMetricsResourcesResponse,
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
)
from kconform.codecs.messages.data import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ProduceRequest,
    ProduceResponse,
)
from kconform.codecs.messages.groups import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kconform.codecs.messages.headers import RequestHeader, ResponseHeader
from kconform.codecs.messages.producer_ids import InitProducerIdRequest, InitProducerIdResponse
from kconform.codecs.messages.telemetry import (
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
    PushTelemetryRequest,
    PushTelemetryResponse,
)
from kconform.codecs.messages.topics import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from kconform.codecs.schema import Message

API_VERSIONS_KEY = 18

_PAIRS: list[tuple[type[Message], type[Message]]] = [
    (ProduceRequest, ProduceResponse),
    (FetchRequest, FetchResponse),
    (ListOffsetsRequest, ListOffsetsResponse),
    (MetadataRequest, MetadataResponse),
    (OffsetCommitRequest, OffsetCommitResponse),
    (OffsetFetchRequest, OffsetFetchResponse),
    (FindCoordinatorRequest, FindCoordinatorResponse),
    (JoinGroupRequest, JoinGroupResponse),
    (HeartbeatRequest, HeartbeatResponse),
    (LeaveGroupRequest, LeaveGroupResponse),
    (SyncGroupRequest, SyncGroupResponse),
    (CreateTopicsRequest, CreateTopicsResponse),
    (DeleteTopicsRequest, DeleteTopicsResponse),
    (InitProducerIdRequest, InitProducerIdResponse),
    (DescribeConfigsRequest, DescribeConfigsResponse),
    (AlterConfigsRequest, AlterConfigsResponse),
    (ApiVersionsRequest, ApiVersionsResponse),
    (IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
    (DescribeClusterRequest, DescribeClusterResponse),
    (GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse),
    (PushTelemetryRequest, PushTelemetryResponse),
    (ListConfigResourcesRequest, ListConfigResourcesResponse),
]


def _api_key(cls: type[Message]) -> int:
    assert cls.api_key is not None, cls.struct_name
    return cls.api_key


REQUESTS: dict[int, type[Message]] = {_api_key(req): req for req, _ in _PAIRS}
RESPONSES: dict[int, type[Message]] = {_api_key(resp): resp for _, resp in _PAIRS}

ALL_MESSAGES: tuple[type[Message], ...] = (
    RequestHeader,
    ResponseHeader,
    *(m for pair in _PAIRS for m in pair),
    ListClientMetricsResourcesRequest,
    ListClientMetricsResourcesResponse,
)


def request_header_version(api_key: int, api_version: int) -> int:
    """Header v2 for flexible request versions, v1 otherwise (§A.3).

    Unknown keys and versions above the declared range use the rule of the highest declared
    version: flexible ranges are open-ended ("3+"), so an unknown high ApiVersions version is read
    with header v2, as Kafka's `RequestHeader.parse` does.
    """
    request = REQUESTS.get(api_key)
    if request is None:
        return 2
    return 2 if request.is_flexible(api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """Header v1 for flexible versions, v0 otherwise; ApiVersions always v0 (KIP-511)."""
    if api_key == API_VERSIONS_KEY:
        return 0
    response = RESPONSES.get(api_key)
    if response is None:
        return 1
    return 1 if response.is_flexible(api_version) else 0


__all__ = [
    "ALL_MESSAGES",
    "API_VERSIONS_KEY",
    "REQUESTS",
    "RESPONSES",
    "AlterConfigsRequest",
    "AlterConfigsResponse",
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "CreateTopicsRequest",
    "CreateTopicsResponse",
    "DeleteTopicsRequest",
    "DeleteTopicsResponse",
    "DescribeClusterRequest",
    "DescribeClusterResponse",
    "DescribeConfigsRequest",
    "DescribeConfigsResponse",
    "FetchRequest",
    "FetchResponse",
    "FindCoordinatorRequest",
    "FindCoordinatorResponse",
    "GetTelemetrySubscriptionsRequest",
    "GetTelemetrySubscriptionsResponse",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "IncrementalAlterConfigsRequest",
    "IncrementalAlterConfigsResponse",
    "InitProducerIdRequest",
    "InitProducerIdResponse",
    "JoinGroupRequest",
    "JoinGroupResponse",
    "LeaveGroupRequest",
    "LeaveGroupResponse",
    "ListClientMetricsResourcesRequest",
    "ListClientMetricsResourcesResponse",
    "ListConfigResourcesRequest",
    "ListConfigResourcesResponse",
    "ListOffsetsRequest",
    "ListOffsetsResponse",
    "MetadataRequest",
    "MetadataResponse",
    "OffsetCommitRequest",
    "OffsetCommitResponse",
    "OffsetFetchRequest",
    "OffsetFetchResponse",
    "ProduceRequest",
    "ProduceResponse",
    "PushTelemetryRequest",
    "PushTelemetryResponse",
    "RequestHeader",
    "ResponseHeader",
    "SyncGroupRequest",
    "SyncGroupResponse",
    "request_header_version",
    "response_header_version",
]
