"""InitProducerId: how an idempotent producer (kafka-python's default) gets its producer id.

Declared so the proxy logs a producer's whole exchange decoded. Transcribed from Apache Kafka's
message JSON (4.1).
"""

from kconform.codecs.schema import Field, message

__all__ = ["InitProducerIdRequest", "InitProducerIdResponse"]

InitProducerIdRequest = message(
    "InitProducerIdRequest",
    api_key=22,
    kind="request",
    valid="0-6",
    flexible="2+",
    fields=[
        Field("TransactionalId", "string", "0+", nullable_versions="0+"),
        Field("TransactionTimeoutMs", "int32", "0+"),
        Field("ProducerId", "int64", "3+", default=-1),
        Field("ProducerEpoch", "int16", "3+", default=-1),
        Field("Enable2Pc", "bool", "6+", default=False),
        Field("KeepPreparedTxn", "bool", "6+", default=False),
    ],
)


InitProducerIdResponse = message(
    "InitProducerIdResponse",
    api_key=22,
    kind="response",
    valid="0-6",
    flexible="2+",
    fields=[
        Field("ThrottleTimeMs", "int32", "0+", ignorable=True),
        Field("ErrorCode", "int16", "0+"),
        Field("ProducerId", "int64", "0+", default=-1),
        Field("ProducerEpoch", "int16", "0+"),
        Field("OngoingTxnProducerId", "int64", "6+", default=-1),
        Field("OngoingTxnProducerEpoch", "int16", "6+", default=-1),
    ],
)
