// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/server/telemetry/ClientTelemetryContext.java (4.2+).
package org.apache.kafka.server.telemetry;

import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

public interface ClientTelemetryContext {
    int pushIntervalMs();

    AuthorizableRequestContext authorizableRequestContext();
}
