// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/server/telemetry/ClientTelemetry.java at 4.2.
package org.apache.kafka.server.telemetry;

@Deprecated(since = "4.2", forRemoval = true)
@SuppressWarnings("removal")
public interface ClientTelemetry {
    ClientTelemetryReceiver clientReceiver();
}
