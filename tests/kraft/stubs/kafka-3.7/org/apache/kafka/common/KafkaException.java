// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/KafkaException.java.
package org.apache.kafka.common;

public class KafkaException extends RuntimeException {
    public KafkaException(String message) {
        super(message);
    }
}
