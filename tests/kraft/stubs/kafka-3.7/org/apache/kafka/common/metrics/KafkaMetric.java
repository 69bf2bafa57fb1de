// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/metrics/KafkaMetric.java (members unused here).
package org.apache.kafka.common.metrics;

public final class KafkaMetric {
}
