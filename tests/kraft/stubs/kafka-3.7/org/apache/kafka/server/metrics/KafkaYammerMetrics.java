// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// server-common/src/main/java/org/apache/kafka/server/metrics/KafkaYammerMetrics.java.
package org.apache.kafka.server.metrics;

import com.yammer.metrics.core.MetricsRegistry;

public class KafkaYammerMetrics {
    private KafkaYammerMetrics() {
    }

    public static MetricsRegistry defaultRegistry() {
        return null;
    }
}
