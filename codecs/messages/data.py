"""Data-path messages the volume checks and the KIP-977 meters read: Produce, Fetch, ListOffsets.

Record batches stay opaque bytes here (`records`); `kconform.codecs.records` reads their headers.
Transcribed from Apache Kafka's message JSON (4.1), with validVersions opened down to 0 as the
JSON still declares the old versions' fields (Kafka 3.7 serves them)."""

from kconform.codecs.schema import NULL, Field, message

__all__ = [
    "FetchRequest",
    "FetchResponse",
    "ListOffsetsRequest",
    "ListOffsetsResponse",
    "ProduceRequest",
    "ProduceResponse",
]

ProduceRequest = message(
    "ProduceRequest",
    api_key=0,
    kind="request",
    valid="0-13",
    flexible="9+",
    fields=[
        Field("TransactionalId", "string", "3+", nullable_versions="3+", default=NULL),
        Field("Acks", "int16", "0+"),
        Field("TimeoutMs", "int32", "0+"),
        Field(
            "TopicData",
            "[]TopicProduceData",
            "0+",
            fields=[
                Field("Name", "string", "0-12", ignorable=True, map_key=True),
                Field("TopicId", "uuid", "13+", ignorable=True, map_key=True),
                Field(
                    "PartitionData",
                    "[]PartitionProduceData",
                    "0+",
                    fields=[
                        Field("Index", "int32", "0+"),
                        Field("Records", "records", "0+", nullable_versions="0+"),
                    ],
                ),
            ],
        ),
    ],
)


ProduceResponse = message(
    "ProduceResponse",
    api_key=0,
    kind="response",
    valid="0-13",
    flexible="9+",
    fields=[
        Field(
            "Responses",
            "[]TopicProduceResponse",
            "0+",
            fields=[
                Field("Name", "string", "0-12", ignorable=True, map_key=True),
                Field("TopicId", "uuid", "13+", ignorable=True, map_key=True),
                Field(
                    "PartitionResponses",
                    "[]PartitionProduceResponse",
                    "0+",
                    fields=[
                        Field("Index", "int32", "0+"),
                        Field("ErrorCode", "int16", "0+"),
                        Field("BaseOffset", "int64", "0+"),
                        Field("LogAppendTimeMs", "int64", "2+", default=-1, ignorable=True),
                        Field("LogStartOffset", "int64", "5+", default=-1, ignorable=True),
                        Field(
                            "RecordErrors",
                            "[]BatchIndexAndErrorMessage",
                            "8+",
                            ignorable=True,
                            fields=[
                                Field("BatchIndex", "int32", "8+"),
                                Field(
                                    "BatchIndexErrorMessage",
                                    "string",
                                    "8+",
                                    nullable_versions="8+",
                                    default=NULL,
                                ),
                            ],
                        ),
                        Field(
                            "ErrorMessage",
                            "string",
                            "8+",
                            nullable_versions="8+",
                            default=NULL,
                            ignorable=True,
                        ),
                        Field(
                            "CurrentLeader",
                            "LeaderIdAndEpoch",
                            "10+",
                            tag=0,
                            tagged_versions="10+",
                            fields=[
                                Field("LeaderId", "int32", "10+", default=-1),
                                Field("LeaderEpoch", "int32", "10+", default=-1),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        Field("ThrottleTimeMs", "int32", "1+", default=0, ignorable=True),
        Field(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "10+",
            tag=0,
            tagged_versions="10+",
            fields=[
                Field("NodeId", "int32", "10+", map_key=True),
                Field("Host", "string", "10+"),
                Field("Port", "int32", "10+"),
                Field("Rack", "string", "10+", nullable_versions="10+", default=NULL),
            ],
        ),
    ],
)


FetchRequest = message(
    "FetchRequest",
    api_key=1,
    kind="request",
    valid="0-18",
    flexible="12+",
    fields=[
        Field(
            "ClusterId",
            "string",
            "12+",
            nullable_versions="12+",
            tag=0,
            tagged_versions="12+",
            default=NULL,
            ignorable=True,
        ),
        Field("ReplicaId", "int32", "0-14", default=-1),
        Field(
            "ReplicaState",
            "ReplicaState",
            "15+",
            tag=1,
            tagged_versions="15+",
            fields=[
                Field("ReplicaId", "int32", "15+", default=-1),
                Field("ReplicaEpoch", "int64", "15+", default=-1),
            ],
        ),
        Field("MaxWaitMs", "int32", "0+"),
        Field("MinBytes", "int32", "0+"),
        Field("MaxBytes", "int32", "3+", default=2147483647, ignorable=True),
        Field("IsolationLevel", "int8", "4+", default=0, ignorable=True),
        Field("SessionId", "int32", "7+", default=0, ignorable=True),
        Field("SessionEpoch", "int32", "7+", default=-1, ignorable=True),
        Field(
            "Topics",
            "[]FetchTopic",
            "0+",
            fields=[
                Field("Topic", "string", "0-12", ignorable=True),
                Field("TopicId", "uuid", "13+", ignorable=True),
                Field(
                    "Partitions",
                    "[]FetchPartition",
                    "0+",
                    fields=[
                        Field("Partition", "int32", "0+"),
                        Field("CurrentLeaderEpoch", "int32", "9+", default=-1, ignorable=True),
                        Field("FetchOffset", "int64", "0+"),
                        Field("LastFetchedEpoch", "int32", "12+", default=-1),
                        Field("LogStartOffset", "int64", "5+", default=-1, ignorable=True),
                        Field("PartitionMaxBytes", "int32", "0+"),
                        Field(
                            "ReplicaDirectoryId",
                            "uuid",
                            "17+",
                            tag=0,
                            tagged_versions="17+",
                            ignorable=True,
                        ),
                        Field(
                            "HighWatermark",
                            "int64",
                            "18+",
                            tag=1,
                            tagged_versions="18+",
                            default=9223372036854775807,
                            ignorable=True,
                        ),
                    ],
                ),
            ],
        ),
        Field(
            "ForgottenTopicsData",
            "[]ForgottenTopic",
            "7+",
            fields=[
                Field("Topic", "string", "7-12", ignorable=True),
                Field("TopicId", "uuid", "13+", ignorable=True),
                Field("Partitions", "[]int32", "7+"),
            ],
        ),
        Field("RackId", "string", "11+", default="", ignorable=True),
    ],
)


FetchResponse = message(
    "FetchResponse",
    api_key=1,
    kind="response",
    valid="0-18",
    flexible="12+",
    fields=[
        Field("ThrottleTimeMs", "int32", "1+", ignorable=True),
        Field("ErrorCode", "int16", "7+", ignorable=True),
        Field("SessionId", "int32", "7+", default=0),
        Field(
            "Responses",
            "[]FetchableTopicResponse",
            "0+",
            fields=[
                Field("Topic", "string", "0-12", ignorable=True),
                Field("TopicId", "uuid", "13+", ignorable=True),
                Field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        Field("PartitionIndex", "int32", "0+"),
                        Field("ErrorCode", "int16", "0+"),
                        Field("HighWatermark", "int64", "0+"),
                        Field("LastStableOffset", "int64", "4+", default=-1, ignorable=True),
                        Field("LogStartOffset", "int64", "5+", default=-1, ignorable=True),
                        Field(
                            "DivergingEpoch",
                            "EpochEndOffset",
                            "12+",
                            tag=0,
                            tagged_versions="12+",
                            fields=[
                                Field("Epoch", "int32", "12+", default=-1),
                                Field("EndOffset", "int64", "12+", default=-1),
                            ],
                        ),
                        Field(
                            "CurrentLeader",
                            "LeaderIdAndEpoch",
                            "12+",
                            tag=1,
                            tagged_versions="12+",
                            fields=[
                                Field("LeaderId", "int32", "12+", default=-1),
                                Field("LeaderEpoch", "int32", "12+", default=-1),
                            ],
                        ),
                        Field(
                            "SnapshotId",
                            "SnapshotId",
                            "12+",
                            tag=2,
                            tagged_versions="12+",
                            fields=[
                                Field("EndOffset", "int64", "0+", default=-1),
                                Field("Epoch", "int32", "0+", default=-1),
                            ],
                        ),
                        Field(
                            "AbortedTransactions",
                            "[]AbortedTransaction",
                            "4+",
                            nullable_versions="4+",
                            ignorable=True,
                            fields=[
                                Field("ProducerId", "int64", "4+"),
                                Field("FirstOffset", "int64", "4+"),
                            ],
                        ),
                        Field("PreferredReadReplica", "int32", "11+", default=-1),
                        Field("Records", "records", "0+", nullable_versions="0+"),
                    ],
                ),
            ],
        ),
        Field(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "16+",
            tag=0,
            tagged_versions="16+",
            fields=[
                Field("NodeId", "int32", "16+", map_key=True),
                Field("Host", "string", "16+"),
                Field("Port", "int32", "16+"),
                Field("Rack", "string", "16+", nullable_versions="16+", default=NULL),
            ],
        ),
    ],
)


ListOffsetsRequest = message(
    "ListOffsetsRequest",
    api_key=2,
    kind="request",
    valid="0-11",
    flexible="6+",
    fields=[
        Field("ReplicaId", "int32", "0+"),
        Field("IsolationLevel", "int8", "2+"),
        Field(
            "Topics",
            "[]ListOffsetsTopic",
            "0+",
            fields=[
                Field("Name", "string", "0+"),
                Field(
                    "Partitions",
                    "[]ListOffsetsPartition",
                    "0+",
                    fields=[
                        Field("PartitionIndex", "int32", "0+"),
                        Field("CurrentLeaderEpoch", "int32", "4+", default=-1, ignorable=True),
                        Field("Timestamp", "int64", "0+"),
                        Field("MaxNumOffsets", "int32", "0", default=1),
                    ],
                ),
            ],
        ),
        Field("TimeoutMs", "int32", "10+", ignorable=True),
    ],
)


ListOffsetsResponse = message(
    "ListOffsetsResponse",
    api_key=2,
    kind="response",
    valid="0-11",
    flexible="6+",
    fields=[
        Field("ThrottleTimeMs", "int32", "2+", ignorable=True),
        Field(
            "Topics",
            "[]ListOffsetsTopicResponse",
            "0+",
            fields=[
                Field("Name", "string", "0+"),
                Field(
                    "Partitions",
                    "[]ListOffsetsPartitionResponse",
                    "0+",
                    fields=[
                        Field("PartitionIndex", "int32", "0+"),
                        Field("ErrorCode", "int16", "0+"),
                        Field("OldStyleOffsets", "[]int64", "0"),
                        Field("Timestamp", "int64", "1+", default=-1),
                        Field("Offset", "int64", "1+", default=-1),
                        Field("LeaderEpoch", "int32", "4+", default=-1),
                    ],
                ),
            ],
        ),
    ],
)
