// Compile-only stub (no behaviour): Yammer metrics-core 2.2.0, the version Kafka ships, read
// from dropwizard/metrics metrics-core/src/main/java/com/yammer/metrics/core/Meter.java; Kafka
// calls count() on it (e.g. BrokerTopicMetrics.messagesInRate().count()). The protected no-arg
// constructor is the stub's own (the real one takes a tick thread and a clock).
package com.yammer.metrics.core;

public class Meter implements Metric {
    protected Meter() {
    }

    public long count() {
        return 0L;
    }

    @Override
    public <T> void processWith(MetricProcessor<T> processor, MetricName name, T context)
        throws Exception {
    }
}
