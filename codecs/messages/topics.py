"""Topic administration: CreateTopics (key 19) and DeleteTopics (key 20).

The harness creates the topics its cases produce to on clusters it does not control, so it needs
these the way `kafka-topics.sh --create --if-not-exists` / `--delete` use them.

Transcribed from Apache Kafka's message JSON (4.1, where CreateTopics is 2-7 and DeleteTopics 1-6);
the versions 4.0 removed (CreateTopics 0-1, DeleteTopics 0) are kept as 3.7's JSON declares them,
so every version a 3.7+ broker or today's clients speak decodes. Field names are spelt as the JSON
spells them, including CreateTopicsRequest's lower-case ``timeoutMs`` and ``validateOnly``.
"""

from kconform.codecs.schema import NULL, Field, message

__all__ = [
    "CreateTopicsRequest",
    "CreateTopicsResponse",
    "DeleteTopicsRequest",
    "DeleteTopicsResponse",
]

CreateTopicsRequest = message(
    "CreateTopicsRequest",
    api_key=19,
    kind="request",
    valid="0-7",
    flexible="5+",
    fields=[
        Field(
            "Topics",
            "[]CreatableTopic",
            "0+",
            fields=[
                Field("Name", "string", "0+", map_key=True),
                Field("NumPartitions", "int32", "0+"),
                Field("ReplicationFactor", "int16", "0+"),
                Field(
                    "Assignments",
                    "[]CreatableReplicaAssignment",
                    "0+",
                    fields=[
                        Field("PartitionIndex", "int32", "0+", map_key=True),
                        Field("BrokerIds", "[]int32", "0+"),
                    ],
                ),
                Field(
                    "Configs",
                    "[]CreatableTopicConfig",  # 3.7 spells it CreateableTopicConfig
                    "0+",
                    fields=[
                        Field("Name", "string", "0+", map_key=True),
                        Field("Value", "string", "0+", nullable_versions="0+"),
                    ],
                ),
            ],
        ),
        Field("timeoutMs", "int32", "0+", default=60000),
        Field("validateOnly", "bool", "1+", default=False),
    ],
)


CreateTopicsResponse = message(
    "CreateTopicsResponse",
    api_key=19,
    kind="response",
    valid="0-7",
    flexible="5+",
    fields=[
        Field("ThrottleTimeMs", "int32", "2+", ignorable=True),
        Field(
            "Topics",
            "[]CreatableTopicResult",
            "0+",
            fields=[
                Field("Name", "string", "0+", map_key=True),
                Field("TopicId", "uuid", "7+", ignorable=True),
                Field("ErrorCode", "int16", "0+"),
                Field("ErrorMessage", "string", "1+", nullable_versions="0+", ignorable=True),
                Field(
                    "TopicConfigErrorCode",
                    "int16",
                    "5+",
                    tag=0,
                    tagged_versions="5+",
                    ignorable=True,
                ),
                Field("NumPartitions", "int32", "5+", default=-1, ignorable=True),
                Field("ReplicationFactor", "int16", "5+", default=-1, ignorable=True),
                Field(
                    "Configs",
                    "[]CreatableTopicConfigs",
                    "5+",
                    nullable_versions="5+",
                    ignorable=True,
                    fields=[
                        Field("Name", "string", "5+"),
                        Field("Value", "string", "5+", nullable_versions="5+"),
                        Field("ReadOnly", "bool", "5+"),
                        Field("ConfigSource", "int8", "5+", default=-1, ignorable=True),
                        Field("IsSensitive", "bool", "5+"),
                    ],
                ),
            ],
        ),
    ],
)


DeleteTopicsRequest = message(
    "DeleteTopicsRequest",
    api_key=20,
    kind="request",
    valid="0-6",
    flexible="4+",
    fields=[
        Field(
            "Topics",
            "[]DeleteTopicState",
            "6+",
            fields=[
                Field("Name", "string", "6+", nullable_versions="6+", default=NULL),
                Field("TopicId", "uuid", "6+"),
            ],
        ),
        Field("TopicNames", "[]string", "0-5", ignorable=True),
        Field("TimeoutMs", "int32", "0+"),
    ],
)


DeleteTopicsResponse = message(
    "DeleteTopicsResponse",
    api_key=20,
    kind="response",
    valid="0-6",
    flexible="4+",
    fields=[
        Field("ThrottleTimeMs", "int32", "1+", ignorable=True),
        Field(
            "Responses",
            "[]DeletableTopicResult",
            "0+",
            fields=[
                Field("Name", "string", "0+", nullable_versions="6+", map_key=True),
                Field("TopicId", "uuid", "6+", ignorable=True),
                Field("ErrorCode", "int16", "0+"),
                Field(
                    "ErrorMessage",
                    "string",
                    "5+",
                    nullable_versions="5+",
                    default=NULL,
                    ignorable=True,
                ),
            ],
        ),
    ],
)
