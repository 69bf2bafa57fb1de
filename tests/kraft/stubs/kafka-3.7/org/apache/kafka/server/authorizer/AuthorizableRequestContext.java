// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/server/authorizer/AuthorizableRequestContext.java.
package org.apache.kafka.server.authorizer;

import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;

import java.net.InetAddress;

public interface AuthorizableRequestContext {
    String listenerName();

    SecurityProtocol securityProtocol();

    KafkaPrincipal principal();

    InetAddress clientAddress();

    int requestType();

    int requestVersion();

    String clientId();

    int correlationId();
}
