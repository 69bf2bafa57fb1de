// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/metrics/KafkaMetric.java (3.7.0-4.2).
package org.apache.kafka.common.metrics;

import org.apache.kafka.common.MetricName;

public final class KafkaMetric {
    public MetricName metricName() {
        return null;
    }

    public Object metricValue() {
        return null;
    }
}
