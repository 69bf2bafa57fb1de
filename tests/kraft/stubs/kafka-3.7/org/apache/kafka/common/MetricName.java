// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/MetricName.java (3.7.0-4.2).
package org.apache.kafka.common;

import java.util.Map;

public final class MetricName {
    public String name() {
        return null;
    }

    public String group() {
        return null;
    }

    public String description() {
        return null;
    }

    public Map<String, String> tags() {
        return null;
    }
}
