// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/server/telemetry/ClientTelemetryPayload.java.
package org.apache.kafka.server.telemetry;

import org.apache.kafka.common.Uuid;

import java.nio.ByteBuffer;

public interface ClientTelemetryPayload {
    Uuid clientInstanceId();

    boolean isTerminating();

    String contentType();

    ByteBuffer data();
}
