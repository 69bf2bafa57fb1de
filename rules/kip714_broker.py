"""KIP-714 broker rules: GetTelemetrySubscriptions, PushTelemetry, and the advertisement of both.

Push rules are listed in the order Apache's `ClientMetricsManager` checks a push (docs
behaviour C.4), which is also the order of the reference broker's check table.
"""

from __future__ import annotations

from kconform.rules.model import Known, Level, Rule

CMM = "server/src/main/java/org/apache/kafka/server/ClientMetricsManager.java"
_FINALLY = f"KAFKA-20898; {CMM} processPushTelemetryRequest finally block"
_GET_OR = f"{CMM} validateGetRequest `||`; fixed by apache/kafka#19959 (commit 4c2d86f4)"
_BOUNDED = (
    "apache/kafka#22327 (unbounded decompression; 4.4.0, backported to 4.2.2 and 4.3.1): "
    "clients/.../telemetry/internals/ClientTelemetryUtils.java decompress(buffer, type, "
    "maxDecompressedBytes) throws TelemetryTooLargeException past telemetry.max.bytes, and "
    f"{CMM} processPushTelemetryRequest answers INVALID_RECORD to any export failure "
    "(read from the 4.2.2, 4.3.1 and 4.4.0 jars with javap: PushTelemetryRequest.metricsData(int))"
)
_RECEIVER_CATCH = (
    f"{CMM} processPushTelemetryRequest: the export is wrapped in a catch that sets "
    "lastKnownError INVALID_RECORD and answers INVALID_RECORD, after validatePushRequest has "
    "recorded the push's time (javap of the 3.7.0, 3.8.0, 3.9.1, 4.0.0, 4.1.0, 4.1.2, 4.2.0 and "
    "4.4.0 jars; the 4.3.1 source)"
)
_NO_DECOMPRESS = (
    "3.7.0 clients/.../requests/PushTelemetryRequest.java decompressMetricsData is a TODO"
)

GET = (
    Rule("kip714.apiversions.telemetry_advertised", Level.MUST, "KIP-714",
         "Receiving broker behavior", "",
         "A broker with a client telemetry receiver lists GetTelemetrySubscriptions (71) and "
         "PushTelemetry (72) in its ApiVersions response; without one it does not.",
         behaviour="B.4",
         known=(Known("Apache 3.7.0-4.1.0", "conforms",
                      "clients/.../requests/ApiVersionsResponse.java filterApis"),)),
    Rule("kip714.get.instance_id.assigned", Level.MUST, "KIP-714", "Receiving broker behavior",
         "the broker will generate a unique id for the client",
         "A Get with a Null (zero) ClientInstanceId gets a new id, never the zero or one uuid and "
         "never one already issued.", behaviour="C.2"),
    Rule("kip714.get.instance_id.kept", Level.MUST, "KIP-714", "Client behavior",
         "must include the ClientInstanceId returned in the first response, regardless of broker",
         "A Get that names an id keeps it: the broker serves that instance, on any broker.",
         ruling=5, behaviour="C.2"),
    Rule("kip714.get.instance_id.echo", Level.INFO, "KIP-714", "GetTelemetrySubscriptionsResponse",
         "Assigned client instance id if ClientInstanceId was Null in the request, else Null",
         "Whether a Get naming an id is answered with that id or with Null is recorded.",
         ruling=5, behaviour="C.2",
         known=(Known("Apache 3.7.0-4.1.0", "echoes the id", f"{CMM} processGetTelemetry..."),)),
    Rule("kip714.get.no_subscription", Level.MUST, "KIP-714", "Metrics subscription",
         "An empty list means no metrics subscribed.",
         "A client no subscription matches gets NONE, empty RequestedMetrics and the default "
         "PushIntervalMs 300000.", behaviour="C.2"),
    Rule("kip714.get.subscription.applied", Level.MUST, "KIP-714", "Metrics subscription",
         "Metrics subscriptions are configured through the standard Kafka Admin API "
         "configuration interface with the new config resource type CLIENT_METRICS",
         "A CLIENT_METRICS subscription the broker accepted reaches the Gets of the clients it "
         "matches (within SUBSCRIPTION_VISIBLE_TIMEOUT, 15 s): RequestedMetrics names its "
         "metrics. A broker whose answers never change serves no subscription at all; the cases "
         "that need one are then not-applicable.", behaviour="C.2"),
    Rule("kip714.get.metrics.all", Level.MUST, "KIP-714", "Client metrics configuration",
         'A list containing just "*" means all metrics subscribed.',
         'When a matching subscription asks for "*", RequestedMetrics is exactly ["*"].',
         ruling=1, behaviour="C.2"),
    Rule("kip714.get.metrics.union", Level.MUST, "KIP-714", "Metrics subscription",
         "The resulting matching configuration entries are compiled into a list",
         "RequestedMetrics is the union of the metrics of every matching subscription.",
         behaviour="C.2"),
    Rule("kip714.get.interval.minimum", Level.MUST, "KIP-714", "PushIntervalMs",
         "the lowest configured interval in the current subscription set",
         "PushIntervalMs is the smallest interval.ms among the matching subscriptions.",
         behaviour="C.2"),
    Rule("kip714.get.match.anchored", Level.MUST, "KIP-714", "Client metrics configuration",
         "The values are anchored regular expressions.",
         "A subscription's match selectors (client_instance_id, client_id, software name and "
         "version, source address and port) match the whole attribute value.",
         behaviour="C.6",
         known=(Known("Apache 3.7.0-3.7.2", "fills client_source_port with the client's address, "
                      "so a selector on the port never matches",
                      "KAFKA-15811 (apache/kafka#15190, first in 3.8.0); server/.../metrics/"
                      "ClientMetricsInstanceMetadata.java 'TODO: fix port' at 3.7.0",
                      bug="ak37-client-source-port-is-address", fixed_in="3.8.0",
                      case="kip714.subscriptions.match.client_source_port"),
                Known("Apache 3.8.0-4.1.0", "conforms", "RequestContext.clientPort"))),
    Rule("kip714.get.match.absent", Level.MUST, "KIP-714", "Client metrics configuration",
         "Client matching selector",
         "A subscription without match selectors selects nothing out: it applies to every "
         "client (Apache: ClientMetricsInstanceMetadata.isMatch, \"Empty pattern is still "
         "considered as a match\"; kafka-client-metrics.sh's --match is optional).",
         behaviour="C.6"),
    Rule("kip714.get.subscription_id.recalculated", Level.MUST, "KIP-714", "SubscriptionId",
         "If the configured subscriptions are updated and resulting in a change for a client "
         "instance, the SubscriptionId is recalculated.",
         "The SubscriptionId stays the same while a client's matched metrics and interval do, and "
         "changes (in Gets and in what pushes are checked against) when they change.",
         behaviour="C.3"),
    Rule("kip714.get.subscription_id.deterministic", Level.MUST, "KIP-714", "SubscriptionId",
         "no state needs to be persisted - the configured subscription set + client instance id "
         "is the identifier itself",
         "Every broker computes the same SubscriptionId for the same instance and subscriptions, "
         "so a push may go to another broker than the Get.", behaviour="C.3"),
    Rule("kip714.get.compression_types.valid", Level.MUST, "KIP-714", "AcceptedCompressionTypes",
         "The CompressionType of NONE will not be present",
         "AcceptedCompressionTypes lists known compression ids, without NONE.", behaviour="A.5"),
    Rule("kip714.get.compression_types.preference_order", Level.SHOULD, "KIP-714", "Compression",
         "The default compression types list as returned from the broker should be: ZStd, LZ4, "
         "GZip, Snappy",
         "AcceptedCompressionTypes is [zstd, lz4, gzip, snappy].", behaviour="C.2"),
    Rule("kip714.get.telemetry_max_bytes", Level.MUST, "KIP-714", "Broker configuration",
         "", "TelemetryMaxBytes is the broker's telemetry.max.bytes (default 1048576).",
         behaviour="C.2"),
    Rule("kip714.get.throttle.repeated", Level.INFO, "KIP-714", "Throttling and rate-limiting",
         "", "Whether a second Get inside PushIntervalMs is throttled is recorded, not judged.",
         ruling=4, behaviour="C.2",
         known=(Known("Apache 3.7.0-4.1.0", "throttles it (THROTTLING_QUOTA_EXCEEDED)", CMM),)),
    Rule("kip714.get.throttle.error_fields", Level.INFO, "KIP-714", "Throttling and rate-limiting",
         "", "What a throttled Get carries besides its error (Apache: every field at its "
         "default) is recorded.", behaviour="C.2",
         known=(Known("Apache 3.7.0-4.1.0", "defaults only",
                      "GetTelemetrySubscriptionsRequest.getErrorResponse"),)),
    Rule("kip714.get.throttle.after_push_error", Level.SHOULD, "KIP-714", "Error handling",
         "Immediately send a GetTelemetrySubscriptionsRequest",
         "A Get sent right after a push failed with UNKNOWN_SUBSCRIPTION_ID or "
         "UNSUPPORTED_COMPRESSION_TYPE is answered, not throttled.",
         ruling=4, behaviour="C.2",
         known=(Known("Apache 3.7.0-3.9.x, 4.0.0", "throttles the Get sent at once after a push "
                      "refused with UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE: the "
                      "test meant to exempt it is always true", _GET_OR,
                      bug="ak-reget-throttled-after-117-76",
                      fixed_in="4.0.1, 4.1.0 (not backported to 3.9)",
                      case="kip714.subscriptions.throttle.after_push_error"),
                Known("Apache 4.0.1-4.1.0", "conforms", _GET_OR))),
    Rule("kip714.get.delta_temporality", Level.INFO, "KIP-714", "DeltaTemporality", "",
         "Which temporality the broker asks for is recorded; either conforms.",
         ruling=6, behaviour="C.2",
         known=(Known("Apache 3.7.0-4.1.0", "always true", CMM),)),
    Rule("kip714.instances.retention", Level.MUST, "KIP-714", "Metrics subscription",
         "", "A broker keeps a client instance's state for at least max(60 s, 3 x "
         "PushIntervalMs) after its last request.", behaviour="C.5",
         outside_suites="an instance must outlive max(60 s, 3 x interval) with a > 20 s interval: "
         "longer than a suite's budget; tests/reference/test_ref_cache.py judges the reference",
         known=(Known("Apache 3.7.0", "no time-based expiry (LRU only)", CMM),
                Known("Apache 3.8.0-4.1.0", "conforms", "KAFKA-15813, KAFKA-16186"))),
)  # fmt: skip

PUSH = (
    Rule("kip714.push.instance_id.reserved", Level.MUST, "KIP-714", "PushTelemetryRequest", "",
         "A push naming the zero or one uuid (ids no broker issues) is INVALID_REQUEST, before "
         "any other check.", behaviour="C.4",
         known=(Known("Apache 3.7.0-4.1.0", "conforms", f"{CMM} Uuid.RESERVED check"),)),
    Rule("kip714.push.subscription_id.stateless", Level.MUST, "KIP-714", "SubscriptionId",
         "no state needs to be persisted - the configured subscription set + client instance id "
         "is the identifier itself",
         "A push from an instance this broker never saw is judged like any other: accepted with "
         "the right SubscriptionId, UNKNOWN_SUBSCRIPTION_ID with a wrong one.", behaviour="C.4",
         known=(Known("Apache 3.7.0-4.1.0", "conforms", "testPushTelemetryOnNewServer"),)),
    Rule("kip714.push.terminating.once", Level.MUST, "KIP-714", "Client termination",
         "A broker must only allow one such unthrottled metrics push for each combination of "
         "client instance ID and SubscriptionId.",
         "Once a Terminating push was accepted, no further push of that instance is accepted.",
         ruling=2, behaviour="C.4",
         known=(Known("Apache 3.7.0-4.1.0", "violates: a rejected push after termination clears "
                      "the flag, so a second Terminating push is accepted", _FINALLY),)),
    Rule("kip714.push.terminating.invalid_request", Level.SHOULD, "KIP-714", "Error handling",
         "Client sent a PushTelemetryRequest when it has already sent a Terminating request",
         "A push after the accepted Terminating push is answered INVALID_REQUEST.",
         ruling=2, behaviour="C.4"),
    Rule("kip714.push.throttle.interval", Level.MUST, "KIP-714", "Throttling and rate-limiting",
         "Should the client send a push request prior to expiry of the previously calculated "
         "PushIntervalMs the broker will discard the metrics and return ... "
         "THROTTLING_QUOTA_EXCEEDED",
         "A push inside PushIntervalMs of the last accepted push is THROTTLING_QUOTA_EXCEEDED; one "
         "after it is accepted; a Get in between does not lift the limit.", behaviour="C.4"),
    Rule("kip714.push.throttle.first_after_get", Level.MUST, "KIP-714", "Client behavior",
         "The first metrics push should be randomized between 0.5 * PushIntervalMs and 1.5 * "
         "PushIntervalMs",
         "The first push after each Get is accepted however soon it follows, since a client's "
         "jitter may put it before the interval.", behaviour="C.4"),
    Rule("kip714.push.terminating.unthrottled", Level.MUST, "KIP-714", "Client termination",
         "to avoid the receiving broker's metrics rate-limiter discarding this out-of-profile push",
         "A Terminating push inside PushIntervalMs is accepted.", behaviour="C.4"),
    Rule("kip714.push.subscription_id.current", Level.MUST, "KIP-714", "SubscriptionId",
         "the broker will find that the received and expected SubscriptionIds differ and it will "
         "return UNKNOWN_SUBSCRIPTION_ID",
         "A push whose SubscriptionId is not the instance's current one is "
         "UNKNOWN_SUBSCRIPTION_ID.", behaviour="C.4"),
    Rule("kip714.push.compression.unsupported", Level.MUST, "KIP-714", "Validation",
         "if the compression type is unsupported the response will be returned with ErrorCode "
         "set to UnsupportedCompressionType",
         "A push whose CompressionType is not a known id is UNSUPPORTED_COMPRESSION_TYPE.",
         behaviour="C.4"),
    Rule("kip714.push.compression.none_accepted", Level.MUST, "KIP-714",
         "AcceptedCompressionTypes",
         "though the broker does support uncompressed client telemetry",
         "A push with CompressionType NONE is accepted although NONE is not advertised.",
         behaviour="C.4"),
    Rule("kip714.push.size_limit", Level.MUST, "KIP-714", "Error handling",
         "Client sent a PushTelemetryRequest larger than the maximum size the broker will accept.",
         "A push whose Metrics exceed telemetry.max.bytes is TELEMETRY_TOO_LARGE; one at the "
         "limit is accepted.", behaviour="C.4"),
    Rule("kip714.push.size_limit.as_sent", Level.MUST, "KIP-714", "Broker configuration",
         "The maximum size (after compression if compression is used)",
         "TELEMETRY_TOO_LARGE applies to the bytes as sent: a push within TelemetryMaxBytes as "
         "sent is never answered TELEMETRY_TOO_LARGE, whatever it decompresses to. The KIP does "
         "not oblige a broker to decompress without a bound: accepting a payload that inflates "
         "past the limit, or refusing it as INVALID_RECORD (a decompressed-size bound), both "
         "conform.",
         ruling=12, behaviour="C.4",
         known=(Known("Apache 3.7.0", "conforms (never decompresses)", _NO_DECOMPRESS),
                Known("Apache 3.8.0-4.2.1, 4.3.0", "conforms: accepts and exports it",
                      "ClientTelemetryUtils.decompress (no bound)"),
                Known("Apache 4.2.2, 4.3.1, 4.4.0", "conforms: INVALID_RECORD once the "
                      "decompressed bytes pass telemetry.max.bytes", _BOUNDED))),
    Rule("kip714.push.terminating.per_subscription", Level.MUST, "KIP-714", "Client termination",
         "the terminating client can choose to obtain a new subscription ID by sending a "
         "GetTelemetrySubscriptionsRequest and then immediately sending a PushTelemetryRequest "
         "with the Terminating flag set",
         "Only an accepted Terminating push terminates: one that failed (say with "
         "UNKNOWN_SUBSCRIPTION_ID) may be retried after a new Get.",
         ruling=3, behaviour="C.4",
         known=(Known("Apache 3.7.0-4.3.x", "a Terminating push that validation refuses still "
                      "marks the instance terminated, so the retry after a new Get is answered "
                      "INVALID_REQUEST", _FINALLY, bug="ak-failed-terminating-push-sets-flag",
                      fixed_in="not known (KAFKA-20898 resolved 2026-09-24; release not traced)",
                      case="kip714.push.terminating.failed_push_not_counted"),
                Known("Apache 3.7.0-4.0.0", "also throttles the Get the retry needs", _GET_OR))),
    Rule("kip714.push.compression.codecs", Level.MUST, "KIP-714", "Compression",
         "The PushTelemetryRequest.CompressionType must then be set to the corresponding "
         "compression type value",
         "Payloads compressed with each advertised type, framed as Kafka frames them (including "
         "raw snappy as librdkafka sends it), are accepted.", behaviour="A.5"),
    Rule("kip714.push.invalid_record", Level.MUST, "KIP-714", "Error handling",
         "Broker failed to decode or validate the client's encoded metrics.",
         "A payload that does not decompress is INVALID_RECORD, not exported.", behaviour="C.4",
         known=(Known("Apache 3.7.0", "violates: never decompresses, exports the bytes",
                      _NO_DECOMPRESS),
                Known("Apache 3.8.0-4.1.0", "conforms", "ClientTelemetryUtils.decompress"))),
    Rule("kip714.push.decompressed_for_receiver", Level.MUST, "KIP-714", "Compression",
         "Decompression of the metrics data will be performed by the broker prior to passing the "
         "data to the metrics plugin",
         "The telemetry receiver gets the decompressed payload.", ruling=13, behaviour="C.4",
         known=(Known("Apache 3.7.0-3.7.2", "advertises four codecs, then hands the receiver a "
                      "compressed push's bytes as they came, as if they were OTLP",
                      f"{_NO_DECOMPRESS}; KAFKA-15807 (apache/kafka#15148, first in 3.8.0)",
                      bug="ak37-compressed-push-not-decompressed", fixed_in="3.8.0",
                      case="kip714.push.compression.decompressed"),
                Known("Apache 3.8.0-4.1.0", "conforms", "PushTelemetryRequest.metricsData"))),
    Rule("kip714.push.bomb_rejected", Level.SHOULD, "KIP-714", "Broker configuration", "",
         "A small payload that inflates enormously is rejected rather than exported.",
         ruling=12, behaviour="C.4",
         known=(Known("Apache 3.7.0", "exports it as sent (no decompression)", _NO_DECOMPRESS),
                Known("Apache 4.1.0", "TELEMETRY_TOO_LARGE or INVALID_RECORD, depending on heap",
                      f"{CMM} catches Throwable (commit 82ea9d0f)"),
                Known("Apache 4.2.2, 4.3.1, 4.4.0", "conforms: INVALID_RECORD once the "
                      "decompressed bytes pass telemetry.max.bytes", _BOUNDED),
                Known("Apache 3.8.0-3.8.x, 3.9.0-3.9.2, 4.0.0-4.0.2, 4.1.0-4.1.2, 4.2.0-4.2.1, "
                      "4.3.0",
                      "inflates a pushed payload with no cap on its output, so a tiny compressed "
                      "push can grow without bound before it is exported",
                      "apache/kafka#22327 (MINOR, no JIRA; commit 68a8d45b)",
                      bug="ak-telemetry-decompression-unbounded",
                      fixed_in="4.4.0; backports in 4.3.1, 4.2.2, 4.1.3, 4.0.3 (measured by "
                      "kip714.push.size_limit.after_compression: 4.2.1 still answers NONE to a "
                      "push inflating to 3 x telemetry.max.bytes, 4.2.2 INVALID_RECORD; 3.9.3 and "
                      "3.8.2 perhaps never released)",
                      case="kip714.security.bomb.not_exported",
                      missed="with -Xmx512m inflating the bomb exhausts the heap, and "
                      "ClientMetricsManager catches the Throwable and rejects the push: nothing "
                      "is exported, so the case passes on a release that inflates without bound; "
                      "whether the heap runs out varies from run to run (ungated: "
                      "APACHE_UNGATED)"))),
    Rule("kip714.push.receiver_failure", Level.MUST, "KIP-714", "Validation",
         "Should decoding or validation of the binary metrics blob fail the ErrorCode will be "
         "set to InvalidRecord.",
         "A push whose telemetry receiver throws from exportMetrics is answered INVALID_RECORD; "
         "its connection and the broker keep serving, and the instance's next push after "
         "PushIntervalMs is accepted.", ruling=18, behaviour="C.4",
         known=(Known("Apache 3.7.0-4.0.x", "conforms (catches Exception; 3.8.0+ also counts "
                      "it in the client-metrics plugin-error-count meter)", _RECEIVER_CATCH),
                Known("Apache 4.1.0-4.4.0", "conforms (catches Throwable, commit 82ea9d0f)",
                      _RECEIVER_CATCH),
                Known("Apache 4.2.0-4.4.0", "a KIP-1217 ClientTelemetryExporter that throws "
                      "takes the same path: ClientTelemetryExporterPlugin.exportMetrics calls "
                      "the receivers, then the exporters, inside that catch",
                      "server/.../metrics/ClientTelemetryExporterPlugin.java (4.3.1 source)"))),
    Rule("kip714.push.empty_metrics", Level.MUST, "KIP-714", "Client behavior",
         "should send a PushTelemetryRequest ... with an empty metrics blob",
         "A push with an empty Metrics blob is accepted (and nothing is exported).",
         behaviour="C.4"),
    Rule("kip714.push.accepted", Level.MUST, "KIP-714", "PushTelemetryRequest", "",
         "A push that passes every check is answered NONE.", behaviour="C.4"),
    Rule("kip714.push.exported", Level.MUST, "KIP-714", "Client telemetry receiver", "",
         "Every accepted non-empty push reaches the telemetry receiver intact, with its "
         "instance id.", behaviour="C.4"),
)  # fmt: skip

ROBUSTNESS = (
    Rule("kip714.robustness.malformed_answered", Level.MUST, "KIP-714",
         "Throttling and rate-limiting", "",
         "A malformed or unexpected request is answered with a decodable response carrying a "
         "defined error code, or its one connection is closed; it is never left hanging.",
         ruling=11, behaviour="C.1",
         known=(Known("Apache 3.7.0-4.1.0", "violates for an AlterConfigs naming one resource "
                      "twice: never answered",
                      "clients/.../AlterConfigsResponse.java errors() Collectors.toMap"),)),
    Rule("kip714.robustness.healthy", Level.MUST, "KIP-714", "Throttling and rate-limiting", "",
         "After any request (huge, truncated, a decompression bomb) the broker still answers "
         "new connections.", ruling=12, behaviour="C.1"),
)  # fmt: skip

RULES = GET + PUSH + ROBUSTNESS
