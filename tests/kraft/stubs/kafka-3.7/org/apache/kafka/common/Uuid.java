// Compile-only stub (no behaviour): the shape of Apache Kafka's public API, read from
// clients/src/main/java/org/apache/kafka/common/Uuid.java (toString() is base64url, no padding).
package org.apache.kafka.common;

public class Uuid implements Comparable<Uuid> {
    public Uuid(long mostSigBits, long leastSigBits) {
    }

    public long getMostSignificantBits() {
        return 0L;
    }

    public long getLeastSignificantBits() {
        return 0L;
    }

    @Override
    public int compareTo(Uuid other) {
        return 0;
    }
}
