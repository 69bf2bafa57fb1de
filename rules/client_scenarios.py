"""Client rules judged through the `admin` and `share-consume` scenarios and KIP-1076's
application metrics: telemetry beyond the producer and the classic consumer."""

from __future__ import annotations

from kconform.rules.model import Known, Level, Rule

_ADMIN_39 = "clients/.../admin/KafkaAdminClient.java at 3.9"
_ADMIN_CONFIG = "clients/.../admin/AdminClientConfig.java"
_KAFKA_17248 = "KAFKA-17248 (apache/kafka PR #17021, KIP-1076 implementation)"
_REGISTER_DOC = "clients/.../admin/Admin.java, Producer.java, Consumer.java (javadoc)"

ADMIN = (
    Rule("kip714.client.admin.pushes_when_enabled", Level.MUST, "KIP-714",
         "Client configuration",
         "true (default) - The client will push metrics if there are any matching subscriptions",
         "An Admin client (KIP-714's Admin API gives it a client instance id: it is one of the "
         "KIP's clients) with enable.metrics.push=true and a subscription matching it Gets its "
         "subscription and pushes.",
         behaviour="E.1",
         known=(Known("Java client 3.7.0-3.9.x", "KafkaAdminClient has no telemetry reporter: "
                      "enable.metrics.push only gates clientInstanceId(), which sends the one "
                      "GetTelemetrySubscriptions it answers from; it never pushes",
                      f"{_ADMIN_39} (clientTelemetryEnabled, clientInstanceId); {_KAFKA_17248} "
                      "added ClientTelemetryReporter to it",
                      bug="ak-admin-never-pushes", fixed_in="4.0.0",
                      case="kip714.client.admin.pushes_when_enabled"),
                Known("Java client 4.0.0+", "conforms: ClientTelemetryReporter on the Admin client",
                      _KAFKA_17248))),
    Rule("kip1076.client.admin.default", Level.INFO, "KIP-1076", "Public Interfaces", "",
         "What an Admin client left at its enable.metrics.push default does. KIP-714's "
         "default is true; Apache 4.0.0 (with KIP-1076, which gave the Admin client its "
         "telemetry reporter) made the Admin client's default false, Kafka Streams turning it "
         "on for its own admin. Recorded, not judged: a release's default is a fact, not a KIP "
         "requirement.",
         behaviour="E.1",
         known=(Known("Apache 3.7.0-3.9.x", "default true (AdminClientConfig), but the Admin "
                      "client never pushes (kip714.client.admin.pushes_when_enabled)",
                      f"{_ADMIN_CONFIG} at 3.7 and 3.9: define(ENABLE_METRICS_PUSH_CONFIG, "
                      "BOOLEAN, true)"),
                Known("Apache 4.0.0+", "default false: no telemetry request unless enabled",
                      f"{_ADMIN_CONFIG}: define(ENABLE_METRICS_PUSH_CONFIG, BOOLEAN, false), "
                      "commit 493e4c1 (KAFKA-17248, apache/kafka PR #17422: 'disables metrics "
                      "push for the AdminClient as the default')"))),
)  # fmt: skip

APP_METRICS = (
    Rule("kip1076.client.app_metric_pushed", Level.MUST, "KIP-1076", "Public Interfaces",
         "This metric will be added to this client's metrics that are available for "
         "subscription and sent as telemetry data to the broker.",
         "A Sum or Gauge an application registers with registerMetricForSubscription is pushed "
         "with the client's own metrics once a subscription requests it (here: all metrics), "
         "under a name that ends with the registered metric's name.",
         behaviour="E.1",
         known=(Known("Apache 4.0.0+", "Admin, Producer and Consumer have "
                      "registerMetricForSubscription; the share consumer from 4.1.0",
                      f"{_REGISTER_DOC}; {_KAFKA_17248}; ShareConsumer.java (4.1)"),)),
)  # fmt: skip

SHARE = (
    Rule("kip714.client.share_consumer.pushes", Level.MUST, "KIP-714", "Client configuration",
         "true (default) - The client will push metrics if there are any matching subscriptions",
         "A share consumer (KIP-932) at its defaults, with a subscription matching it, Gets its "
         "subscription and pushes. Which of its metrics it offers is the client's to choose; "
         "the case records those of its own (the consumer-share-* groups) the pushes carry.",
         behaviour="E.1",
         known=(Known("Apache 3.9.0+", "ShareConsumerImpl holds a ClientTelemetryReporter "
                      "(kafka-clients jar, ShareConsumerImpl.clientTelemetryReporter)",
                      "clients/.../consumer/internals/ShareConsumerImpl.java"),)),
)  # fmt: skip

RULES = ADMIN + APP_METRICS + SHARE
