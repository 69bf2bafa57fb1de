// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/security/auth/SecurityProtocol.java.
package org.apache.kafka.common.security.auth;

public enum SecurityProtocol {
    PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
}
