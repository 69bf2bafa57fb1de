// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/server/telemetry/ClientTelemetryReceiver.java at 4.2.
package org.apache.kafka.server.telemetry;

import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

@Deprecated(since = "4.2", forRemoval = true)
public interface ClientTelemetryReceiver {
    void exportMetrics(AuthorizableRequestContext context, ClientTelemetryPayload payload);
}
