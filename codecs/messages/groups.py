"""Consumer-group coordination, declared so the proxy logs a consumer's whole exchange decoded.

JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit and OffsetFetch, transcribed from Apache
Kafka's message JSON (4.1) with validVersions opened down to 0 as for the data-path messages.
"""

from kconform.codecs.schema import NULL, Field, message

__all__ = [
    "HeartbeatRequest",
    "HeartbeatResponse",
    "JoinGroupRequest",
    "JoinGroupResponse",
    "LeaveGroupRequest",
    "LeaveGroupResponse",
    "OffsetCommitRequest",
    "OffsetCommitResponse",
    "OffsetFetchRequest",
    "OffsetFetchResponse",
    "SyncGroupRequest",
    "SyncGroupResponse",
]

JoinGroupRequest = message(
    "JoinGroupRequest",
    api_key=11,
    kind="request",
    valid="0-9",
    flexible="6+",
    fields=[
        Field("GroupId", "string", "0+"),
        Field("SessionTimeoutMs", "int32", "0+"),
        Field("RebalanceTimeoutMs", "int32", "1+", default=-1, ignorable=True),
        Field("MemberId", "string", "0+"),
        Field("GroupInstanceId", "string", "5+", nullable_versions="5+", default=NULL),
        Field("ProtocolType", "string", "0+"),
        Field(
            "Protocols",
            "[]JoinGroupRequestProtocol",
            "0+",
            fields=[
                Field("Name", "string", "0+", map_key=True),
                Field("Metadata", "bytes", "0+"),
            ],
        ),
        Field("Reason", "string", "8+", nullable_versions="8+", default=NULL, ignorable=True),
    ],
)


JoinGroupResponse = message(
    "JoinGroupResponse",
    api_key=11,
    kind="response",
    valid="0-9",
    flexible="6+",
    fields=[
        Field("ThrottleTimeMs", "int32", "2+", ignorable=True),
        Field("ErrorCode", "int16", "0+"),
        Field("GenerationId", "int32", "0+", default=-1),
        Field("ProtocolType", "string", "7+", nullable_versions="7+", default=NULL, ignorable=True),
        Field("ProtocolName", "string", "0+", nullable_versions="7+"),
        Field("Leader", "string", "0+"),
        Field("SkipAssignment", "bool", "9+", default=False),
        Field("MemberId", "string", "0+"),
        Field(
            "Members",
            "[]JoinGroupResponseMember",
            "0+",
            fields=[
                Field("MemberId", "string", "0+"),
                Field(
                    "GroupInstanceId",
                    "string",
                    "5+",
                    nullable_versions="5+",
                    default=NULL,
                    ignorable=True,
                ),
                Field("Metadata", "bytes", "0+"),
            ],
        ),
    ],
)


SyncGroupRequest = message(
    "SyncGroupRequest",
    api_key=14,
    kind="request",
    valid="0-5",
    flexible="4+",
    fields=[
        Field("GroupId", "string", "0+"),
        Field("GenerationId", "int32", "0+"),
        Field("MemberId", "string", "0+"),
        Field("GroupInstanceId", "string", "3+", nullable_versions="3+", default=NULL),
        Field("ProtocolType", "string", "5+", nullable_versions="5+", default=NULL, ignorable=True),
        Field("ProtocolName", "string", "5+", nullable_versions="5+", default=NULL, ignorable=True),
        Field(
            "Assignments",
            "[]SyncGroupRequestAssignment",
            "0+",
            fields=[
                Field("MemberId", "string", "0+"),
                Field("Assignment", "bytes", "0+"),
            ],
        ),
    ],
)


SyncGroupResponse = message(
    "SyncGroupResponse",
    api_key=14,
    kind="response",
    valid="0-5",
    flexible="4+",
    fields=[
        Field("ThrottleTimeMs", "int32", "1+", ignorable=True),
        Field("ErrorCode", "int16", "0+"),
        Field("ProtocolType", "string", "5+", nullable_versions="5+", default=NULL, ignorable=True),
        Field("ProtocolName", "string", "5+", nullable_versions="5+", default=NULL, ignorable=True),
        Field("Assignment", "bytes", "0+"),
    ],
)


HeartbeatRequest = message(
    "HeartbeatRequest",
    api_key=12,
    kind="request",
    valid="0-4",
    flexible="4+",
    fields=[
        Field("GroupId", "string", "0+"),
        Field("GenerationId", "int32", "0+"),
        Field("MemberId", "string", "0+"),
        Field("GroupInstanceId", "string", "3+", nullable_versions="3+", default=NULL),
    ],
)


HeartbeatResponse = message(
    "HeartbeatResponse",
    api_key=12,
    kind="response",
    valid="0-4",
    flexible="4+",
    fields=[
        Field("ThrottleTimeMs", "int32", "1+", ignorable=True),
        Field("ErrorCode", "int16", "0+"),
    ],
)


LeaveGroupRequest = message(
    "LeaveGroupRequest",
    api_key=13,
    kind="request",
    valid="0-5",
    flexible="4+",
    fields=[
        Field("GroupId", "string", "0+"),
        Field("MemberId", "string", "0-2"),
        Field(
            "Members",
            "[]MemberIdentity",
            "3+",
            fields=[
                Field("MemberId", "string", "3+"),
                Field("GroupInstanceId", "string", "3+", nullable_versions="3+", default=NULL),
                Field(
                    "Reason", "string", "5+", nullable_versions="5+", default=NULL, ignorable=True
                ),
            ],
        ),
    ],
)


LeaveGroupResponse = message(
    "LeaveGroupResponse",
    api_key=13,
    kind="response",
    valid="0-5",
    flexible="4+",
    fields=[
        Field("ThrottleTimeMs", "int32", "1+", ignorable=True),
        Field("ErrorCode", "int16", "0+"),
        Field(
            "Members",
            "[]MemberResponse",
            "3+",
            fields=[
                Field("MemberId", "string", "3+"),
                Field("GroupInstanceId", "string", "3+", nullable_versions="3+"),
                Field("ErrorCode", "int16", "3+"),
            ],
        ),
    ],
)


OffsetCommitRequest = message(
    "OffsetCommitRequest",
    api_key=8,
    kind="request",
    valid="0-10",
    flexible="8+",
    fields=[
        Field("GroupId", "string", "0+"),
        Field("GenerationIdOrMemberEpoch", "int32", "1+", default=-1, ignorable=True),
        Field("MemberId", "string", "1+", ignorable=True),
        Field("GroupInstanceId", "string", "7+", nullable_versions="7+", default=NULL),
        Field("RetentionTimeMs", "int64", "2-4", default=-1, ignorable=True),
        Field(
            "Topics",
            "[]OffsetCommitRequestTopic",
            "0+",
            fields=[
                Field("Name", "string", "0-9", ignorable=True),
                Field("TopicId", "uuid", "10+", ignorable=True),
                Field(
                    "Partitions",
                    "[]OffsetCommitRequestPartition",
                    "0+",
                    fields=[
                        Field("PartitionIndex", "int32", "0+"),
                        Field("CommittedOffset", "int64", "0+"),
                        Field("CommittedLeaderEpoch", "int32", "6+", default=-1, ignorable=True),
                        Field("CommitTimestamp", "int64", "1", default=-1),
                        Field("CommittedMetadata", "string", "0+", nullable_versions="0+"),
                    ],
                ),
            ],
        ),
    ],
)


OffsetCommitResponse = message(
    "OffsetCommitResponse",
    api_key=8,
    kind="response",
    valid="0-10",
    flexible="8+",
    fields=[
        Field("ThrottleTimeMs", "int32", "3+", ignorable=True),
        Field(
            "Topics",
            "[]OffsetCommitResponseTopic",
            "0+",
            fields=[
                Field("Name", "string", "0-9", ignorable=True),
                Field("TopicId", "uuid", "10+", ignorable=True),
                Field(
                    "Partitions",
                    "[]OffsetCommitResponsePartition",
                    "0+",
                    fields=[
                        Field("PartitionIndex", "int32", "0+"),
                        Field("ErrorCode", "int16", "0+"),
                    ],
                ),
            ],
        ),
    ],
)


OffsetFetchRequest = message(
    "OffsetFetchRequest",
    api_key=9,
    kind="request",
    valid="0-10",
    flexible="6+",
    fields=[
        Field("GroupId", "string", "0-7"),
        Field(
            "Topics",
            "[]OffsetFetchRequestTopic",
            "0-7",
            nullable_versions="2-7",
            fields=[
                Field("Name", "string", "0-7"),
                Field("PartitionIndexes", "[]int32", "0-7"),
            ],
        ),
        Field(
            "Groups",
            "[]OffsetFetchRequestGroup",
            "8+",
            fields=[
                Field("GroupId", "string", "8+"),
                Field(
                    "MemberId", "string", "9+", nullable_versions="9+", default=NULL, ignorable=True
                ),
                Field("MemberEpoch", "int32", "9+", default=-1, ignorable=True),
                Field(
                    "Topics",
                    "[]OffsetFetchRequestTopics",
                    "8+",
                    nullable_versions="8+",
                    fields=[
                        Field("Name", "string", "8-9", ignorable=True),
                        Field("TopicId", "uuid", "10+", ignorable=True),
                        Field("PartitionIndexes", "[]int32", "8+"),
                    ],
                ),
            ],
        ),
        Field("RequireStable", "bool", "7+", default=False),
    ],
)


OffsetFetchResponse = message(
    "OffsetFetchResponse",
    api_key=9,
    kind="response",
    valid="0-10",
    flexible="6+",
    fields=[
        Field("ThrottleTimeMs", "int32", "3+", ignorable=True),
        Field(
            "Topics",
            "[]OffsetFetchResponseTopic",
            "0-7",
            fields=[
                Field("Name", "string", "0-7"),
                Field(
                    "Partitions",
                    "[]OffsetFetchResponsePartition",
                    "0-7",
                    fields=[
                        Field("PartitionIndex", "int32", "0-7"),
                        Field("CommittedOffset", "int64", "0-7"),
                        Field("CommittedLeaderEpoch", "int32", "5-7", default=-1, ignorable=True),
                        Field("Metadata", "string", "0-7", nullable_versions="0-7"),
                        Field("ErrorCode", "int16", "0-7"),
                    ],
                ),
            ],
        ),
        Field("ErrorCode", "int16", "2-7", default=0, ignorable=True),
        Field(
            "Groups",
            "[]OffsetFetchResponseGroup",
            "8+",
            fields=[
                Field("GroupId", "string", "8+"),
                Field(
                    "Topics",
                    "[]OffsetFetchResponseTopics",
                    "8+",
                    fields=[
                        Field("Name", "string", "8-9", ignorable=True),
                        Field("TopicId", "uuid", "10+", ignorable=True),
                        Field(
                            "Partitions",
                            "[]OffsetFetchResponsePartitions",
                            "8+",
                            fields=[
                                Field("PartitionIndex", "int32", "8+"),
                                Field("CommittedOffset", "int64", "8+"),
                                Field(
                                    "CommittedLeaderEpoch",
                                    "int32",
                                    "8+",
                                    default=-1,
                                    ignorable=True,
                                ),
                                Field("Metadata", "string", "8+", nullable_versions="8+"),
                                Field("ErrorCode", "int16", "8+"),
                            ],
                        ),
                    ],
                ),
                Field("ErrorCode", "int16", "8+", default=0),
            ],
        ),
    ],
)
