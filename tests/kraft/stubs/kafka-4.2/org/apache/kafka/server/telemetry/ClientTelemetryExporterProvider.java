// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/server/telemetry/ClientTelemetryExporterProvider.java
// (4.2+).
package org.apache.kafka.server.telemetry;

public interface ClientTelemetryExporterProvider {
    ClientTelemetryExporter clientTelemetryExporter();
}
