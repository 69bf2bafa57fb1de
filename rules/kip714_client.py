"""KIP-714 client rules: handshake, cadence, compression, errors, termination and payload."""

from __future__ import annotations

from kconform.rules.model import Known, Level, Rule

_JAVA_16759_UNCAUGHT = (
    "the refused transition needs a push's answer read while the state is "
    "TERMINATING_PUSH_NEEDED, before any poll has created the Terminating push, and no "
    "scenario kconform drives makes that order: the producer (3.7.1 KafkaProducer.close line "
    "1373) starts telemetry close only after its I/O thread has ended, so no answer comes "
    "after it; the classic consumer's heartbeat thread polls every retry.backoff.ms "
    "(AbstractCoordinator.HeartbeatThread.run, client.pollNoWakeup, 3.7.1 line 1490) and "
    "NetworkClient.poll asks the telemetry sender for its request (NetworkClient.java line "
    "583) before it reads any answer, so the Terminating push is out first and the late "
    "answer only logs the refused TERMINATING_PUSH_IN_PROGRESS -> PUSH_NEEDED (the PR: "
    "'essentially harmless', its test passes before the fix); only a thread blocked in a poll"
    " that began before close() reads the answer first, as the KIP-848 consumer's network "
    "thread can while AsyncKafkaConsumer.close waits in initiateClose (3.7.1 line 1222), and "
    "whether it wakes for something else first (a heartbeat, a fetch answer) is up to the "
    "broker's timing, not to anything a case sets"
)  # why no case can catch KAFKA-16759

_REPORTER = "clients/.../telemetry/internals/ClientTelemetryReporter.java"
_UTILS = "clients/.../telemetry/internals/ClientTelemetryUtils.java"
_RDK = "src/rdkafka_telemetry.c"
_FG_1214 = "franz-go CHANGELOG v1.21.4"
_RDK_2101 = "librdkafka CHANGELOG v2.10.1"
_ALL_CODECS = (
    "needs a Java client without a codec's library, and the java driver's classpath is a Kafka "
    "distribution's libs/, which holds every codec"
)

HANDSHAKE = (
    Rule("kip714.client.handshake.advertised_only", Level.MUST, "KIP-714", "Client behavior",
         "identifies a supporting broker (through detecting at least "
         "GetTelemetrySubscriptionsRequestV0 in the ApiVersionResponse)",
         "A client sends no telemetry request to a broker that does not advertise 71/72: none "
         "on a connection whose own ApiVersions answer lacks them, even when an earlier "
         "connection's listed them (a broker restarted without its metrics reporter).",
         behaviour="E.1",
         known=(Known("franz-go v1.20.4", "reads an API key the broker did not list as "
                      "supported at version 0, so it sends Get and Push to brokers that never "
                      "advertised 71/72", "franz-go CHANGELOG v1.20.5 (commit 13ea38e3, #1172)",
                      bug="fg-1204-telemetry-to-unadvertising-brokers", fixed_in="v1.20.5",
                      case="kip714.client.handshake.requires_advertisement"),)),
    Rule("kip714.client.handshake.readvertised_resumes", Level.SHOULD, "KIP-714",
         "Receiving broker behavior",
         "We allow clients to send the GetTelemetrySubscriptions and PushTelemetry requests to "
         "any connected broker that reports support for both these APIs in its "
         "ApiVersionResponse",
         "A client whose broker stopped advertising 71/72 sends a Get or Push again once a "
         "connection's ApiVersions answer lists them again, within the longer of 5 minutes and "
         "three PushIntervalMs.", ruling=19, behaviour="E.1",
         known=(Known("librdkafka 2.5.0+", "conforms at once: a connection that comes up listing "
                      "71/72 makes its broker the telemetry broker, and a client waiting for one "
                      "Gets immediately", "src/rdkafka_broker.c (RD_KAFKA_OP_SET_TELEMETRY_BROKER "
                      f"when a connection comes up); {_RDK} rd_kafka_set_telemetry_broker_maybe"),
                Known("franz-go v1.22.3", "conforms within 30 s: a Get it cannot send (no broker "
                      "lists 71/72) fails and is retried 30 s later",
                      "pkg/kgo/metrics_714.go ('unable to get telemetry subscriptions, retrying "
                      "in 30s'); measured 27.7 s after 71/72 came back"),
                Known("Java client 3.7.0-4.0.1, 4.1.0", "conforms, slowly: a Get or Push the "
                      "connection's versions cannot carry fails in NetworkClient.doSend "
                      "(UnsupportedVersionException) and the reporter waits "
                      "DEFAULT_PUSH_INTERVAL_MS (300000 ms) before its next Get",
                      f"clients/.../NetworkClient.java doSend; {_REPORTER} handleFailedRequest "
                      "(3.7.0 source; javap of the 3.7.0-4.1.0 jars)"),
                Known("Java client 4.0.2, 4.1.1+", "violates: that UnsupportedVersionException is "
                      "not retryable to handleFailedRequest, so the interval becomes "
                      "Integer.MAX_VALUE and telemetry stays off for good, silently; the "
                      "KAFKA-19747 change (apache/kafka#20661) brought it",
                      f"{_REPORTER} handleFailedRequest / isRetryable (javap of the 4.0.2-4.4.0 "
                      "kafka-clients jars); measured on 4.4.0"))),
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
    Rule("kip714.client.unmatched_subscription_tolerated", Level.MUST, "KIP-714",
         "Client behavior", "",
         "A subscription whose prefixes match none of the client's metrics leaves the client "
         "working: it does not crash, and closes as it is told. The KIP plans "
         "for such a subscription (see kip714.client.unmatched_subscription_empty_push); a client "
         "that dies of one fails its application.", behaviour="E.1",
         known=(Known("librdkafka 2.5.0", "a subscription naming only metrics librdkafka does "
                      "not have trips an assert while the push is built, and the process aborts",
                      "librdkafka CHANGELOG v2.5.3 (issue #4833, PR #4826)",
                      bug="rdk-assert-no-matching-metrics", fixed_in="2.5.3",
                      case="kip714.client.handshake.unmatched_tolerated"),
                Known("confluent-kafka-python 2.5.0", "its librdkafka 2.5.0 aborts the process "
                      "when the subscription matches none of the client's metrics",
                      "confluent-kafka-python CHANGELOG v2.5.0 (warning) and v2.5.3",
                      bug="ckpy-assert-no-matching-metrics", fixed_in="2.5.3",
                      case="kip714.client.handshake.unmatched_tolerated"))),
    Rule("kip714.client.unmatched_subscription_empty_push", Level.SHOULD, "KIP-714",
         "Client behavior",
         "If GetTelemetrySubscriptionsResponse.RequestedMetrics is non-empty but does not match "
         "any metrics the client provides, then the client should send a PushTelemetryRequest at "
         "the indicated PushIntervalMs interval with an empty metrics blob",
         "With a subscription that matches none of its metrics the client still pushes, each "
         "push without a metric, so the broker can tell it from a silent client.",
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
         known=(Known("Java client 3.7.0-4.1.0", "conforms (<= 0 becomes 300000 ms)", _UTILS),
                Known("franz-go v1.19.0-v1.21.3", "answered an empty subscription with a "
                      "PushIntervalMs of 0 or less, it sends Get after Get with no pause",
                      "franz-go commit 544189e9", bug="fg-nonpositive-interval-hot-loop",
                      fixed_in="v1.21.4", case="kip714.client.cadence.interval_zero_empty"))),
)  # fmt: skip

COMPRESSION = (
    Rule("kip714.client.compression.preferred", Level.SHOULD, "KIP-714", "Compression",
         "should pick the first mutually supported type in the returned list",
         "A client compresses with the first type in AcceptedCompressionTypes it supports.",
         ruling=8, behaviour="E.1",
         known=(Known("Java client 3.8.0-3.9.1, 4.0.0", "catches only an IOException from the "
                      "codec, so a missing codec library (NoClassDefFoundError) escapes the push "
                      "instead of an uncompressed push going out",
                      "apache/kafka#19881 (MINOR, no JIRA)",
                      bug="java-compression-error-not-caught",
                      fixed_in="4.0.1, 4.1.0 (3.9 backport for 3.9.2)", uncaught=_ALL_CODECS),
                Known("Java client 3.8.0-4.1.x", "with the preferred codec's library missing, it "
                      "tries that codec on every push and sends uncompressed, not with the next "
                      "accepted codec it has", "KAFKA-19506 (apache/kafka#20144)",
                      bug="java-compression-fallback-not-learned", fixed_in="4.2.0",
                      uncaught=_ALL_CODECS),
                Known("librdkafka 2.5.0-2.11.1", "on a big-endian CPU reads "
                      "AcceptedCompressionTypes in the wrong byte order, finds no usable codec "
                      "and pushes uncompressed", "librdkafka CHANGELOG v2.12.0 (issue #5179, "
                      "PR #5183)", bug="rdk-bigendian-compression-types", fixed_in="2.12.0",
                      uncaught="shows only on a big-endian host; the clients run on the "
                      "harness's little-endian machine"))),
    Rule("kip714.client.compression.empty_list", Level.MUST, "KIP-714", "Compression",
         "If the AcceptedCompressionTypes array is empty the client must send metrics "
         "uncompressed",
         "With no accepted types, pushes are uncompressed.", behaviour="E.1"),
    Rule("kip714.client.compression.large_payload", Level.SHOULD, "KIP-714", "Compression",
         "recommended that the serialized metrics are compressed ... if the serialized "
         "uncompressed size exceeds 1000 bytes",
         "A payload above 1000 bytes is compressed.", ruling=8, behaviour="A.5",
         known=(Known("Java client 3.7.0-3.7.2", "has its preferred codec hard-wired to none, so "
                      "every push goes uncompressed whatever the broker accepts",
                      f"{_UTILS} preferredCompressionType 'TODO: Support compression' at 3.7.0; "
                      "KAFKA-15807 (first in 3.8.0)", bug="java37-telemetry-never-compressed",
                      fixed_in="3.8.0", case="kip714.client.compression.large_payload"),
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
         known=(Known("Java client 3.7.0+", "never keeps TelemetryMaxBytes: every push goes "
                      "out at full size, and after TELEMETRY_TOO_LARGE it waits, Gets and sends "
                      "one as large each interval",
                      f"KAFKA-21077 (apache/kafka#23452, open); {_UTILS} "
                      "maybeFetchErrorIntervalMs", bug="java-ignores-telemetry-max-bytes",
                      fixed_in="unfixed", case="kip714.client.errors.telemetry_too_large"),
                Known("librdkafka 2.5.0+", "only logs a payload over TelemetryMaxBytes and sends "
                      "it anyway; TELEMETRY_TOO_LARGE changes nothing for the next push",
                      f"{_RDK} rd_kafka_send_push_telemetry (v2.15.0); confluentinc/librdkafka"
                      "#4507", bug="rdk-sends-oversize-payload", fixed_in="unfixed",
                      case="kip714.client.errors.telemetry_too_large"))),
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
    Rule("kip714.client.errors.transient_recovers", Level.MUST, "KIP-714",
         "Connection selection",
         "keep using the same broker connection for telemetry requests until the connection goes "
         "down, at which time it may choose to reconnect and continue using the same broker, or "
         "switch over to another broker connection",
         "A telemetry request lost to the transport (its connection closed before the answer, or "
         "no answer within the request timeout), or a broker restart (every connection dropped, "
         "new ones refused for longer than an interval), does not end the client's telemetry: "
         "it sends a Get or Push again, over a new connection if need be, within the longer of "
         "5 minutes and three PushIntervalMs (of the loss, or of the broker serving again).",
         ruling=17, behaviour="E.1",
         known=(Known("Java client 3.7.0-4.0.1, 4.1.0", "every failed telemetry request, a "
                      "dropped connection or a timeout included, counts as fatal: the interval "
                      "becomes Integer.MAX_VALUE and the client never pushes again",
                      "KAFKA-19747 (apache/kafka#20661)",
                      bug="java-transient-push-failure-disables-telemetry",
                      fixed_in="4.0.2, 4.1.1, 4.2.0",
                      case="kip714.client.errors.connection_lost"),
                Known("Java client 4.0.2, 4.1.1+", "conforms, slowly: a request lost to the "
                      "transport counts as retriable and the next Get waits "
                      "DEFAULT_PUSH_INTERVAL_MS (300000 ms) whatever PushIntervalMs says",
                      f"{_REPORTER} handleFailedRequest / isRetryable (javap of the 4.0.2 and "
                      "4.1.1 kafka-clients jars)"))),
    Rule("kip714.client.follows_metadata", Level.MUST, "KIP-714", "Connection selection",
         "at which time it may choose to reconnect and continue using the same broker, or "
         "switch over to another broker connection",
         "Once a Metadata answer has given a broker a new address, the client opens no "
         "connection to that broker's old one: telemetry reconnects to the broker where "
         "Metadata says it is now, or to another broker.",
         ruling=21, behaviour="E.1",
         known=(Known("Java client 3.7.0-4.2.0, 4.3.x", "the telemetry sender keeps the Node it "
                      "picked, so once that broker's address changes it reconnects to the old "
                      "address (NetworkClient.TelemetrySender.maybeUpdate: initiateConnect with "
                      "the stored Node)", "KAFKA-20393 (apache/kafka#21983)",
                      bug="java-telemetry-sticky-node-stale-address",
                      fixed_in="4.2.1, 4.4.0 (no 4.3 backport)",
                      case="kip714.client.follows_metadata"),)),
)  # fmt: skip

TERMINATION = (
    Rule("kip714.client.terminating.final_push", Level.SHOULD, "KIP-714", "Client termination",
         "it should send its final metrics without waiting for the PushIntervalMs time",
         "On close, a client with a subscription sends a final push at once.", behaviour="E.1",
         known=(Known("Java client 3.7.0-3.7.1, 3.8.0", "a producer shuts its reporters before "
                      "starting telemetry close, so no Terminating push goes out; a consumer "
                      "closed just after creation waits 30 s for a push nothing can send",
                      "KAFKA-17731 (apache/kafka#17431)",
                      bug="java-close-skips-or-waits-terminating-push",
                      fixed_in="3.7.2, 3.8.1, 3.9.0",
                      case="kip714.client.terminating.push_in_flight"),
                Known("Java client 3.7.0-3.7.1", "when a push's answer arrives after close began, "
                      "the refused state change disables telemetry, and a Terminating push not "
                      "yet sent never is", "KAFKA-16759 (apache/kafka#15957)",
                      bug="java-push-response-during-close-disables-telemetry",
                      fixed_in="3.7.2, 3.8.0", uncaught=_JAVA_16759_UNCAUGHT),
                Known("franz-go v1.19.0-v1.21.3", "Close cancels the client's context before the "
                      "metrics loop can send, so the Terminating push never completes",
                      f"{_FG_1214} (commit a7550495)", bug="fg-terminating-push-never-sent",
                      fixed_in="v1.21.4", case="kip714.client.terminating.final_push"))),
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
         behaviour="E.1",
         known=(Known("librdkafka 2.5.0-2.10.0", "when the subscription matches only another "
                      "client type's metrics, pushes with a null Metrics, which the broker "
                      "answers by closing the connection, push after push",
                      f"{_RDK_2101} (issue #5106, PR #4912)", bug="rdk-null-metrics-payload",
                      fixed_in="2.10.1", case="kip714.client.payload.unmatched_not_null",
                      missed="cannot be reproduced on librdkafka 2.5.0 (confluent-kafka@2.5.0, "
                      "confluent-kafka-go@v2.5.0): the subscription that makes 2.5.3-2.10.0 "
                      "push a null Metrics aborts 2.5.0 while it builds its first push "
                      "(rdk-assert-no-matching-metrics, which that case catches), so no push "
                      "reaches the wire to judge and the case is not-applicable there; it fails "
                      "on every other affected release in the matrix"),
                Known("confluent-kafka-javascript v0.3.0-v1.3.0", "pushes a null Metrics and is "
                      "disconnected after each push, as its librdkafka (2.6.0-2.10.0) does",
                      "confluent-kafka-javascript CHANGELOG ('References librdkafka' lines)",
                      bug="ckjs-null-metrics-payload", fixed_in="v1.3.2",
                      case="kip714.client.payload.unmatched_not_null"),
                Known("confluent-kafka-dotnet on librdkafka 2.5.0-2.10.0", "consumers fail soon "
                      "after the instance id changes, which a maintainer puts down to "
                      "librdkafka's null Metrics push", "confluentinc/confluent-kafka-dotnet#2399",
                      bug="ckdotnet-telemetry-consumer-crash",
                      fixed_in="the first release on librdkafka 2.10.1",
                      case="kip714.client.payload.unmatched_not_null"),
                Known("franz-go v1.19.0-v1.21.3", "an application metric attribute of a type it "
                      "cannot encode leaves a dangling protobuf tag; the broker answers "
                      "INVALID_RECORD and the client stops pushing for good",
                      f"{_FG_1214} (commit 16e51c5b)", bug="fg-bad-attribute-corrupts-otlp",
                      fixed_in="v1.21.4", uncaught="needs an application (KIP-1076) metric "
                      "with such an attribute, and the franz-go driver registers none"))),
    Rule("kip714.client.payload.naming", Level.MUST, "KIP-714", "Metrics naming and format", "",
         "Metric names use the org.apache.kafka. prefix and the KIP's derivation from Kafka "
         "metric names.", behaviour="E.1"),
    Rule("kip714.client.payload.naming_conventions", Level.SHOULD, "KIP-714", "Sparse metrics",
         "", "Names are lower case and dotted, attribute keys snake_case, and metrics without a "
         "value are left out.", behaviour="E.1",
         known=(Known("Java client 3.7.0-4.1.0", "sends unsampled gauges as NaN", _REPORTER),)),
    Rule("kip714.client.payload.metric_types", Level.MUST, "KIP-714", "Metric types", "",
         "Standard metrics have the KIP's types; sums are monotonic and deltas never negative.",
         behaviour="E.1",
         known=(Known("franz-go v1.19.0-v1.21.3", "sends its counters (*.total) as Sums without "
                      "is_monotonic, that is as sums that may go down", "franz-go commit a740bc86",
                      bug="fg-sums-not-monotonic", fixed_in="v1.21.4",
                      case="kip714.client.payload.metric_types_prefixed"),)),
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
         "consumer; asked for prefixes, every such metric one of them matches.", ruling=1,
         behaviour="E.1",
         known=(Known("librdkafka 2.5.0-2.10.0", "reads requested names past their length, so "
                      "some prefixes fail to match and metrics it has are left out",
                      f"{_RDK_2101} (issue #5102, PR #5105)", bug="rdk-metric-name-read-oob",
                      fixed_in="2.10.1", case="kip714.client.payload.required_under_prefixes"),
                )),
    Rule("kip714.client.payload.requested_only", Level.MUST, "KIP-714", "Client behavior",
         "update its internal metrics collection to match the received subscription (absolute "
         "update)",
         "A client sends only metrics whose names start with a requested prefix.",
         behaviour="E.1"),
    Rule("kip714.client.payload.averages", Level.MUST, "KIP-714",
         "Client metrics and metric labels", "Average request latency",
         "An .avg of a per-request measure is the mean of its window's observations: no more "
         "than the .max of the same series, no less than that .max over the requests sent.",
         ruling=20, behaviour="E.1",
         known=(Known("franz-go v1.19.0-v1.21.3", ".avg gauges divide the window's summed "
                      "latency by the window's length in milliseconds rather than by the count "
                      "(and .rate gauges come out near 1.0 whatever the load)",
                      "franz-go CHANGELOG v1.21.4 (commit 16e51c5b)",
                      bug="fg-rate-avg-rollups-wrong", fixed_in="v1.21.4",
                      case="kip714.client.payload.averages"),)),
    Rule("kip714.client.payload.no_duplicates", Level.MUST, "KIP-714",
         "Metrics naming and format", "",
         "A push holds each series once, whatever prefixes the subscription lists: two requested "
         "prefixes that both match a metric do not make it twice.", ruling=14, behaviour="E.1",
         known=(Known("librdkafka 2.5.0-2.10.0", "a metric two requested prefixes both match is "
                      "sent twice in one push; hidden on the wire, as these releases misread "
                      "every prefix but the last (rdk-metric-name-read-oob): only the last "
                      "matched on confluent-kafka@2.10.0",
                      "librdkafka CHANGELOG v2.10.1 (issue #5103, PR #5104)",
                      bug="rdk-duplicate-metrics-multi-prefix", fixed_in="2.10.1",
                      case="kip714.client.payload.overlapping_prefixes",
                      missed="cannot be reproduced on any release: every release it affects "
                      "has rdk-metric-name-read-oob too, under which only the last requested "
                      "prefix matches anything (measured: kip714.client.payload."
                      "required_under_prefixes fails on each affected release in the matrix, "
                      "which pushes only the last prefix's metrics), so no metric is matched by "
                      "two prefixes; 2.10.1 fixed both"),)),
    Rule("kip714.client.payload.empty_prefix_all", Level.SHOULD, "KIP-714",
         "GetTelemetrySubscriptionsResponse", "array[0] empty string = all",
         'RequestedMetrics [""] is read as all metrics.', ruling=1, behaviour="E.1"),
)  # fmt: skip

RULES = HANDSHAKE + CADENCE + COMPRESSION + ERRORS + TERMINATION + PAYLOAD
