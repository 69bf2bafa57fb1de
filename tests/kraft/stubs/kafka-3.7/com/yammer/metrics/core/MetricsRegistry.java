// Compile-only stub (no behaviour): Yammer metrics-core 2.2.0, the version Kafka ships, read
// from dropwizard/metrics metrics-core/src/main/java/com/yammer/metrics/core/MetricsRegistry.java.
package com.yammer.metrics.core;

import java.util.Map;

public class MetricsRegistry {
    public MetricsRegistry() {
    }

    public Map<MetricName, Metric> allMetrics() {
        return null;
    }
}
