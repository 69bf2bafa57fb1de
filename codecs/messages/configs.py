"""Config APIs that manage CLIENT_METRICS subscriptions (resource type 16) and broker configs.

DescribeConfigs, AlterConfigs and IncrementalAlterConfigs in every version Kafka 3.7-4.1 serves;
key 74 as ListConfigResources v0-1 (4.1, KIP-1142) and as its 3.7-4.0 name,
ListClientMetricsResources v0 (wire-identical to ListConfigResources v0).
Transcribed from Apache Kafka's message JSON."""

from kconform.codecs.schema import Field, message

__all__ = [
    "AlterConfigsRequest",
    "AlterConfigsResponse",
    "DescribeConfigsRequest",
    "DescribeConfigsResponse",
    "IncrementalAlterConfigsRequest",
    "IncrementalAlterConfigsResponse",
    "ListClientMetricsResourcesRequest",
    "ListClientMetricsResourcesResponse",
    "ListConfigResourcesRequest",
    "ListConfigResourcesResponse",
]

DescribeConfigsRequest = message(
    "DescribeConfigsRequest",
    api_key=32,
    kind="request",
    valid="0-4",
    flexible="4+",
    fields=[
        Field(
            "Resources",
            "[]DescribeConfigsResource",
            "0+",
            fields=[
                Field("ResourceType", "int8", "0+"),
                Field("ResourceName", "string", "0+"),
                Field("ConfigurationKeys", "[]string", "0+", nullable_versions="0+"),
            ],
        ),
        Field("IncludeSynonyms", "bool", "1+", default=False),
        Field("IncludeDocumentation", "bool", "3+", default=False),
    ],
)


DescribeConfigsResponse = message(
    "DescribeConfigsResponse",
    api_key=32,
    kind="response",
    valid="0-4",
    flexible="4+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+"),
        Field(
            "Results",
            "[]DescribeConfigsResult",
            "0+",
            fields=[
                Field("ErrorCode", "int16", "0+"),
                Field("ErrorMessage", "string", "0+", nullable_versions="0+"),
                Field("ResourceType", "int8", "0+"),
                Field("ResourceName", "string", "0+"),
                Field(
                    "Configs",
                    "[]DescribeConfigsResourceResult",
                    "0+",
                    fields=[
                        Field("Name", "string", "0+"),
                        Field("Value", "string", "0+", nullable_versions="0+"),
                        Field("ReadOnly", "bool", "0+"),
                        Field("ConfigSource", "int8", "1+", default=-1, ignorable=True),
                        Field("IsDefault", "bool", "0"),
                        Field("IsSensitive", "bool", "0+"),
                        Field(
                            "Synonyms",
                            "[]DescribeConfigsSynonym",
                            "1+",
                            ignorable=True,
                            fields=[
                                Field("Name", "string", "1+"),
                                Field("Value", "string", "1+", nullable_versions="0+"),
                                Field("Source", "int8", "1+"),
                            ],
                        ),
                        Field("ConfigType", "int8", "3+", default=0, ignorable=True),
                        Field(
                            "Documentation", "string", "3+", nullable_versions="0+", ignorable=True
                        ),
                    ],
                ),
            ],
        ),
    ],
)


AlterConfigsRequest = message(
    "AlterConfigsRequest",
    api_key=33,
    kind="request",
    valid="0-2",
    flexible="2+",
    fields=[
        Field(
            "Resources",
            "[]AlterConfigsResource",
            "0+",
            fields=[
                Field("ResourceType", "int8", "0+", map_key=True),
                Field("ResourceName", "string", "0+", map_key=True),
                Field(
                    "Configs",
                    "[]AlterableConfig",
                    "0+",
                    fields=[
                        Field("Name", "string", "0+", map_key=True),
                        Field("Value", "string", "0+", nullable_versions="0+"),
                    ],
                ),
            ],
        ),
        Field("ValidateOnly", "bool", "0+"),
    ],
)


AlterConfigsResponse = message(
    "AlterConfigsResponse",
    api_key=33,
    kind="response",
    valid="0-2",
    flexible="2+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+"),
        Field(
            "Responses",
            "[]AlterConfigsResourceResponse",
            "0+",
            fields=[
                Field("ErrorCode", "int16", "0+"),
                Field("ErrorMessage", "string", "0+", nullable_versions="0+"),
                Field("ResourceType", "int8", "0+"),
                Field("ResourceName", "string", "0+"),
            ],
        ),
    ],
)


IncrementalAlterConfigsRequest = message(
    "IncrementalAlterConfigsRequest",
    api_key=44,
    kind="request",
    valid="0-1",
    flexible="1+",
    fields=[
        Field(
            "Resources",
            "[]AlterConfigsResource",
            "0+",
            fields=[
                Field("ResourceType", "int8", "0+", map_key=True),
                Field("ResourceName", "string", "0+", map_key=True),
                Field(
                    "Configs",
                    "[]AlterableConfig",
                    "0+",
                    fields=[
                        Field("Name", "string", "0+", map_key=True),
                        Field("ConfigOperation", "int8", "0+", map_key=True),
                        Field("Value", "string", "0+", nullable_versions="0+"),
                    ],
                ),
            ],
        ),
        Field("ValidateOnly", "bool", "0+"),
    ],
)


IncrementalAlterConfigsResponse = message(
    "IncrementalAlterConfigsResponse",
    api_key=44,
    kind="response",
    valid="0-1",
    flexible="1+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+"),
        Field(
            "Responses",
            "[]AlterConfigsResourceResponse",
            "0+",
            fields=[
                Field("ErrorCode", "int16", "0+"),
                Field("ErrorMessage", "string", "0+", nullable_versions="0+"),
                Field("ResourceType", "int8", "0+"),
                Field("ResourceName", "string", "0+"),
            ],
        ),
    ],
)


ListConfigResourcesRequest = message(
    "ListConfigResourcesRequest",
    api_key=74,
    kind="request",
    valid="0-1",
    flexible="0+",
    fields=[
        Field("ResourceTypes", "[]int8", "1+"),
    ],
)


ListConfigResourcesResponse = message(
    "ListConfigResourcesResponse",
    api_key=74,
    kind="response",
    valid="0-1",
    flexible="0+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+"),
        Field("ErrorCode", "int16", "0+"),
        Field(
            "ConfigResources",
            "[]ConfigResource",
            "0+",
            fields=[
                Field("ResourceName", "string", "0+"),
                Field("ResourceType", "int8", "1+", default=16, ignorable=True),
            ],
        ),
    ],
)


ListClientMetricsResourcesRequest = message(
    "ListClientMetricsResourcesRequest",
    api_key=74,
    kind="request",
    valid="0",
    flexible="0+",
    fields=[],
)


ListClientMetricsResourcesResponse = message(
    "ListClientMetricsResourcesResponse",
    api_key=74,
    kind="response",
    valid="0",
    flexible="0+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+"),
        Field("ErrorCode", "int16", "0+"),
        Field(
            "ClientMetricsResources",
            "[]ClientMetricsResource",
            "0+",
            fields=[
                Field("Name", "string", "0+"),
            ],
        ),
    ],
)
