"""Request header v0-v2 and response header v0-v1.

The header version follows the body's flexibility (§A.3): request header v2 / response header v1
for flexible versions, v1 / v0 otherwise; ApiVersions responses always use response header v0
(KIP-511: a client must read the error before it knows which versions the broker speaks).
`ClientId` stays a classic (non-compact) nullable string even in the flexible header v2.
"""

from kconform.codecs.schema import NULL, Field, message

__all__ = ["RequestHeader", "ResponseHeader"]

RequestHeader = message(
    "RequestHeader",
    kind="header",
    valid="0-2",
    flexible="2+",
    fields=[
        Field("RequestApiKey", "int16", "0+"),
        Field("RequestApiVersion", "int16", "0+"),
        Field("CorrelationId", "int32", "0+"),
        Field("ClientId", "string", "1+", nullable_versions="1+", default=NULL,
              flexible_versions="none"),
    ],
)  # fmt: skip

ResponseHeader = message(
    "ResponseHeader",
    kind="header",
    valid="0-1",
    flexible="1+",
    fields=[Field("CorrelationId", "int32", "0+")],
)
