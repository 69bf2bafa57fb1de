"""Golden bytes, written by hand from the schemas (§A, Kafka's message JSON).

Each vector is spelled out field by field, so a reader can check it against the JSON without
running anything; the codec must produce exactly these bytes and read them back to the same
value. Conventions: classic strings are int16 length + UTF-8, classic arrays and bytes int32
length; in flexible versions strings, arrays and bytes carry an unsigned-varint length + 1
(0 = null) and every struct ends with a tag section (count, then tag/size/value sorted by tag).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from kconform.codecs.messages import (
    API_VERSIONS_KEY,
    REQUESTS,
    RESPONSES,
    AlterConfigsRequest,
    ApiVersionsRequest,
    ApiVersionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeClusterResponse,
    DescribeConfigsRequest,
    FetchRequest,
    FindCoordinatorResponse,
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
    IncrementalAlterConfigsRequest,
    ListClientMetricsResourcesRequest,
    ListClientMetricsResourcesResponse,
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
    ListOffsetsRequest,
    MetadataResponse,
    ProduceRequest,
    PushTelemetryRequest,
    PushTelemetryResponse,
    RequestHeader,
    ResponseHeader,
    request_header_version,
    response_header_version,
)
from kconform.codecs.schema import Message


def txt(text: str) -> str:
    """The hex of a string's UTF-8 bytes (its length prefix is written by hand next to it)."""
    return text.encode().hex()


def hx(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts))


INSTANCE_ID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
INSTANCE_HEX = "00112233445566778899aabbccddeeff"
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qk"  # 22 characters, as Kafka's base64 cluster ids


@dataclass(frozen=True)
class Golden:
    cls: type[Message]
    version: int
    value: Message
    wire: bytes


def golden(name: str, cls: type[Message], version: int, value: Message, *parts: str) -> Any:
    return pytest.param(Golden(cls, version, value, hx(*parts)), id=name)


AV = ApiVersionsResponse
MD = MetadataResponse
CT = CreateTopicsRequest
CTR = CreateTopicsResponse

VECTORS = [
    # --- headers (§A.3) -------------------------------------------------------------------
    golden("RequestHeader-v0", RequestHeader, 0,
           RequestHeader(request_api_key=18, request_api_version=0, correlation_id=1),
           "0012",      # RequestApiKey int16 18 (ApiVersions)
           "0000",      # RequestApiVersion int16 0
           "00000001"),  # CorrelationId int32 1; v0 has no ClientId
    golden("RequestHeader-v1", RequestHeader, 1,
           RequestHeader(request_api_key=3, request_api_version=1, correlation_id=0x7FFFFFFF,
                         client_id="kc"),
           "0003",      # RequestApiKey 3 (Metadata)
           "0001",      # RequestApiVersion 1
           "7fffffff",  # CorrelationId
           "0002", txt("kc")),  # ClientId int16 length 2
    golden("RequestHeader-v1-null-client-id", RequestHeader, 1,
           RequestHeader(request_api_key=0, request_api_version=3, correlation_id=-1),
           "0000", "0003", "ffffffff",
           "ffff"),     # ClientId null: int16 -1
    golden("RequestHeader-v2", RequestHeader, 2,
           RequestHeader(request_api_key=71, request_api_version=0, correlation_id=42,
                         client_id="kconform"),
           "0047",      # RequestApiKey 71 (GetTelemetrySubscriptions)
           "0000",      # RequestApiVersion 0
           "0000002a",  # CorrelationId 42
           "0008", txt("kconform"),  # ClientId stays int16-length even in flexible v2
           "00"),       # empty tag section
    golden("ResponseHeader-v0", ResponseHeader, 0, ResponseHeader(correlation_id=42),
           "0000002a"),  # CorrelationId
    golden("ResponseHeader-v1", ResponseHeader, 1, ResponseHeader(correlation_id=42),
           "0000002a",  # CorrelationId
           "00"),       # empty tag section
    # --- ApiVersions (§A.1, KIP-511) ---------------------------------------------------------
    golden("ApiVersionsRequest-v0", ApiVersionsRequest, 0, ApiVersionsRequest(),
           ""),         # v0-v2: empty body
    golden("ApiVersionsRequest-v3", ApiVersionsRequest, 3,
           ApiVersionsRequest(client_software_name="kconform", client_software_version="0.1.0"),
           "09", txt("kconform"),  # ClientSoftwareName compact string (8 + 1)
           "06", txt("0.1.0"),     # ClientSoftwareVersion compact string (5 + 1)
           "00"),                  # tag section
    golden("ApiVersionsRequest-v4", ApiVersionsRequest, 4,
           ApiVersionsRequest(client_software_name="kafka-python", client_software_version="3"),
           "0d", txt("kafka-python"),  # ClientSoftwareName (12 + 1)
           "02", txt("3"),             # ClientSoftwareVersion (1 + 1)
           "00"),                      # v4 adds no fields
    golden("ApiVersionsRequest-v5-defaults", ApiVersionsRequest, 5,
           ApiVersionsRequest(client_software_name="kconform", client_software_version="1.0"),
           "09", txt("kconform"),  # ClientSoftwareName (8 + 1)
           "04", txt("1.0"),       # ClientSoftwareVersion (3 + 1)
           "00",                   # ClusterId null: compact nullable string length 0 (KIP-1242)
           "ffffffff",             # NodeId -1: not known
           "00"),                  # tag section
    golden("ApiVersionsRequest-v5-cluster-node", ApiVersionsRequest, 5,
           ApiVersionsRequest(client_software_name="a", client_software_version="1",
                              cluster_id="Ms1J3RWxT2K3W2dZqgVz2A", node_id=2),
           "02", txt("a"), "02", txt("1"),
           "17", txt("Ms1J3RWxT2K3W2dZqgVz2A"),  # ClusterId compact string (22 + 1)
           "00000002",                            # NodeId 2
           "00"),
    golden("ApiVersionsResponse-v0-unsupported-version", AV, 0,
           AV(error_code=35, api_keys=[AV.ApiVersion(api_key=18, min_version=0, max_version=4)]),
           "0023",      # ErrorCode 35 UNSUPPORTED_VERSION
           "00000001",  # ApiKeys int32 count 1
           "0012", "0000", "0004"),  # ApiKey 18, MinVersion 0, MaxVersion 4 (§B.2)
    golden("ApiVersionsResponse-v1", AV, 1,
           AV(api_keys=[AV.ApiVersion(api_key=18, max_version=4),
                        AV.ApiVersion(api_key=71), AV.ApiVersion(api_key=72)],
              throttle_time_ms=100),
           "0000",      # ErrorCode 0
           "00000003",  # ApiKeys count 3
           "0012", "0000", "0004",  # 18: 0-4
           "0047", "0000", "0000",  # 71: 0-0
           "0048", "0000", "0000",  # 72: 0-0
           "00000064"),  # ThrottleTimeMs 100 (v1+), after ApiKeys
    golden("ApiVersionsResponse-v3-all-tagged-fields", AV, 3,
           AV(api_keys=[AV.ApiVersion(api_key=18, max_version=4)],
              supported_features=[AV.SupportedFeatureKey(name="metadata.version", min_version=1,
                                                         max_version=27)],
              finalized_features_epoch=42,
              finalized_features=[AV.FinalizedFeatureKey(name="kraft.version",
                                                         max_version_level=1,
                                                         min_version_level=0)],
              zk_migration_ready=True),
           "0000",      # ErrorCode
           "02",        # ApiKeys compact count 1 + 1
           "0012", "0000", "0004", "00",  # ApiKey 18, 0, 4, entry tag section
           "00000000",  # ThrottleTimeMs
           "04",        # tag section: 4 tagged fields, by tag
           "00", "17",  # tag 0 SupportedFeatures, 23 bytes:
           "02", "11", txt("metadata.version"),  # 1 entry; Name (16 + 1)
           "0001", "001b", "00",                   # MinVersion 1, MaxVersion 27, entry tags
           "01", "08", "000000000000002a",         # tag 1 FinalizedFeaturesEpoch int64 42
           "02", "14",  # tag 2 FinalizedFeatures, 20 bytes:
           "02", "0e", txt("kraft.version"),       # 1 entry; Name (13 + 1)
           "0001", "0000", "00",                   # MaxVersionLevel 1 BEFORE MinVersionLevel 0
           "03", "01", "01"),                      # tag 3 ZkMigrationReady true
    golden("ApiVersionsResponse-v3-defaults-omitted", AV, 3, AV(),
           "0000",      # ErrorCode
           "01",        # ApiKeys: empty (0 + 1)
           "00000000",  # ThrottleTimeMs
           "00"),       # epoch -1, empty features, false: no tagged field written
    golden("ApiVersionsResponse-v4-epoch-only", AV, 4, AV(finalized_features_epoch=7),
           "0000", "01", "00000000",
           "01", "01", "08", "0000000000000007"),  # one tag: 1, size 8, epoch 7
    golden("ApiVersionsResponse-v5", AV, 5,
           AV(api_keys=[AV.ApiVersion(api_key=18, max_version=5)]),
           "0000",      # ErrorCode
           "02", "0012", "0000", "0005", "00",  # ApiKeys: 18, 0-5 (4.4.0); v5 adds no field
           "00000000",  # ThrottleTimeMs
           "00"),       # no tagged field
    # --- KIP-714 telemetry (§A.2) -------------------------------------------------------------
    golden("GetTelemetrySubscriptionsRequest-v0-first", GetTelemetrySubscriptionsRequest, 0,
           GetTelemetrySubscriptionsRequest(),
           "00000000000000000000000000000000",  # ClientInstanceId zero: "no id yet"
           "00"),
    golden("GetTelemetrySubscriptionsResponse-v0", GetTelemetrySubscriptionsResponse, 0,
           GetTelemetrySubscriptionsResponse(
               client_instance_id=INSTANCE_ID, subscription_id=7,
               accepted_compression_types=[4, 3, 1], push_interval_ms=300_000,
               telemetry_max_bytes=1_048_576, delta_temporality=True, requested_metrics=["*"]),
           "00000000",  # ThrottleTimeMs
           "0000",      # ErrorCode
           INSTANCE_HEX,  # ClientInstanceId
           "00000007",  # SubscriptionId
           "04", "04", "03", "01",  # AcceptedCompressionTypes []int8: zstd, lz4, gzip
           "000493e0",  # PushIntervalMs 300000
           "00100000",  # TelemetryMaxBytes 1 MiB
           "01",        # DeltaTemporality true
           "02", "02", txt("*"),  # RequestedMetrics ["*"]: all metrics (ruling 1)
           "00"),
    golden("GetTelemetrySubscriptionsResponse-v0-empty", GetTelemetrySubscriptionsResponse, 0,
           GetTelemetrySubscriptionsResponse(error_code=117, subscription_id=-1),
           "00000000", "0075",  # ThrottleTimeMs, ErrorCode 117 UNKNOWN_SUBSCRIPTION_ID
           "00000000000000000000000000000000", "ffffffff",  # zero id, SubscriptionId -1
           "01",        # AcceptedCompressionTypes []
           "00000000", "00000000", "00",  # PushIntervalMs, TelemetryMaxBytes, DeltaTemporality
           "01",        # RequestedMetrics []: no metrics
           "00"),
    golden("PushTelemetryRequest-v0", PushTelemetryRequest, 0,
           PushTelemetryRequest(client_instance_id=INSTANCE_ID, subscription_id=7,
                                compression_type=4, metrics=b"\x0a\x0b\x0c"),
           INSTANCE_HEX,  # ClientInstanceId
           "00000007",  # SubscriptionId
           "00",        # Terminating false
           "04",        # CompressionType zstd
           "04", "0a0b0c",  # Metrics compact bytes (3 + 1)
           "00"),
    golden("PushTelemetryRequest-v0-terminating-empty", PushTelemetryRequest, 0,
           PushTelemetryRequest(client_instance_id=INSTANCE_ID, subscription_id=7,
                                terminating=True),
           INSTANCE_HEX, "00000007",
           "01",        # Terminating true
           "00",        # CompressionType none
           "01",        # Metrics empty, not null (ruling 11: non-nullable)
           "00"),
    golden("PushTelemetryResponse-v0", PushTelemetryResponse, 0,
           PushTelemetryResponse(throttle_time_ms=0, error_code=118),
           "00000000",  # ThrottleTimeMs
           "0076",      # ErrorCode 118 TELEMETRY_TOO_LARGE
           "00"),
    # --- config APIs for CLIENT_METRICS resources (type 16) ---------------------------------------
    golden("DescribeConfigsRequest-v4", DescribeConfigsRequest, 4,
           DescribeConfigsRequest(
               resources=[DescribeConfigsRequest.DescribeConfigsResource(
                   resource_type=16, resource_name="sub1",
                   configuration_keys=["metrics", "interval.ms"])],
               include_documentation=True),
           "02",        # Resources: 1 entry
           "10",        # ResourceType int8 16 CLIENT_METRICS
           "05", txt("sub1"),  # ResourceName (4 + 1)
           "03", "08", txt("metrics"), "0c", txt("interval.ms"),  # ConfigurationKeys, 2 keys
           "00",        # resource tag section
           "00",        # IncludeSynonyms false
           "01",        # IncludeDocumentation true
           "00"),
    golden("DescribeConfigsRequest-v4-all-keys", DescribeConfigsRequest, 4,
           DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
               resource_type=16, resource_name="sub1", configuration_keys=None)]),
           "02", "10", "05", txt("sub1"),
           "00",        # ConfigurationKeys null: all keys
           "00", "00", "00", "00"),
    golden("IncrementalAlterConfigsRequest-v1", IncrementalAlterConfigsRequest, 1,
           IncrementalAlterConfigsRequest(resources=[
               IncrementalAlterConfigsRequest.AlterConfigsResource(
                   resource_type=16, resource_name="sub1", configs=[
                       IncrementalAlterConfigsRequest.AlterableConfig(
                           name="metrics", config_operation=0, value="org.apache.kafka."),
                       IncrementalAlterConfigsRequest.AlterableConfig(
                           name="interval.ms", config_operation=0, value="60000"),
                       IncrementalAlterConfigsRequest.AlterableConfig(
                           name="match", config_operation=1, value=None)])]),
           "02",        # Resources: 1
           "10", "05", txt("sub1"),  # ResourceType 16, ResourceName
           "04",        # Configs: 3
           "08", txt("metrics"), "00", "12", txt("org.apache.kafka."), "00",  # SET
           "0c", txt("interval.ms"), "00", "06", txt("60000"), "00",          # SET
           "06", txt("match"), "01", "00", "00",  # DELETE, Value null
           "00",        # resource tag section
           "00",        # ValidateOnly false
           "00"),
    golden("AlterConfigsRequest-v0", AlterConfigsRequest, 0,
           AlterConfigsRequest(
               resources=[AlterConfigsRequest.AlterConfigsResource(
                   resource_type=16, resource_name="sub1", configs=[
                       AlterConfigsRequest.AlterableConfig(name="interval.ms", value="60000"),
                       AlterConfigsRequest.AlterableConfig(name="metrics", value=None)])],
               validate_only=True),
           "00000001",  # Resources int32 count 1
           "10",        # ResourceType 16
           "0004", txt("sub1"),  # ResourceName int16 length
           "00000002",  # Configs count 2
           "000b", txt("interval.ms"), "0005", txt("60000"),
           "0007", txt("metrics"), "ffff",  # Value null
           "01"),       # ValidateOnly true
    golden("ListConfigResourcesRequest-v0", ListConfigResourcesRequest, 0,
           ListConfigResourcesRequest(),
           "00"),       # empty body, tag section only
    golden("ListConfigResourcesRequest-v1", ListConfigResourcesRequest, 1,
           ListConfigResourcesRequest(resource_types=[16]),
           "02", "10",  # ResourceTypes []int8 [16]
           "00"),
    golden("ListConfigResourcesResponse-v1", ListConfigResourcesResponse, 1,
           ListConfigResourcesResponse(config_resources=[
               ListConfigResourcesResponse.ConfigResource(resource_name="sub1",
                                                          resource_type=4)]),
           "00000000", "0000",  # ThrottleTimeMs, ErrorCode
           "02", "05", txt("sub1"), "04", "00",  # 1 resource: Name, ResourceType 4 (v1+)
           "00"),
    golden("ListClientMetricsResourcesRequest-v0", ListClientMetricsResourcesRequest, 0,
           ListClientMetricsResourcesRequest(), "00"),
    golden("ListClientMetricsResourcesResponse-v0", ListClientMetricsResourcesResponse, 0,
           ListClientMetricsResourcesResponse(client_metrics_resources=[
               ListClientMetricsResourcesResponse.ClientMetricsResource(name="sub1"),
               ListClientMetricsResourcesResponse.ClientMetricsResource(name="sub2")]),
           "00000000",  # ThrottleTimeMs
           "0000",      # ErrorCode
           "03",        # ClientMetricsResources: 2
           "05", txt("sub1"), "00",
           "05", txt("sub2"), "00",
           "00"),
    # --- topic administration -----------------------------------------------------------------
    golden("CreateTopicsRequest-v7", CT, 7,
           CT(topics=[
               CT.CreatableTopic(name="t1", num_partitions=3, replication_factor=-1, configs=[
                   CT.CreatableTopicConfig(name="cleanup.policy", value="compact"),
                   CT.CreatableTopicConfig(name="retention.ms", value=None)]),
               CT.CreatableTopic(name="t2", num_partitions=-1, replication_factor=-1,
                                 assignments=[CT.CreatableReplicaAssignment(
                                     partition_index=0, broker_ids=[1, 2])])],
              timeout_ms=30_000, validate_only=True),
           "03",        # Topics: 2
           "03", txt("t1"),  # Name (2 + 1)
           "00000003",  # NumPartitions 3
           "ffff",      # ReplicationFactor -1: the broker's default (v4+, KIP-464)
           "01",        # Assignments []
           "03",        # Configs: 2
           "0f", txt("cleanup.policy"), "08", txt("compact"), "00",  # Name (14 + 1), Value (7 + 1)
           "0d", txt("retention.ms"), "00", "00",  # Name (12 + 1), Value null
           "00",        # topic tag section
           "03", txt("t2"),  # Name
           "ffffffff", "ffff",  # NumPartitions -1, ReplicationFactor -1: manual assignment
           "02",        # Assignments: 1
           "00000000",  # PartitionIndex 0
           "03", "00000001", "00000002",  # BrokerIds [1, 2]
           "00",        # assignment tag section
           "01",        # Configs []
           "00",        # topic tag section
           "00007530",  # timeoutMs 30000
           "01",        # validateOnly true
           "00"),
    golden("CreateTopicsResponse-v5", CTR, 5,
           CTR(throttle_time_ms=0, topics=[
               CTR.CreatableTopicResult(
                   name="t1", error_message=None, num_partitions=3, replication_factor=1,
                   configs=[CTR.CreatableTopicConfigs(name="cleanup.policy", value="compact",
                                                      config_source=1)]),
               CTR.CreatableTopicResult(name="t2", error_code=36,
                                        error_message="Topic 't2' already exists."),
               CTR.CreatableTopicResult(
                   name="t3", error_message=None, topic_config_error_code=29, num_partitions=1,
                   replication_factor=1, configs=None)]),
           "00000000",  # ThrottleTimeMs
           "04",        # Topics: 3
           "03", txt("t1"),  # Name (no TopicId before v7)
           "0000",      # ErrorCode NONE
           "00",        # ErrorMessage null
           "00000003", "0001",  # NumPartitions 3, ReplicationFactor 1 (v5+)
           "02",        # Configs: 1
           "0f", txt("cleanup.policy"), "08", txt("compact"),  # Name, Value
           "00",        # ReadOnly false
           "01",        # ConfigSource 1 DYNAMIC_TOPIC_CONFIG
           "00", "00",  # IsSensitive false, config tag section
           "00",        # topic tag section: TopicConfigErrorCode 0 is the default, not written
           "03", txt("t2"),
           "0024",      # ErrorCode 36 TOPIC_ALREADY_EXISTS
           "1b", txt("Topic 't2' already exists."),  # ErrorMessage (26 + 1)
           "ffffffff", "ffff",  # NumPartitions -1, ReplicationFactor -1 (defaults)
           "01",        # Configs [] (the default: nullable, but not null by default)
           "00",
           "03", txt("t3"), "0000", "00", "00000001", "0001",
           "00",        # Configs null: the configs could not be described...
           "01", "00", "02", "001d",  # ...so tag 0 TopicConfigErrorCode, 2 bytes: 29
           "00"),       # TOPIC_AUTHORIZATION_FAILED; then the top-level tag section
    # --- cluster metadata ---------------------------------------------------------------------
    golden("MetadataResponse-v1", MD, 1,
           MD(brokers=[MD.MetadataResponseBroker(node_id=1, host="b1", port=9092)],
              controller_id=1,
              topics=[MD.MetadataResponseTopic(name="t", partitions=[
                  MD.MetadataResponsePartition(partition_index=0, leader_id=1, replica_nodes=[1],
                                               isr_nodes=[1])])]),
           "00000001",  # Brokers count 1 (no ThrottleTimeMs before v3)
           "00000001", "0002", txt("b1"), "00002384",  # NodeId 1, Host, Port 9092
           "ffff",      # Rack null (v1+)
           "00000001",  # ControllerId 1 (v1+; no ClusterId before v2)
           "00000001",  # Topics count 1
           "0000", "0001", txt("t"),  # ErrorCode, Name
           "00",        # IsInternal false (v1+)
           "00000001",  # Partitions count 1
           "0000", "00000000", "00000001",  # ErrorCode, PartitionIndex 0, LeaderId 1
           "00000001", "00000001",  # ReplicaNodes [1]
           "00000001", "00000001"),  # IsrNodes [1]
    golden("MetadataResponse-v12", MD, 12,
           MD(brokers=[MD.MetadataResponseBroker(node_id=1, host="b1", port=9092)],
              cluster_id=CLUSTER_ID, controller_id=1,
              topics=[MD.MetadataResponseTopic(name="t", topic_id=INSTANCE_ID, partitions=[
                  MD.MetadataResponsePartition(partition_index=0, leader_id=1, leader_epoch=5,
                                               replica_nodes=[1], isr_nodes=[1])])]),
           "00000000",  # ThrottleTimeMs
           "02",        # Brokers: 1
           "00000001", "03", txt("b1"), "00002384", "00", "00",  # NodeId, Host, Port, Rack null
           "17", txt(CLUSTER_ID),  # ClusterId (22 + 1)
           "00000001",  # ControllerId
           "02",        # Topics: 1
           "0000",      # ErrorCode
           "02", txt("t"),  # Name (nullable from v12, here "t")
           INSTANCE_HEX,  # TopicId (v10+)
           "00",        # IsInternal
           "02",        # Partitions: 1
           "0000", "00000000", "00000001", "00000005",  # ErrorCode, Index, LeaderId, LeaderEpoch
           "02", "00000001",  # ReplicaNodes [1]
           "02", "00000001",  # IsrNodes [1]
           "01",        # OfflineReplicas []
           "00",        # partition tag section
           "80000000",  # TopicAuthorizedOperations default INT32_MIN
           "00",        # topic tag section (no ClusterAuthorizedOperations after v10)
           "00"),
    golden("FindCoordinatorResponse-v3", FindCoordinatorResponse, 3,
           FindCoordinatorResponse(error_code=0, error_message=None, node_id=1, host="b1",
                                   port=9092),
           "00000000",  # ThrottleTimeMs
           "0000",      # ErrorCode
           "00",        # ErrorMessage null (compact)
           "00000001", "03", txt("b1"), "00002384",  # NodeId, Host, Port: v3 is single-key
           "00"),
    golden("DescribeClusterResponse-v0", DescribeClusterResponse, 0,
           DescribeClusterResponse(cluster_id=CLUSTER_ID, controller_id=1, brokers=[
               DescribeClusterResponse.DescribeClusterBroker(broker_id=1, host="b1", port=9092,
                                                             rack="r1")]),
           "00000000", "0000",  # ThrottleTimeMs, ErrorCode
           "00",        # ErrorMessage null
           "17", txt(CLUSTER_ID),  # ClusterId (no EndpointType before v1)
           "00000001",  # ControllerId
           "02",        # Brokers: 1
           "00000001", "03", txt("b1"), "00002384", "03", txt("r1"), "00",  # ... Rack "r1"
           "80000000",  # ClusterAuthorizedOperations default INT32_MIN
           "00"),
    # --- data path (records are opaque bytes here) ------------------------------------------------
    golden("ProduceRequest-v3", ProduceRequest, 3,
           ProduceRequest(acks=-1, timeout_ms=30_000, topic_data=[
               ProduceRequest.TopicProduceData(name="t", partition_data=[
                   ProduceRequest.PartitionProduceData(index=0, records=b"\xde\xad\xbe\xef")])]),
           "ffff",      # TransactionalId null (v3+)
           "ffff",      # Acks -1
           "00007530",  # TimeoutMs 30000
           "00000001", "0001", txt("t"),  # TopicData: 1; Name
           "00000001", "00000000",  # PartitionData: 1; Index 0
           "00000004", "deadbeef"),  # Records int32 length 4
    golden("ProduceRequest-v9", ProduceRequest, 9,
           ProduceRequest(transactional_id="tx", acks=1, timeout_ms=30_000, topic_data=[
               ProduceRequest.TopicProduceData(name="t", partition_data=[
                   ProduceRequest.PartitionProduceData(index=0, records=b"\xde\xad\xbe\xef")])]),
           "03", txt("tx"),  # TransactionalId compact
           "0001",      # Acks 1
           "00007530",  # TimeoutMs
           "02", "02", txt("t"),  # TopicData: 1; Name
           "02", "00000000",  # PartitionData: 1; Index 0
           "05", "deadbeef",  # Records compact (4 + 1)
           "00", "00",  # partition and topic tag sections
           "00"),
    golden("ListOffsetsRequest-v1", ListOffsetsRequest, 1,
           ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsRequest.ListOffsetsTopic(
               name="t", partitions=[ListOffsetsRequest.ListOffsetsPartition(
                   partition_index=0, timestamp=-1)])]),
           "ffffffff",  # ReplicaId -1 (consumer)
           "00000001", "0001", txt("t"),  # Topics: 1; Name
           "00000001", "00000000",  # Partitions: 1; PartitionIndex 0
           "ffffffffffffffff"),  # Timestamp -1 LATEST (no MaxNumOffsets after v0)
    golden("ListOffsetsRequest-v6", ListOffsetsRequest, 6,
           ListOffsetsRequest(replica_id=-1, isolation_level=1, topics=[
               ListOffsetsRequest.ListOffsetsTopic(name="t", partitions=[
                   ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=-2)])]),
           "ffffffff",  # ReplicaId
           "01",        # IsolationLevel READ_COMMITTED (v2+)
           "02", "02", txt("t"),  # Topics: 1; Name
           "02", "00000000",  # Partitions: 1; PartitionIndex
           "ffffffff",  # CurrentLeaderEpoch -1 (v4+)
           "fffffffffffffffe",  # Timestamp -2 EARLIEST
           "00", "00",  # partition and topic tag sections
           "00"),       # no TimeoutMs before v10
    golden("FetchRequest-v12", FetchRequest, 12,
           FetchRequest(cluster_id="c1", max_wait_ms=500, min_bytes=1, max_bytes=52_428_800,
                        topics=[FetchRequest.FetchTopic(topic="t", partitions=[
                            FetchRequest.FetchPartition(partition=0, current_leader_epoch=5,
                                                        fetch_offset=100,
                                                        partition_max_bytes=1_048_576)])]),
           "ffffffff",  # ReplicaId -1 (0-14)
           "000001f4",  # MaxWaitMs 500
           "00000001",  # MinBytes 1
           "03200000",  # MaxBytes 50 MiB
           "00",        # IsolationLevel
           "00000000",  # SessionId 0
           "ffffffff",  # SessionEpoch -1
           "02", "02", txt("t"),  # Topics: 1; Topic (name until v12)
           "02",        # Partitions: 1
           "00000000", "00000005",  # Partition 0, CurrentLeaderEpoch 5
           "0000000000000064",  # FetchOffset 100
           "ffffffff",  # LastFetchedEpoch -1 (v12+)
           "ffffffffffffffff",  # LogStartOffset -1
           "00100000",  # PartitionMaxBytes 1 MiB
           "00", "00",  # partition and topic tag sections
           "01",        # ForgottenTopicsData []
           "01",        # RackId ""
           "01", "00", "03", "03", txt("c1")),  # tags: 1; tag 0 ClusterId, 3 bytes: "c1"
]  # fmt: skip


@pytest.mark.parametrize("vector", VECTORS)
def test_golden_bytes(vector: Golden) -> None:
    assert vector.value.encode(vector.version).hex() == vector.wire.hex()
    assert vector.cls.decode(vector.wire, vector.version) == vector.value


def test_every_message_family_has_a_golden_vector() -> None:
    covered = {p.values[0].cls for p in VECTORS}
    wanted = {
        RequestHeader, ResponseHeader, ApiVersionsRequest, ApiVersionsResponse,
        GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse,
        PushTelemetryRequest, PushTelemetryResponse, DescribeConfigsRequest,
        IncrementalAlterConfigsRequest, AlterConfigsRequest, ListConfigResourcesRequest,
        ListClientMetricsResourcesResponse, MetadataResponse, FindCoordinatorResponse,
        DescribeClusterResponse, ProduceRequest, ListOffsetsRequest, FetchRequest,
        CreateTopicsRequest, CreateTopicsResponse,
    }  # fmt: skip
    assert wanted <= covered


# --- the header-version rule (§A.3) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("api_key", "version", "request_header", "response_header"),
    [
        (18, 0, 1, 0), (18, 2, 1, 0),
        (18, 3, 2, 0), (18, 4, 2, 0),  # flexible ApiVersions: request v2, response still v0
        (18, 0x7FFF, 2, 0),  # unknown high ApiVersions version: read with header v2 (B.2)
        (71, 0, 2, 1), (72, 0, 2, 1),  # telemetry: flexible from v0
        (74, 0, 2, 1), (74, 1, 2, 1),  # ListClientMetricsResources / ListConfigResources
        (3, 8, 1, 0), (3, 9, 2, 1),    # Metadata turns flexible at v9
        (0, 8, 1, 0), (0, 9, 2, 1),    # Produce
        (1, 11, 1, 0), (1, 12, 2, 1),  # Fetch
        (32, 3, 1, 0), (32, 4, 2, 1),  # DescribeConfigs
        (60, 0, 2, 1),                 # DescribeCluster: flexible from v0
        (19, 4, 1, 0), (19, 5, 2, 1),  # CreateTopics turns flexible at v5
        (20, 3, 1, 0), (20, 4, 2, 1),  # DeleteTopics at v4
    ],
)  # fmt: skip
def test_header_versions_follow_the_body_and_kip_511(
    api_key: int, version: int, request_header: int, response_header: int
) -> None:
    assert request_header_version(api_key, version) == request_header
    assert response_header_version(api_key, version) == response_header


@pytest.mark.parametrize(
    "cls", [*REQUESTS.values(), *RESPONSES.values()], ids=lambda c: c.struct_name
)
def test_header_version_matches_flexibility_at_every_declared_version(cls: type[Message]) -> None:
    assert cls.api_key is not None
    for version in cls.versions():
        flexible = cls.is_flexible(version)
        if cls.kind == "request":
            assert request_header_version(cls.api_key, version) == (2 if flexible else 1)
        elif cls.api_key == API_VERSIONS_KEY:
            assert response_header_version(cls.api_key, version) == 0
        else:
            assert response_header_version(cls.api_key, version) == (1 if flexible else 0)


# --- unknown tagged fields survive a round trip -----------------------------------------------


def test_unknown_top_level_tags_are_kept_and_written_back() -> None:
    wire = hx(
        INSTANCE_HEX,  # ClientInstanceId
        "01",  # one tag
        "05", "03", txt("abc"),  # tag 5 (unknown), 3 bytes
    )  # fmt: skip
    decoded = GetTelemetrySubscriptionsRequest.decode(wire, 0)
    assert decoded.client_instance_id == INSTANCE_ID
    assert decoded.unknown_tagged_fields == {5: b"abc"}
    assert decoded.encode(0) == wire


def test_unknown_tags_interleave_with_known_ones_by_tag_and_nest() -> None:
    wire = hx(
        "0000",  # ErrorCode
        "02",  # ApiKeys: 1
        "0012", "0000", "0004",  # ApiKey 18, 0-4
        "01", "07", "01", "ff",  # entry tag section: tag 7 (unknown), 1 byte
        "00000000",  # ThrottleTimeMs
        "04",  # four tags, ascending
        "01", "08", "0000000000000009",  # tag 1 FinalizedFeaturesEpoch 9 (known)
        "04", "00",  # tag 4 (unknown), empty
        "09", "02", "abcd",  # tag 9 (unknown)
        "ac02", "8001", "ee" * 128,  # tag 300 (varint ac 02), 128 bytes (varint 80 01)
    )  # fmt: skip
    decoded = ApiVersionsResponse.decode(wire, 3)
    assert decoded.finalized_features_epoch == 9
    assert decoded.unknown_tagged_fields == {4: b"", 9: b"\xab\xcd", 300: b"\xee" * 128}
    assert decoded.api_keys[0].unknown_tagged_fields == {7: b"\xff"}
    assert decoded.encode(3) == wire

    # Built by hand with the unknown tags out of order, the encoder still sorts by tag.
    built = AV(
        api_keys=[AV.ApiVersion(api_key=18, max_version=4, unknown_tagged_fields={7: b"\xff"})],
        finalized_features_epoch=9,
        unknown_tagged_fields={300: b"\xee" * 128, 9: b"\xab\xcd", 4: b""},
    )
    assert built.encode(3) == wire
