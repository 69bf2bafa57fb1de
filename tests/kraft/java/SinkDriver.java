// Drives the kconform sink plugin on a plain JVM against the compile stubs: what a broker would
// do (exportMetrics with a request context, a Yammer registry to sample), so that the Python tests
// can read the real plugin's HTTP/JSON output. The stubs have no behaviour; every value comes
// from the subclasses and implementations below. Prints "PORT <n>" and serves until stdin closes.
package kconformtest;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import com.yammer.metrics.core.MetricsRegistry;

import dev.kconform.sink.KconformSinkReporter;
import dev.kconform.sink.SinkServer;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.telemetry.ClientTelemetryPayload;
import org.apache.kafka.server.telemetry.ClientTelemetryReceiver;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

@SuppressWarnings({"deprecation", "removal"})
public final class SinkDriver {
    /** Shaped like Kafka's network.ClientInformation (public class, softwareName/Version()). */
    public static final class Info {
        public String softwareName() {
            return "apache-kafka-java";
        }

        public String softwareVersion() {
            return "3.9.1";
        }
    }

    /** Shaped like Kafka's requests.RequestContext: the interface plus public fields. */
    public static class Context implements AuthorizableRequestContext {
        private final String clientId;

        Context(String clientId) {
            this.clientId = clientId;
        }

        public String listenerName() {
            return "EXTERNAL";
        }

        public SecurityProtocol securityProtocol() {
            return SecurityProtocol.PLAINTEXT;
        }

        public KafkaPrincipal principal() {
            return new KafkaPrincipal("User", "ANONYMOUS") {
                @Override
                public String getName() {
                    return "ANONYMOUS";
                }

                @Override
                public String getPrincipalType() {
                    return "User";
                }
            };
        }

        public InetAddress clientAddress() {
            return InetAddress.getLoopbackAddress();
        }

        public int requestType() {
            return 72;
        }

        public int requestVersion() {
            return 0;
        }

        public String clientId() {
            return clientId;
        }

        public int correlationId() {
            return 9;
        }
    }

    /** A 3.7+ RequestContext: KIP-511 client information and KIP-714 source port. */
    public static final class FullContext extends Context {
        public final Info clientInformation = new Info();
        public final Optional<Integer> clientPort = Optional.of(54321);

        FullContext(String clientId) {
            super(clientId);
        }
    }

    static ClientTelemetryPayload payload(String id, boolean terminating, byte[] data,
                                          boolean brokenContentType) {
        Uuid uuid = new Uuid(1L, 2L) {
            @Override
            public String toString() {
                return id;
            }
        };
        return new ClientTelemetryPayload() {
            public Uuid clientInstanceId() {
                return uuid;
            }

            public boolean isTerminating() {
                return terminating;
            }

            public String contentType() {
                if (brokenContentType) {
                    throw new IllegalStateException("no content type");
                }
                return "application/x-protobuf";
            }

            public ByteBuffer data() {
                return ByteBuffer.wrap(data);
            }
        };
    }

    static Gauge<Object> gauge(Object value) {
        return new Gauge<Object>() {
            @Override
            public Object value() {
                if (value instanceof RuntimeException) {
                    throw (RuntimeException) value;
                }
                return value;
            }
        };
    }

    static Meter meter(long count) {
        return new Meter() {
            @Override
            public long count() {
                return count;
            }
        };
    }

    static MetricName name(String mbean) {
        return new MetricName("g", "t", "n", null, mbean) {
            @Override
            public String getMBeanName() {
                return mbean;
            }
        };
    }

    /** A MetricsData with one resource, one scope and one metric of that name (no data). */
    static byte[] metricsData(String metricName) {
        byte[] name = metricName.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return field(1, field(2, field(2, field(1, name))));
    }

    static byte[] field(int number, byte[] inner) {
        byte[] out = new byte[inner.length + 2]; // every length here is below 128
        out[0] = (byte) (number << 3 | 2);
        out[1] = (byte) inner.length;
        System.arraycopy(inner, 0, out, 2, inner.length);
        return out;
    }

    /** Prints what an export threw, as a broker would catch it; "THREW none" if nothing. */
    static void tryExport(Runnable export) {
        try {
            export.run();
            System.out.println("THREW none");
        } catch (RuntimeException e) {
            System.out.println("THREW " + e.getMessage());
        }
    }

    public static void main(String[] args) throws Exception {
        Map<MetricName, Metric> metrics = new LinkedHashMap<>();
        metrics.put(name("kafka.log:type=Log,name=Size,topic=t.a,partition=0"), gauge(1234L));
        metrics.put(name("kafka.log:type=Log,name=LogEndOffset,topic=t.a,partition=1"), gauge(7L));
        metrics.put(name("kafka.log:type=Log,name=LogEndOffset,topic=t.a,partition=1,"
            + "is-future=true"), gauge(3L));
        metrics.put(name("kafka.log:type=Log,name=Size,topic=gone,partition=0"),
            gauge(new IllegalStateException("partition deleted")));
        metrics.put(name("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t.a"),
            meter(42L));
        metrics.put(name("kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=t.a,"
            + "partition=1"), meter(99L));
        metrics.put(name("kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec"), meter(5L));
        metrics.put(name("kafka.server:type=ReplicaManager,name=LeaderCount"), gauge(3));
        MetricsRegistry registry = new MetricsRegistry() {
            @Override
            public Map<MetricName, Metric> allMetrics() {
                return metrics;
            }
        };

        SinkServer sink = SinkServer.shared();
        sink.acquire("7", 0, () -> registry);
        ClientTelemetryReceiver receiver = new KconformSinkReporter().clientReceiver();

        byte[] otlp = {0x0a, 0x02, 0x08, 0x01};
        byte[] gzip = {0x1f, (byte) 0x8b, 0x08, 0x00};
        receiver.exportMetrics(new FullContext("weird \"id\"\n"),
            payload("AAAAAAAAAAEAAAAAAAAAAg", false, otlp, false));
        ClientTelemetryPayload second = payload("second-instance", true, gzip, false);
        receiver.exportMetrics(new Context("plain"), second);
        sink.record(new Context("plain"), second, 5000, "exporter"); // same push, 4.2 path
        receiver.exportMetrics(new FullContext("broken"),
            payload("third-instance", false, new byte[] {0x55}, true));
        receiver.exportMetrics(null, payload("fourth-instance", false, new byte[0], false));

        // ThrowOnDemand: off, the reserved metric is recorded like any other
        byte[] asksToThrow = metricsData("kconform.sink.throw");
        receiver.exportMetrics(new Context("off"), payload("fifth-instance", false, asksToThrow,
            false));
        sink.throwOnDemand(true);
        tryExport(() -> receiver.exportMetrics(new Context("on"),
            payload("thrown-receiver", false, asksToThrow, false)));
        tryExport(() -> sink.export(new Context("on"),
            payload("thrown-exporter", false, asksToThrow, false), 5000, "exporter"));
        receiver.exportMetrics(new Context("on"), payload("sixth-instance", false,
            metricsData("kconform.sink.throw.not"), false));
        receiver.exportMetrics(new Context("on"), payload("seventh-instance", false,
            new byte[] {0x0a, 0x7f}, false)); // truncated protobuf: never a request to throw

        System.out.println("PORT " + sink.port());
        System.out.flush();
        while (System.in.read() != -1) {
            // serve until the test closes our stdin
        }
        sink.release();
    }
}
