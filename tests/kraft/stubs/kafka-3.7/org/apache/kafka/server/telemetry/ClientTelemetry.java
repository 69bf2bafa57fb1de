// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/server/telemetry/ClientTelemetry.java (3.7.0-4.1).
package org.apache.kafka.server.telemetry;

public interface ClientTelemetry {
    ClientTelemetryReceiver clientReceiver();
}
