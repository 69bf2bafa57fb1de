// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/Reconfigurable.java.
package org.apache.kafka.common;

import org.apache.kafka.common.config.ConfigException;

import java.util.Map;
import java.util.Set;

public interface Reconfigurable extends Configurable {
    Set<String> reconfigurableConfigs();

    void validateReconfiguration(Map<String, ?> configs) throws ConfigException;

    void reconfigure(Map<String, ?> configs);
}
