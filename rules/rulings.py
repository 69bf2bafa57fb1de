"""The project's rulings: how a verdict is reached where a KIP is ambiguous, silent, or disagrees
with Apache Kafka. A rule names its ruling by number; docs/rules.md renders them."""

from __future__ import annotations

from kconform.rules.model import Ruling

RECONNECT_WITHIN_S = 30.0
"""Ruling 22's bound: how long a case waits for a client's next connection after a lost one."""

RULINGS = (
    Ruling(1, "What 'all metrics' is",
           'The final KIP says RequestedMetrics ["*"] means all metrics; the schema\'s doc says '
           '[""]. A broker sending ["*"] for metrics=* is MUST. A client treating ["*"] as all is '
           'MUST; treating [""] as all is SHOULD (an empty prefix matches every name anyway).'),
    Ruling(2, "A push after the Terminating push",
           "The error table says INVALID_REQUEST while the rate-limit section lets the flag be "
           "reused after the next interval. A second unthrottled Terminating push inside the "
           "interval is a MUST violation; the code being INVALID_REQUEST is SHOULD; what happens "
           "once the interval has expired is INFO."),
    Ruling(3, "Terminating counts per (instance, SubscriptionId)",
           "A terminating client whose last push got UNKNOWN_SUBSCRIPTION_ID may Get again and "
           "push Terminating once more. A broker that counts the failed push as the Terminating "
           "one (Apache, KAFKA-20898) fails a MUST."),
    Ruling(4, "Throttling a Get",
           "Clients are told to Get 'immediately' after UNKNOWN_SUBSCRIPTION_ID or "
           "UNSUPPORTED_COMPRESSION_TYPE, so a broker throttling that Get fails a SHOULD. "
           "Throttling any other Get inside the interval is not in the KIP: INFO."),
    Ruling(5, "Echoing the ClientInstanceId",
           "The KIP answers a Get naming an id with Null; Apache echoes the id. Brokers: INFO. "
           "Clients must accept both (MUST)."),
    Ruling(6, "DeltaTemporality",
           "A broker may ask for either temporality (INFO). A client must honour the flag (MUST)."),
    Ruling(7, "First-push jitter",
           "A first push outside 0.5-1.5 x PushIntervalMs misses a SHOULD; a narrower spread "
           "inside it passes and is recorded."),
    Ruling(8, "Compression choices",
           "Compressing payloads above 1000 bytes, and picking the first mutually supported type, "
           "are SHOULD."),
    Ruling(9, "The KIP-511 name pattern",
           "The KIP's pattern allows '_' and any order; Apache's requires an alphanumeric first "
           "and last character and has no '_'. Brokers rejecting strings outside the KIP's "
           "pattern: MUST; their answer to strings inside it but outside Apache's: INFO. "
           "Clients sending strings Apache accepts: SHOULD."),
    Ruling(10, "TELEMETRY_TOO_LARGE on the client",
           "Shrinking the next payload is SHOULD."),
    Ruling(11, "A null Metrics field",
           "Metrics is not nullable, so a null makes the request malformed. Answering it with any "
           "code, or closing that one connection, both conform; which one is INFO. Crashing, or "
           "failing other or new connections, fails a MUST."),
    Ruling(12, "Decompression bombs",
           "telemetry.max.bytes limits the bytes as sent. For a small payload that inflates "
           "enormously, staying healthy is MUST, rejecting it rather than exporting it is SHOULD, "
           "and the code is INFO."),
    Ruling(13, "Decompressing before the receiver",
           "The final KIP has the broker decompress before the plugin sees the data: MUST, judged "
           "through the target's telemetry sink where it has one."),
    Ruling(14, "A series twice in one push",
           "KIP-714 carries OTLP, whose data model identifies a series by its resource, scope, "
           "name and attributes and has one writer per series: two points of one series in one "
           "push leave a receiver unable to tell the series' value. The KIP says nothing of it; "
           "librdkafka fixed exactly this as a bug (2.10.1, #5103), so sending a series twice in "
           "one push fails a MUST."),
    Ruling(15, "A fallback answer that does not go lower",
           "KIP-511 has the client restart at the ApiVersions version an UNSUPPORTED_VERSION "
           "answer advertises; it is silent on a maximum not below the version refused, or a "
           "negative one, which no broker telling its own maximum sends. A retry there can only "
           "be refused again, so taking it as told loops for ever (franz-go fixed exactly this, "
           "cd381f4c). A client should keep its ApiVersions on such a connection bounded: fall "
           "back to v0, as the KIP's client does without a usable range, or give the connection "
           "up. SHOULD, not MUST: a client that takes the answer as told follows the KIP's own "
           "sentence, and only a broken broker sends it."),
    Ruling(16, "Whose version ClientSoftwareVersion is",
           "The schema says 'The version of the client', and the KIP's own client sends the "
           "version of its library (kafka-version.properties) for operators to see 'the impact "
           "of a broker upgrade to their clients'. The application's version, or a placeholder "
           "such as 'dev', tells them nothing of that, so it fails a MUST; a wrapper that names "
           "the library it embeds (librdkafka) may send that library's version."),
    Ruling(17, "A telemetry request lost to the transport",
           "The error table names only error codes, and none of them is a lost connection or a "
           "request left unanswered. 'Connection selection' has the client keep its connection "
           "'until the connection goes down, at which time it may choose to reconnect and "
           "continue', and the earlier revision's 5-minute retries are there 'to eventually "
           "trigger a retry and avoid having to restart clients'. A client that stops for good "
           "after such a failure is lost to its operators until restarted, which Apache fixed as "
           "a bug (KAFKA-19747). So a client must send telemetry again after one: within the "
           "longer of 5 minutes (that retry, and the wait Apache's fixed client takes) and three "
           "PushIntervalMs. How soon inside that bound is the client's choice."),
    Ruling(18, "A receiver that throws",
           "KIP-714 makes validating the metrics the receiver's task ('Validation of the encoded "
           "metrics is the task of the ClientMetricsReceiver') and gives one code for its "
           "failure: 'Should decoding or validation of the binary metrics blob fail the "
           "ErrorCode will be set to InvalidRecord'. Its receiver interface returns nothing, so "
           "an exception from exportMetrics is the only way a receiver can refuse a push, and "
           "the KIP's broker metrics count 'exceptions raised from plugin's exportMetrics()', "
           "a failure the broker outlives. So a push the receiver throws on is answered "
           "INVALID_RECORD (MUST). The KIP is silent on what follows; nothing in it closes a "
           "connection or ends a client instance over one refused push, so that connection "
           "keeps being served, the broker keeps serving others, and the instance's next push "
           "once PushIntervalMs has passed is accepted (MUST). Whether a push sooner than that "
           "is throttled (Apache has already counted the refused one) is not judged."),
    Ruling(19, "A broker that advertises 71/72 again",
           "The KIP lets a client send telemetry to 'any connected broker that reports support' "
           "and to no other, and is silent on a broker that stops reporting it and later reports "
           "it again, as one does whose metrics reporter is taken off and put back (a rolled "
           "config, a restart). A client that never asks again is lost to its operators for its "
           "whole life, though nothing is wrong with it any more. The KIP's own client plans for "
           "it ('The broker might not support telemetry. Let's sleep for a while before trying "
           "request again', ClientTelemetryReporter, 5 minutes). So a client should send a Get or "
           "Push again within ruling 17's bound (the longer of 5 minutes and three "
           "PushIntervalMs) of the first connection that lists 71/72 again. SHOULD, not MUST: "
           "unlike a lost request (ruling 17), no release of any client was fixed for it, and "
           "the KIP's text asks nothing of the client here."),
    Ruling(20, "What an .avg and a .max must agree on",
           "The KIP's tables name each metric's meaning, not its arithmetic: "
           "node.request.latency.avg is the 'Average request latency', .max the 'Maximum request "
           "latency', and likewise for throttle time. An average of n observations lies between "
           "their maximum / n and their maximum, whatever window a client keeps, so a pair "
           "outside that range is not the quantity the KIP names, and the broker's operators, "
           "the people the KIP's metrics are for, read a wrong latency. franz-go fixed one such "
           "average as a bug (v1.21.4: divided by the window's length, not by the count). So for "
           "a metric observed once per request or response, each pushed .avg is at most its "
           ".max and at least .max over the requests the client has sent (MUST; 1 ms of slack "
           "for whole-millisecond maxima). Other averages (a queue time per batch, a ratio) have "
           "no count the wire shows and are not judged."),
    Ruling(21, "Where a broker is, once it has moved",
           "A Kafka client learns where each broker listens from Metadata alone (and from its "
           "bootstrap list before the first answer). 'Connection selection' lets a client whose "
           "telemetry connection went down 'reconnect and continue using the same broker'. A "
           "broker is its node id at the address the cluster gives for it now: once a broker "
           "has come back elsewhere (a replaced Kubernetes pod, a new advertised listener), its "
           "old address may serve another broker or nothing, and a client that goes there "
           "sends its telemetry to the wrong broker or loses it (KIP-1242 is about such "
           "misrouted connections). Apache fixed its client for doing so as a bug (KAFKA-20393, "
           "4.2.1 and 4.4.0). So once a Metadata answer has given a broker a new address, the "
           "client opens no connection to the old one (MUST). A connection begun within 250 ms "
           "of that answer is not counted: the client may not have read it yet."),
    Ruling(22, "How long a client may take to reconnect",
           "KIP-511 asks every connection to identify itself but sets no time within which a "
           "client opens its next one after a lost connection; each client does so on its own "
           "timer: the Java client's reconnect.backoff.max.ms (1 s), librdkafka's (10 s), "
           "kafka-go's metadata refresh at a random moment within MetadataTTL (6 s; transport.go "
           "connPool.discover). A case that judges the client's next connection waits for it as "
           "long as the client takes, and ends as soon as it is seen, up to "
           f"{RECONNECT_WITHIN_S:g} s (three times the longest of those timers). A client that "
           "has not reconnected by then is not judged (not-applicable, saying so): the KIP "
           "requires no reconnection, only what it sends when it does."),
)  # fmt: skip

BY_NUMBER = {r.number: r for r in RULINGS}
