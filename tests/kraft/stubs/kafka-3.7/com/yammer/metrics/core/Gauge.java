// Compile-only stub (no behaviour): Yammer metrics-core 2.2.0, the version Kafka ships, read
// from dropwizard/metrics metrics-core/src/main/java/com/yammer/metrics/core/Gauge.java.
package com.yammer.metrics.core;

public abstract class Gauge<T> implements Metric {
    public abstract T value();

    @Override
    public <U> void processWith(MetricProcessor<U> processor, MetricName name, U context)
        throws Exception {
    }
}
