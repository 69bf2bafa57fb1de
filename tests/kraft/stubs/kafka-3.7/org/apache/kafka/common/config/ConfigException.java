// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/config/ConfigException.java.
package org.apache.kafka.common.config;

import org.apache.kafka.common.KafkaException;

public class ConfigException extends KafkaException {
    public ConfigException(String message) {
        super(message);
    }
}
