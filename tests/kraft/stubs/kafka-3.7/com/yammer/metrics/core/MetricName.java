// Compile-only stub (no behaviour): Yammer metrics-core 2.2.0, the version Kafka ships, read
// from dropwizard/metrics metrics-core/src/main/java/com/yammer/metrics/core/MetricName.java.
package com.yammer.metrics.core;

public class MetricName implements Comparable<MetricName> {
    public MetricName(String group, String type, String name, String scope, String mBeanName) {
    }

    public String getGroup() {
        return null;
    }

    public String getType() {
        return null;
    }

    public String getName() {
        return null;
    }

    public String getScope() {
        return null;
    }

    public String getMBeanName() {
        return null;
    }

    @Override
    public int compareTo(MetricName o) {
        return 0;
    }
}
