// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/metrics/MetricsContext.java.
package org.apache.kafka.common.metrics;

import java.util.Map;

public interface MetricsContext {
    Map<String, String> contextLabels();
}
