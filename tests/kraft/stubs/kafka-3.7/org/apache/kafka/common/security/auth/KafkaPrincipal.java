// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/security/auth/KafkaPrincipal.java.
package org.apache.kafka.common.security.auth;

import java.security.Principal;

public class KafkaPrincipal implements Principal {
    public KafkaPrincipal(String principalType, String name) {
    }

    @Override
    public String getName() {
        return null;
    }

    public String getPrincipalType() {
        return null;
    }
}
