// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/metrics/MetricsReporter.java (3.7.0-4.2).
package org.apache.kafka.common.metrics;

import org.apache.kafka.common.Reconfigurable;
import org.apache.kafka.common.config.ConfigException;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

public interface MetricsReporter extends Reconfigurable, AutoCloseable {
    void init(List<KafkaMetric> metrics);

    void metricChange(KafkaMetric metric);

    void metricRemoval(KafkaMetric metric);

    void close();

    default Set<String> reconfigurableConfigs() {
        return Collections.emptySet();
    }

    default void validateReconfiguration(Map<String, ?> configs) throws ConfigException {
    }

    default void reconfigure(Map<String, ?> configs) {
    }

    default void contextChange(MetricsContext metricsContext) {
    }
}
