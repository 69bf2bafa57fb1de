"""Messages whose broker addresses the proxy rewrites: Metadata, FindCoordinator, DescribeCluster.

Transcribed from Apache Kafka's message JSON (4.1); versions below 4.x's minimum keep the fields the
JSON still declares for them, so every version a 3.7+ broker or today's clients speak decodes."""

from kconform.codecs.schema import NULL, Field, message

__all__ = [
    "DescribeClusterRequest",
    "DescribeClusterResponse",
    "FindCoordinatorRequest",
    "FindCoordinatorResponse",
    "MetadataRequest",
    "MetadataResponse",
]

MetadataRequest = message(
    "MetadataRequest",
    api_key=3,
    kind="request",
    valid="0-13",
    flexible="9+",
    fields=[
        Field(
            "Topics",
            "[]MetadataRequestTopic",
            "0+",
            nullable_versions="1+",
            fields=[
                Field("TopicId", "uuid", "10+", ignorable=True),
                Field("Name", "string", "0+", nullable_versions="10+"),
            ],
        ),
        Field("AllowAutoTopicCreation", "bool", "4+", default=True),
        Field("IncludeClusterAuthorizedOperations", "bool", "8-10"),
        Field("IncludeTopicAuthorizedOperations", "bool", "8+"),
    ],
)


MetadataResponse = message(
    "MetadataResponse",
    api_key=3,
    kind="response",
    valid="0-13",
    flexible="9+",
    fields=[
        Field("ThrottleTimeMs", "int32", "3+", ignorable=True),
        Field(
            "Brokers",
            "[]MetadataResponseBroker",
            "0+",
            fields=[
                Field("NodeId", "int32", "0+", map_key=True),
                Field("Host", "string", "0+"),
                Field("Port", "int32", "0+"),
                Field("Rack", "string", "1+", nullable_versions="1+", default=NULL, ignorable=True),
            ],
        ),
        Field("ClusterId", "string", "2+", nullable_versions="2+", default=NULL, ignorable=True),
        Field("ControllerId", "int32", "1+", default=-1, ignorable=True),
        Field(
            "Topics",
            "[]MetadataResponseTopic",
            "0+",
            fields=[
                Field("ErrorCode", "int16", "0+"),
                Field("Name", "string", "0+", nullable_versions="12+", map_key=True),
                Field("TopicId", "uuid", "10+", ignorable=True),
                Field("IsInternal", "bool", "1+", default=False, ignorable=True),
                Field(
                    "Partitions",
                    "[]MetadataResponsePartition",
                    "0+",
                    fields=[
                        Field("ErrorCode", "int16", "0+"),
                        Field("PartitionIndex", "int32", "0+"),
                        Field("LeaderId", "int32", "0+"),
                        Field("LeaderEpoch", "int32", "7+", default=-1, ignorable=True),
                        Field("ReplicaNodes", "[]int32", "0+"),
                        Field("IsrNodes", "[]int32", "0+"),
                        Field("OfflineReplicas", "[]int32", "5+", ignorable=True),
                    ],
                ),
                Field("TopicAuthorizedOperations", "int32", "8+", default=-2147483648),
            ],
        ),
        Field("ClusterAuthorizedOperations", "int32", "8-10", default=-2147483648),
        Field("ErrorCode", "int16", "13+", ignorable=True),
    ],
)


FindCoordinatorRequest = message(
    "FindCoordinatorRequest",
    api_key=10,
    kind="request",
    valid="0-6",
    flexible="3+",
    fields=[
        Field("Key", "string", "0-3"),
        Field("KeyType", "int8", "1+", default=0),
        Field("CoordinatorKeys", "[]string", "4+"),
    ],
)


FindCoordinatorResponse = message(
    "FindCoordinatorResponse",
    api_key=10,
    kind="response",
    valid="0-6",
    flexible="3+",
    fields=[
        Field("ThrottleTimeMs", "int32", "1+", ignorable=True),
        Field("ErrorCode", "int16", "0-3"),
        Field("ErrorMessage", "string", "1-3", nullable_versions="1-3", ignorable=True),
        Field("NodeId", "int32", "0-3"),
        Field("Host", "string", "0-3"),
        Field("Port", "int32", "0-3"),
        Field(
            "Coordinators",
            "[]Coordinator",
            "4+",
            fields=[
                Field("Key", "string", "4+"),
                Field("NodeId", "int32", "4+"),
                Field("Host", "string", "4+"),
                Field("Port", "int32", "4+"),
                Field("ErrorCode", "int16", "4+"),
                Field("ErrorMessage", "string", "4+", nullable_versions="4+", ignorable=True),
            ],
        ),
    ],
)


DescribeClusterRequest = message(
    "DescribeClusterRequest",
    api_key=60,
    kind="request",
    valid="0-2",
    flexible="0+",
    fields=[
        Field("IncludeClusterAuthorizedOperations", "bool", "0+"),
        Field("EndpointType", "int8", "1+", default=1),
        Field("IncludeFencedBrokers", "bool", "2+"),
    ],
)


DescribeClusterResponse = message(
    "DescribeClusterResponse",
    api_key=60,
    kind="response",
    valid="0-2",
    flexible="0+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+"),
        Field("ErrorCode", "int16", "0+"),
        Field("ErrorMessage", "string", "0+", nullable_versions="0+", default=NULL),
        Field("EndpointType", "int8", "1+", default=1),
        Field("ClusterId", "string", "0+"),
        Field("ControllerId", "int32", "0+", default=-1),
        Field(
            "Brokers",
            "[]DescribeClusterBroker",
            "0+",
            fields=[
                Field("BrokerId", "int32", "0+", map_key=True),
                Field("Host", "string", "0+"),
                Field("Port", "int32", "0+"),
                Field("Rack", "string", "0+", nullable_versions="0+", default=NULL),
                Field("IsFenced", "bool", "2+"),
            ],
        ),
        Field("ClusterAuthorizedOperations", "int32", "0+", default=-2147483648),
    ],
)
