"""KIP-714 telemetry RPCs: GetTelemetrySubscriptions (key 71) and PushTelemetry (key 72).

Both are v0 only and flexible from v0, so they use request header v2 and response header v1.
Field order is the wire order of Apache Kafka's schemas (3.7.0-4.1.0 identical, §A.2).
"""

from kconform.codecs.schema import Field, message

__all__ = [
    "GetTelemetrySubscriptionsRequest",
    "GetTelemetrySubscriptionsResponse",
    "PushTelemetryRequest",
    "PushTelemetryResponse",
]

GetTelemetrySubscriptionsRequest = message(
    "GetTelemetrySubscriptionsRequest",
    api_key=71,
    kind="request",
    valid="0",
    flexible="0+",
    fields=[
        Field("ClientInstanceId", "uuid", "0+", about="zero on the first request"),
    ],
)

GetTelemetrySubscriptionsResponse = message(
    "GetTelemetrySubscriptionsResponse",
    api_key=71,
    kind="response",
    valid="0",
    flexible="0+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+"),
        Field("ErrorCode", "int16", "0+"),
        Field("ClientInstanceId", "uuid", "0+"),
        Field("SubscriptionId", "int32", "0+"),
        Field("AcceptedCompressionTypes", "[]int8", "0+", about="in preference order"),
        Field("PushIntervalMs", "int32", "0+"),
        Field("TelemetryMaxBytes", "int32", "0+"),
        Field("DeltaTemporality", "bool", "0+"),
        Field("RequestedMetrics", "[]string", "0+", about='metric name prefixes; ["*"] = all'),
    ],
)

PushTelemetryRequest = message(
    "PushTelemetryRequest",
    api_key=72,
    kind="request",
    valid="0",
    flexible="0+",
    fields=[
        Field("ClientInstanceId", "uuid", "0+"),
        Field("SubscriptionId", "int32", "0+"),
        Field("Terminating", "bool", "0+"),
        Field("CompressionType", "int8", "0+"),
        Field("Metrics", "bytes", "0+", about="OTLP MetricsData, compressed per CompressionType"),
    ],
)

PushTelemetryResponse = message(
    "PushTelemetryResponse",
    api_key=72,
    kind="response",
    valid="0",
    flexible="0+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+"),
        Field("ErrorCode", "int16", "0+"),
    ],
)
