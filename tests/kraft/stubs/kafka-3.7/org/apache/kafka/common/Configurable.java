// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/Configurable.java.
package org.apache.kafka.common;

import java.util.Map;

public interface Configurable {
    void configure(Map<String, ?> configs);
}
