"""Apache Kafka's behaviour, section by section, in the project's words: what the harness's
reference broker mirrors and what its rules and citations ("§C.4 step 3") point to.
Sources are paths in apache/kafka (or librdkafka) at the releases named."""

from __future__ import annotations

from kconform.rules.model import Section

_CMM = "server/src/main/java/org/apache/kafka/server/ClientMetricsManager.java"

SECTIONS = (
    Section("A.1", "ApiVersions schema",
            "Versions 0-3 (3.7, 3.8), 0-4 (3.9-4.3) or 0-5 (4.4+); v3 adds ClientSoftwareName "
            "and ClientSoftwareVersion, v5 the request's ClusterId and NodeId (KIP-1242). From "
            "3.9, features whose minimum is 0 are left out of responses below v4.",
            "clients/src/main/resources/common/message/ApiVersions{Request,Response}.json"),
    Section("A.2", "Telemetry schemas",
            "GetTelemetrySubscriptions (71) and PushTelemetry (72) have one version, v0, "
            "flexible, unchanged 3.7.0-4.1.0. Push's Metrics is non-nullable bytes. Key 74 lists "
            "CLIENT_METRICS resources (ListConfigResources v0-1 from 4.1).",
            "GetTelemetrySubscriptions*.json, PushTelemetry*.json; KAFKA-18904"),
    Section("A.3", "Header versions",
            "Flexible versions use request header v2 and response header v1, except ApiVersions, "
            "whose responses always use header v0.",
            "generator/.../ApiMessageTypeGenerator.java generateHeaderVersion"),
    Section("A.4", "Error codes",
            "The telemetry paths answer NONE 0, INVALID_REQUEST 42, UNSUPPORTED_COMPRESSION_TYPE "
            "76, INVALID_RECORD 87, THROTTLING_QUOTA_EXCEEDED 89, UNKNOWN_SUBSCRIPTION_ID 117, "
            "TELEMETRY_TOO_LARGE 118.",
            "clients/.../common/protocol/Errors.java"),
    Section("A.5", "Compression framing",
            "Ids none 0, gzip 1, snappy 2, lz4 3, zstd 4, framed as in record batches (xerial "
            "snappy, whose reader also takes a raw block; LZ4 frames with independent blocks). "
            "3.7.0 neither compresses (client) nor decompresses (broker); 3.8.0+ do both.",
            "clients/.../telemetry/internals/ClientTelemetryUtils.java"),
    Section("B.1", "KIP-511 name and version validation",
            "At v3+ both strings must fully match [a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?; "
            "otherwise INVALID_REQUEST and nothing is registered. The broker keeps the "
            "connection open.",
            "clients/.../requests/ApiVersionsRequest.java isValid"),
    Section("B.2", "ApiVersions at an unsupported version",
            "The body is not parsed; the answer is a v0 body with UNSUPPORTED_VERSION and one "
            "ApiKeys entry, ApiVersions' own range.",
            "clients/.../requests/RequestContext.java; ApiVersionsRequestTest"),
    Section("B.3", "ApiVersions on SASL listeners",
            "Answered before authentication, with the same errors; a failed one does not advance "
            "the SASL state.",
            "clients/.../authenticator/SaslServerAuthenticator.java"),
    Section("B.4", "Advertising 71 and 72",
            "Listed only when a metrics reporter provides a ClientTelemetry receiver; a broker "
            "without one still processes them if sent.",
            "ApiVersionsResponse.filterApis; DefaultApiVersionManager (4.1)"),
    Section("B.5", "ApiVersions v5: cluster and node check (KIP-1242, 4.4+)",
            "In order: an unsupported version gets the B.2 fallback; a v5 request with a "
            "ClusterId but NodeId -1, or a NodeId but no ClusterId, fails isValid and gets "
            "INVALID_REQUEST; one whose non-null ClusterId is not the broker's cluster id, or "
            "whose NodeId is not its broker id, gets REBOOTSTRAP_REQUIRED (129); otherwise the "
            "usual answer. Error bodies carry no ApiKeys. The Java client (metadata.cluster."
            "check.enable, default true, ignored with metadata.recovery.strategy=none) sends "
            "the cluster id its Metadata gave and the node id when both are known (never to a "
            "bootstrap address, whose id is negative); on REBOOTSTRAP_REQUIRED it closes every "
            "connection and rebootstraps, on any other error it closes that connection.",
            "KafkaApis.scala handleApiVersionsRequest; ApiVersionsRequest.java isValid; "
            "NetworkClient.java handleInitiateApiVersionRequests, handleApiVersionsResponse"),
    Section("C.1", "Request wiring",
            "Any exception from the telemetry manager becomes INVALID_REQUEST; the manager never "
            "throttles through ThrottleTimeMs. A request the broker cannot parse closes its "
            "connection.",
            "core/src/main/scala/kafka/server/KafkaApis.scala"),
    Section("C.2", "GetTelemetrySubscriptions, step by step",
            "Step 1: a zero id gets a fresh random one (never ZERO or ONE); any other id is kept. "
            "Step 2: the instance is looked up, created, or rebuilt after a subscription change. "
            "Step 3: a Get inside PushIntervalMs of the last Get or push is throttled (89) and "
            "answered with default fields; 3.7.0-4.0.0 throttle it even after a 117/76 push "
            "(#19959). Step 4: success: compression [4, 3, 1, 2], the lowest matching interval "
            "(300000 without one), telemetry.max.bytes, delta temporality, and the matching "
            'metrics (["*"] if any asks for all).',
            _CMM),
    Section("C.3", "SubscriptionId",
            "CRC32C of the matched metric set and interval, XOR the instance id's hash: the same "
            "on every broker, changed when the set or interval change.",
            f"{_CMM} computeSubscriptionId"),
    Section("C.4", "PushTelemetry, step by step",
            "Step 0: a ZERO or ONE id is INVALID_REQUEST. Step 1: an unknown id makes a new "
            "instance, no error. Step 2: after termination, INVALID_REQUEST. Step 3: inside the "
            "interval, THROTTLING_QUOTA_EXCEEDED, except the first push after a Get and a "
            "Terminating push. Step 4: a SubscriptionId that is not current, "
            "UNKNOWN_SUBSCRIPTION_ID. Step 5: a compression id outside 0-4, "
            "UNSUPPORTED_COMPRESSION_TYPE (NONE is accepted). Step 6: Metrics above "
            "telemetry.max.bytes as sent, TELEMETRY_TOO_LARGE; Apache then sets the terminating "
            "flag from every push in a finally block (KAFKA-20898). Step 7: export, decompressing "
            "first (3.8.0+); a failure is INVALID_RECORD. Step 8: empty Metrics is accepted "
            "without export. Step 9: NONE.",
            f"{_CMM} processPushTelemetryRequest, validatePushRequest"),
    Section("C.5", "Instance cache and expiry",
            "An LRU cache of 16384 instances; from 3.8.0 an instance expires max(60 s, 3 x "
            "PushIntervalMs) after its last request; from 4.0 it is dropped when its connection "
            "closes.",
            "KAFKA-15813, KAFKA-16186, KAFKA-17778"),
    Section("C.6", "Subscription matching",
            "Selectors client_instance_id, client_id, client_software_name/version, "
            "client_source_address/port; every selector must fully match. 3.7.0 fills the port "
            "with the address.",
            "server/.../metrics/ClientMetricsInstanceMetadata.java isMatch"),
    Section("C.7", "Broker metrics",
            "From 3.8.0 the client-metrics group counts instances, throttles, unknown "
            "subscription ids, exports and export errors.", _CMM),
    Section("D", "CLIENT_METRICS configuration",
            "Keys metrics, interval.ms (100-3600000) and match (name=regex with known names). "
            "An empty name, unknown key or out-of-range interval is INVALID_REQUEST; a bad match "
            "is INVALID_CONFIG; a non-integer interval is UNKNOWN_SERVER_ERROR before 4.0 and "
            "INVALID_CONFIG after (KAFKA-17525). Deleting every key deletes the subscription.",
            "server/.../metrics/ClientMetricsConfigs.java; ConfigurationControlManager.java"),
    Section("E.1", "The Java client",
            "Gets with a zero id first, jitters the first push 0.5-1.5 x the interval, compresses "
            "with the first accepted type (3.8.0+), Gets at once after 117/76, waits after 89/118, "
            "stops after 42/87, and sends one Terminating push on close, made by its network "
            "thread's next poll: a producer starts telemetry close first only from 3.7.2, 3.8.1 "
            "and 3.9.0 (KAFKA-17731), and an idle one polls no more after close() (Sender.run "
            "drains only while a batch or a request is pending). A telemetry request lost with "
            "its connection or timed out disables telemetry for good up to 4.0.1 and in 4.1.0; "
            "from 4.0.2 and 4.1.1 the next Get waits 300 s (DEFAULT_PUSH_INTERVAL_MS), whatever "
            "PushIntervalMs says (KAFKA-19747).",
            "clients/.../telemetry/internals/ClientTelemetryReporter.java, "
            "ClientTelemetryUtils.java"),
    Section("E.2", "librdkafka",
            "Jitters 0.8-1.2 x the interval, Gets at once only after 117, stops after 42/87, "
            "sends raw snappy, and pushes Terminating on destroy only from PUSH_SCHEDULED.",
            "src/rdkafka_telemetry.c (librdkafka 2.5+)"),
    Section("F", "KIP-977 and partition volumes",
            "No Apache release has metrics.verbosity or partition-level throughput meters "
            "(apache/kafka#20397 closed unmerged). Per-partition volume is read from end offsets "
            "(ListOffsets) and log sizes.",
            "storage/.../log/metrics/BrokerTopicMetrics.java (4.1)"),
    Section("G", "Apache's own tests",
            "ClientMetricsManagerTest, ApiVersionsRequestTest and ClientTelemetryTest assert the "
            "behaviour above; the reference broker's unit tests mirror them.",
            "server/src/test/java/org/apache/kafka/server/ClientMetricsManagerTest.java"),
)  # fmt: skip

BY_KEY = {s.key: s for s in SECTIONS}
