// Compile-only stub (no behaviour): Yammer metrics-core 2.2.0, the version Kafka ships, read
// from dropwizard/metrics metrics-core/src/main/java/com/yammer/metrics/core/MetricProcessor.java.
package com.yammer.metrics.core;

public interface MetricProcessor<T> {
}
