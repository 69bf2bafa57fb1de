"""KIP-714 client rules: handshake, cadence, compression, errors, termination and payload."""

from __future__ import annotations

from kconform.rules.model import Known, Level, Rule

_REPORTER = "clients/.../telemetry/internals/ClientTelemetryReporter.java"
_UTILS = "clients/.../telemetry/internals/ClientTelemetryUtils.java"
_RDK = "src/rdkafka_telemetry.c"

HANDSHAKE = (
    Rule("kip714.client.handshake.advertised_only", Level.MUST, "KIP-714", "Client behavior",
         "identifies a supporting broker (through detecting at least "
         "GetTelemetrySubscriptionsRequestV0 in the ApiVersionResponse)",
         "A client sends no telemetry request to a broker that does not advertise 71/72.",
         behaviour="E.1"),
    Rule("kip714.client.handshake.instance_id", Level.MUST, "KIP-714", "Client behavior",
         "Subsequent GetTelemetrySubscriptionsRequests must include the ClientInstanceId returned "
         "in the first response, regardless of broker",
         "The first Get carries a Null id; every later request carries the id assigned.",
         behaviour="E.1"),
    Rule("kip714.client.handshake.null_echo", Level.MUST, "KIP-714",
         "GetTelemetrySubscriptionsResponse",
         "Assigned client instance id if ClientInstanceId was Null in the request, else Null",
         "A client keeps its id whether a later Get echoes it or answers Null.",
         ruling=5, behaviour="E.1",
         known=(Known("Java client 3.7.0", "violates: sends the zero id after a Null answer",
                      _REPORTER),)),
    Rule("kip714.client.handshake.single_connection", Level.SHOULD, "KIP-714",
         "Connection selection",
         "It should also keep using the same broker connection for telemetry requests until the "
         "connection goes down",
         "A client sends its telemetry requests over one connection.", behaviour="E.1"),
    Rule("kip714.client.handshake.no_push_without_metrics", Level.MUST, "KIP-714",
         "Client termination",
         "When a client with an active metrics subscription is being shut down",
         "A client whose subscription requests no metrics pushes nothing, not even on close.",
         behaviour="E.1"),
    Rule("kip714.client.handshake.reget_after_interval", Level.SHOULD, "KIP-714",
         "Client behavior",
         "the client should send a new GetTelemetrySubscriptionsRequest after the PushIntervalMs "
         "has expired",
         "With an empty subscription, the client Gets again once per PushIntervalMs.",
         behaviour="E.1"),
    Rule("kip714.client.opt_out", Level.MUST, "KIP-714", "Client configuration",
         "false - The client will not push metrics",
         "With enable.metrics.push=false a client sends no telemetry request.", behaviour="E.1"),
)  # fmt: skip

CADENCE = (
    Rule("kip714.client.cadence.first_push_jitter", Level.SHOULD, "KIP-714", "Client behavior",
         "The first metrics push should be randomized between 0.5 * PushIntervalMs and 1.5 * "
         "PushIntervalMs",
         "The first push after a Get comes 0.5-1.5 x PushIntervalMs after it.",
         ruling=7, behaviour="E.2",
         known=(Known("librdkafka 2.5+", "conforms (0.8-1.2 x)",
                      f"{_RDK} RD_KAFKA_TELEMETRY_PUSH_JITTER"),)),
    Rule("kip714.client.cadence.push_interval", Level.MUST, "KIP-714", "Client behavior",
         "update its push interval timer according to the received PushIntervalMs",
         "Pushes follow one another PushIntervalMs apart.", behaviour="E.1"),
    Rule("kip714.client.cadence.rate_bounded", Level.MUST, "KIP-714",
         "Throttling and rate-limiting",
         "ensures the client does not push telemetry more often than the configured "
         "PushIntervalMs",
         "A zero or negative PushIntervalMs does not make a client flood the broker.",
         behaviour="E.1",
         known=(Known("Java client 3.7.0-4.1.0", "conforms (<= 0 becomes 300000 ms)", _UTILS),)),
)  # fmt: skip

COMPRESSION = (
    Rule("kip714.client.compression.preferred", Level.SHOULD, "KIP-714", "Compression",
         "should pick the first mutually supported type in the returned list",
         "A client compresses with the first type in AcceptedCompressionTypes it supports.",
         ruling=8, behaviour="E.1"),
    Rule("kip714.client.compression.empty_list", Level.MUST, "KIP-714", "Compression",
         "If the AcceptedCompressionTypes array is empty the client must send metrics "
         "uncompressed",
         "With no accepted types, pushes are uncompressed.", behaviour="E.1"),
    Rule("kip714.client.compression.large_payload", Level.SHOULD, "KIP-714", "Compression",
         "recommended that the serialized metrics are compressed ... if the serialized "
         "uncompressed size exceeds 1000 bytes",
         "A payload above 1000 bytes is compressed.", ruling=8, behaviour="A.5",
         known=(Known("Java client 3.7.0", "never compresses", f"{_UTILS} "
                      "preferredCompressionType 'TODO: Support compression'"),
                Known("Java client 3.8.0-4.1.0", "conforms", _UTILS))),
)  # fmt: skip

ERRORS = (
    Rule("kip714.client.errors.reget_immediately", Level.MUST, "KIP-714", "Error handling",
         "Immediately send a GetTelemetrySubscriptionsRequest",
         "After UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE the client Gets at once.",
         ruling=4, behaviour="E.2",
         known=(Known("librdkafka 2.5+", "violates for UNSUPPORTED_COMPRESSION_TYPE: waits the "
                      "interval", f"{_RDK} push error handling"),)),
    Rule("kip714.client.errors.too_large", Level.SHOULD, "KIP-714", "Error handling",
         "Reduce the size of the metrics payload so its size does not exceed "
         "GetTelemetrySubscriptionsResponse.TelemetryMaxBytes",
         "After TELEMETRY_TOO_LARGE the next payload fits TelemetryMaxBytes.",
         ruling=10, behaviour="E.1",
         known=(Known("Java client 3.7.0-4.1.0", "waits and Gets; never shrinks the payload",
                      f"{_UTILS} maybeFetchErrorIntervalMs"),)),
    Rule("kip714.client.errors.stop_pushing", Level.MUST, "KIP-714", "Error handling",
         "Log an error and stop pushing metrics",
         "After INVALID_REQUEST or INVALID_RECORD the client sends no more telemetry.",
         behaviour="E.1"),
    Rule("kip714.client.errors.throttled_wait", Level.MUST, "KIP-714",
         "Throttling and rate-limiting",
         "Should the client send a push request prior to expiry of the previously calculated "
         "PushIntervalMs the broker will discard the metrics and return ... "
         "THROTTLING_QUOTA_EXCEEDED",
         "After THROTTLING_QUOTA_EXCEEDED the client waits out PushIntervalMs.", behaviour="E.1"),
    Rule("kip714.client.errors.throttle_time", Level.SHOULD, "KIP-714",
         "Throttling and rate-limiting",
         "The duration in milliseconds for which the request was throttled",
         "A client holds back for a response's ThrottleTimeMs (KIP-219).", behaviour="E.1",
         known=(Known("Java client 3.7.0-4.1.0", "ignores it for telemetry", _REPORTER),)),
)  # fmt: skip

TERMINATION = (
    Rule("kip714.client.terminating.final_push", Level.SHOULD, "KIP-714", "Client termination",
         "it should send its final metrics without waiting for the PushIntervalMs time",
         "On close, a client with a subscription sends a final push at once.", behaviour="E.1",
         known=(Known("Java client 3.7.0-3.8.x", "producer close joins the sender first: no "
                      "Terminating push", "KAFKA-17731 (fixed in 3.9.0, commit a8ab55af)"),)),
    Rule("kip714.client.terminating.single", Level.MUST, "KIP-714", "Client termination",
         "the PushTelemetryRequest.Terminating field must be set to true",
         "The final push has Terminating set, and there is only one.", ruling=2,
         behaviour="E.1"),
    Rule("kip714.client.terminating.retry", Level.MUST, "KIP-714", "Client termination",
         "or it can choose to abandon sending a final metrics push",
         "A Terminating push answered UNKNOWN_SUBSCRIPTION_ID is either retried after a new Get "
         "or abandoned; nothing else follows it.", ruling=3, behaviour="E.1"),
)  # fmt: skip

PAYLOAD = (
    Rule("kip714.client.payload.otlp", Level.MUST, "KIP-714", "Metrics naming and format", "",
         "Metrics is a decodable OTLP MetricsData with well-formed metrics and points.",
         behaviour="E.1"),
    Rule("kip714.client.payload.naming", Level.MUST, "KIP-714", "Metrics naming and format", "",
         "Metric names use the org.apache.kafka. prefix and the KIP's derivation from Kafka "
         "metric names.", behaviour="E.1"),
    Rule("kip714.client.payload.naming_conventions", Level.SHOULD, "KIP-714", "Sparse metrics",
         "", "Names are lower case and dotted, attribute keys snake_case, and metrics without a "
         "value are left out.", behaviour="E.1",
         known=(Known("Java client 3.7.0-4.1.0", "sends unsampled gauges as NaN", _REPORTER),)),
    Rule("kip714.client.payload.metric_types", Level.MUST, "KIP-714", "Metric types", "",
         "Standard metrics have the KIP's types; sums are monotonic and deltas never negative.",
         behaviour="E.1"),
    Rule("kip714.client.payload.labels", Level.SHOULD, "KIP-714",
         "Standard client resource labels", "",
         "Standard metrics carry their labels, and the resource carries the standard labels "
         "that apply.", behaviour="E.1"),
    Rule("kip714.client.payload.privacy", Level.MUST, "KIP-714", "Motivation",
         "User privacy is an important concern",
         "No host name, address, process id or credential appears in a payload.",
         behaviour="E.1"),
    Rule("kip714.client.payload.timestamps", Level.MUST, "KIP-714", "Metrics naming and format",
         "", "Timestamps are nanoseconds, start before time, and never go back.",
         behaviour="E.1"),
    Rule("kip714.client.payload.temporality", Level.MUST, "KIP-714",
         "Metric aggregation temporality", "Clients must support both",
         "Sums follow DeltaTemporality: DELTA when true, CUMULATIVE (never decreasing) when "
         "false.", ruling=6, behaviour="E.1"),
    Rule("kip714.client.payload.temporality_continuity", Level.SHOULD, "KIP-714",
         "Metric aggregation temporality", "Clients must support both",
         "Delta windows follow one another without gaps; cumulative start times stay put.",
         ruling=6, behaviour="E.1"),
    Rule("kip714.client.payload.required_metrics", Level.MUST, "KIP-714",
         "Client metrics and metric labels", "",
         'Asked for ["*"], a client sends every metric the KIP requires of a producer or '
         "consumer.", ruling=1, behaviour="E.1"),
    Rule("kip714.client.payload.requested_only", Level.MUST, "KIP-714", "Client behavior",
         "update its internal metrics collection to match the received subscription (absolute "
         "update)",
         "A client sends only metrics whose names start with a requested prefix.",
         behaviour="E.1"),
    Rule("kip714.client.payload.empty_prefix_all", Level.SHOULD, "KIP-714",
         "GetTelemetrySubscriptionsResponse", "array[0] empty string = all",
         'RequestedMetrics [""] is read as all metrics.', ruling=1, behaviour="E.1"),
)  # fmt: skip

RULES = HANDSHAKE + CADENCE + COMPRESSION + ERRORS + TERMINATION + PAYLOAD
