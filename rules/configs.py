"""CLIENT_METRICS configuration rules (KIP-714) and metrics.verbosity rules (KIP-977)."""

from __future__ import annotations

from kconform.rules.model import Known, Level, Rule

_CONFIGS_SRC = "server/src/main/java/org/apache/kafka/server/metrics/ClientMetricsConfigs.java"
_NOT_MERGED = Known(
    "Apache 3.7.0-4.1.0", "unsupported: KIP-977 was never merged",
    "apache/kafka#20397 closed unmerged; no metrics.verbosity in 4.1.0 or trunk",
)  # fmt: skip

CLIENT_METRICS = (
    Rule("kip714.configs.interval_range", Level.MUST, "KIP-714", "Client metrics configuration",
         "minimum: 100, maximum: 3600000 (1 hour)",
         "interval.ms outside 100-3600000 is refused and the previous value stays; the bounds "
         "themselves are accepted.", behaviour="D",
         known=(Known("Apache 3.7.0-4.1.0", "conforms", _CONFIGS_SRC),)),
    Rule("kip714.configs.interval_integer", Level.MUST, "KIP-714", "Client metrics configuration",
         "The client metrics push interval in ms", "A non-integer interval.ms is refused.",
         behaviour="D"),
    Rule("kip714.configs.known_keys", Level.MUST, "KIP-714", "Client metrics configuration",
         "the allowed configs are: interval.ms, metrics and match",
         "A CLIENT_METRICS change naming another key is refused.", behaviour="D"),
    Rule("kip714.configs.match_syntax", Level.MUST, "KIP-714", "Client metrics configuration",
         "A list of key-value pairs",
         "A match entry without '=', with an unknown selector name or with an invalid regular "
         "expression is refused.", behaviour="D"),
    Rule("kip714.configs.name_required", Level.MUST, "KIP-714", "Client metrics configuration",
         "", "A CLIENT_METRICS resource with an empty name is refused.", behaviour="D"),
    Rule("kip714.configs.error_code", Level.SHOULD, "KIP-714", "Client metrics configuration", "",
         "A refused change gets Apache's code (INVALID_REQUEST for a bad key, range or name; "
         "INVALID_CONFIG for a bad match or a non-integer); the KIP names none, so SHOULD.",
         behaviour="D",
         known=(Known("Apache 3.7.0-3.9.x", "answers UNKNOWN_SERVER_ERROR, not a configuration "
                      "error, to a non-integer interval.ms (an unchecked Integer.parseInt)",
                      f"KAFKA-17525 (apache/kafka#17168); {_CONFIGS_SRC} Integer.parseInt",
                      bug="ak-client-metrics-bad-interval-unknown-server-error", fixed_in="4.0.0",
                      case="kip714.configs.invalid.interval_not_integer.error_code"),
                Known("Apache 4.0.0-4.1.0", "conforms", "KAFKA-17525 (commit 894c4a96)"))),
    Rule("kip714.configs.admin_visible", Level.MUST, "KIP-714", "kafka-client-metrics.sh", "",
         "DescribeConfigs and the list of CLIENT_METRICS resources follow every change and "
         "deletion.", behaviour="D",
         known=(Known("Apache 3.7.0-4.4.0", "conforms", "kip714.configs.describe_reflects_changes "
                      "passes on every release in the matrix"),)),
    Rule("kip714.configs.describe_defaults", Level.SHOULD, "KIP-714", "kafka-client-metrics.sh",
         "", "DescribeConfigs of a CLIENT_METRICS resource lists all three keys, those not set "
         "at their defaults (source DEFAULT_CONFIG), as DescribeConfigs does for every other "
         "resource type, so an operator reads the whole subscription a client gets. The KIP "
         "says nothing of it; the bug record (KAFKA-17516: operators saw a subscription without "
         "its interval) shows users need it, and Apache does it from 4.1.0: SHOULD.",
         behaviour="D",
         known=(Known("Apache 3.7.0-4.0.x", "describes a CLIENT_METRICS resource with the keys "
                      "that were set only, leaving out metrics, interval.ms and match at their "
                      "defaults", "KAFKA-17516 (apache/kafka#17264, commit 5e7445a6)",
                      bug="ak-describe-client-metrics-omits-defaults", fixed_in="4.1.0",
                      case="kip714.configs.describe_defaults"),)),
    Rule("kip714.configs.validate_only", Level.MUST, "KIP-714", "Metrics subscription", "",
         "An AlterConfigs with ValidateOnly set validates but changes nothing.", behaviour="D"),
    Rule("kip714.configs.applies_until_deleted", Level.MUST, "KIP-714",
         "Client metrics configuration", "",
         "A subscription the broker accepted applies to the clients it matches until it is "
         "deleted; a change reaches them, however asynchronously.", behaviour="D"),
    Rule("kip714.configs.list_types", Level.MUST, "KIP-1142", "ListConfigResources",
         "If the list is empty, it uses default supported config resource types.",
         "ListConfigResources v1 (key 74, KIP-1142's successor of KIP-714's "
         "ListClientMetricsResources) lists the resource types asked for and no other; an empty "
         "ResourceTypes lists every supported type, CLIENT_METRICS among them; a type the broker "
         "cannot list is refused with an error, not answered with a partial list (Apache: "
         "UNSUPPORTED_VERSION, core/.../KafkaApis.scala handleListConfigResources). Quoted from "
         "Apache's ListConfigResourcesRequest.json, KIP-1142's schema.", behaviour="D"),
)  # fmt: skip

VERBOSITY = (
    Rule("kip977.verbosity.accepted", Level.MUST, "KIP-977", "JSON Config Format",
         "a config with JSON format",
         "A valid metrics.verbosity is accepted and described back.", behaviour="F",
         known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.scope", Level.INFO, "KIP-977", "Part 1",
         "We elected to make it central",
         "Whether metrics.verbosity is set per broker or cluster-wide is recorded.",
         behaviour="F", known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.name_spelling", Level.INFO, "KIP-977", "JSON Config Format", "",
         "Which spelling of the names key ('names' in the table, 'name' in the examples) is "
         "accepted is recorded.", behaviour="F", known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.format", Level.MUST, "KIP-977", "JSON Config Format",
         "a string representing a JSON array",
         "A metrics.verbosity that is not JSON, not an array, or has an unknown level is refused.",
         behaviour="F", known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.filters_valid", Level.SHOULD, "KIP-977", "JSON Config Format",
         "topicPattern and topics should not be used at the same time",
         "A filter with an invalid regular expression, or with both topics and topicPattern, is "
         "refused.", behaviour="F", known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.error_code", Level.SHOULD, "KIP-977", "JSON Config Format", "",
         "A refused metrics.verbosity gets INVALID_CONFIG, Kafka's code for a value that fails "
         "validation; the KIP names none.", behaviour="D", known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.low_untagged", Level.MUST, "KIP-977", "Part 1",
         "In the low settings, these tags will be assigned with an empty value",
         "At low verbosity no meter carries a partition tag.", behaviour="F",
         known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.precedence", Level.MUST, "KIP-977", "JSON Config Format",
         "the one that appears first in the sequence [high, medium, low] will take precedence",
         "Where entries overlap, the highest level wins whatever their order.", behaviour="F",
         known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.filters_select", Level.MUST, "KIP-977", "JSON Config Format",
         "Pattern corresponding to the names of the metric series in scope",
         "Only the topics and metric names an entry's filters select get partition meters; the "
         "topic-level meters stay as they are.", behaviour="F", known=(_NOT_MERGED,)),
    Rule("kip977.verbosity.dynamic", Level.MUST, "KIP-977", "Setting new config",
         "partition-level values will be removed",
         "Lowering metrics.verbosity at run time removes the partition meters.", behaviour="F",
         known=(_NOT_MERGED,)),
    Rule("kip977.meters.messages_in", Level.MUST, "KIP-977",
         "Part 2: New Metrics with Attached Partition Tag", "Messages entered the partition",
         "At high verbosity, MessagesInPerSec and BytesInPerSec per partition count what entered "
         "that partition.", behaviour="F", known=(_NOT_MERGED,)),
    Rule("kip977.meters.bytes_out", Level.MUST, "KIP-977",
         "Part 2: New Metrics with Attached Partition Tag", "Bytes retrieved from the partition",
         "At high verbosity, BytesOutPerSec per partition counts what was fetched from it.",
         behaviour="F", known=(_NOT_MERGED,)),
    Rule("kip977.volumes.end_offsets", Level.MUST, "KIP-977", "Motivation", "",
         "Each partition's end offset grows by exactly the records an idempotent producer was "
         "told were written to it: the ground truth the meters are compared with.",
         behaviour="F"),
    Rule("kip977.volumes.hot_partitions", Level.SHOULD, "KIP-977", "Motivation",
         "identify the imbalance partition",
         "A partition receiving well above an even share of its topic's traffic stands out in "
         "the partition meters.", behaviour="F", known=(_NOT_MERGED,)),
)  # fmt: skip

RULES = CLIENT_METRICS + VERBOSITY
