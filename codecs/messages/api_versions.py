"""ApiVersions (key 18), KIP-511: v3+ carries ClientSoftwareName/Version; v4 only fixes KAFKA-17011;
v5 (KIP-1242) adds the request's ClusterId and NodeId, checked by the broker, which may answer
REBOOTSTRAP_REQUIRED; the v5 response has no new field.

ApiVersions responses always use response header v0, whatever the version (see headers.py).
Transcribed from Apache Kafka's ApiVersions{Request,Response}.json (4.4.0, read from
kafka-clients-4.4.0.jar `common/message/`; v0-v4 as in 4.1)."""

from kconform.codecs.schema import NULL, Field, message

__all__ = ["ApiVersionsRequest", "ApiVersionsResponse"]

ApiVersionsRequest = message(
    "ApiVersionsRequest",
    api_key=18,
    kind="request",
    valid="0-5",
    flexible="3+",
    fields=[
        Field("ClientSoftwareName", "string", "3+", ignorable=True),
        Field("ClientSoftwareVersion", "string", "3+", ignorable=True),
        Field("ClusterId", "string", "5+", nullable_versions="5+", default=NULL, ignorable=True),
        Field("NodeId", "int32", "5+", default=-1, ignorable=True),
    ],
)


ApiVersionsResponse = message(
    "ApiVersionsResponse",
    api_key=18,
    kind="response",
    valid="0-5",
    flexible="3+",
    fields=[
        Field("ErrorCode", "int16", "0+"),
        Field(
            "ApiKeys",
            "[]ApiVersion",
            "0+",
            fields=[
                Field("ApiKey", "int16", "0+", map_key=True),
                Field("MinVersion", "int16", "0+"),
                Field("MaxVersion", "int16", "0+"),
            ],
        ),
        Field("ThrottleTimeMs", "int32", "1+", ignorable=True),
        Field(
            "SupportedFeatures",
            "[]SupportedFeatureKey",
            "3+",
            tag=0,
            tagged_versions="3+",
            ignorable=True,
            fields=[
                Field("Name", "string", "3+", map_key=True),
                Field("MinVersion", "int16", "3+"),
                Field("MaxVersion", "int16", "3+"),
            ],
        ),
        Field(
            "FinalizedFeaturesEpoch",
            "int64",
            "3+",
            tag=1,
            tagged_versions="3+",
            default=-1,
            ignorable=True,
        ),
        Field(
            "FinalizedFeatures",
            "[]FinalizedFeatureKey",
            "3+",
            tag=2,
            tagged_versions="3+",
            ignorable=True,
            fields=[
                Field("Name", "string", "3+", map_key=True),
                Field("MaxVersionLevel", "int16", "3+"),
                Field("MinVersionLevel", "int16", "3+"),
            ],
        ),
        Field(
            "ZkMigrationReady",
            "bool",
            "3+",
            tag=3,
            tagged_versions="3+",
            default=False,
            ignorable=True,
        ),
    ],
)
