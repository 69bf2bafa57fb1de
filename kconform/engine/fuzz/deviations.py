"""Known deviations of real brokers: what the fuzzers recognise, so a finding names its cause.

A fuzz case fails a broker only on a rule. When the broker is Apache Kafka and the rule is one
Apache is known to break, the finding says so: which rule (rule id, KIP section, ruling),
at which level, and why Apache does it (source file, JIRA, releases). One `Deviation` per known
behaviour, declared once here, so `git grep <key>` shows where each is recognised.

Two ways to recognise one:

- **Request fuzzing** looks at the request and what came back (`explain_request`).
- **The stateful machine** replays the session through the reference model with the mutants
  that reproduce the deviation (`fixtures/reference/mutants.py`); if that model gives every
  answer the target gave, the deviation explains the difference (`suites/fuzz/model.replay`).
  A deviation a ruling accepts (SHOULD or INFO) is then adopted and the session goes on
  against that model; a MUST one fails the case, with its `why`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.codecs.framing import peek_request_api
from kconform.codecs.messages import AlterConfigsRequest, RequestHeader, request_header_version
from kconform.codecs.wire import DecodeError
from kconform.engine.fuzz.inputs import FuzzRequest
from kconform.rules import rule


@dataclass(frozen=True)
class Deviation:
    """One known behaviour of a real broker that breaks a rule."""

    key: str  # stable name, used in reports and baselines
    rule: str  # the id of the rule it breaks, in the rule book
    why: str  # where the broker does it: source file, JIRA, releases seen
    mutants: frozenset[str] = frozenset()  # reference mutants that reproduce it (stateful)

    @property
    def level(self) -> str:
        """The broken rule's level: MUST, SHOULD or INFO."""
        return str(rule(self.rule).level)

    @property
    def acceptable(self) -> bool:
        """A ruling makes it SHOULD or INFO: reported, never a failure of a MUST case."""
        return self.level != "MUST"

    def describe(self) -> str:
        return f"known deviation {self.key} ({rule(self.rule).citation}); why: {self.why}"


ALTER_CONFIGS_DUPLICATE_RESOURCE = Deviation(
    "apache-alterconfigs-duplicate-resource",
    "kip714.robustness.malformed_answered",
    "Apache 3.7.0 and 4.1.0 (reproduced on both) never answer an AlterConfigs (key 33, any "
    "version) that names one resource twice (unknown type ids all read as UNKNOWN), and leave "
    "its connection open and muted: KafkaApis "
    "answers each copy INVALID_REQUEST 'Each resource must appear at most once', then "
    "AlterConfigsResponse.errors() (clients/.../requests/AlterConfigsResponse.java) collects "
    "them with Collectors.toMap, which throws IllegalStateException 'Duplicate key' inside "
    "RequestChannel.sendResponse (errorCounts) and again in RequestHandlerHelper.handleError "
    "(core/.../server/RequestHandlerHelper.scala); IncrementalAlterConfigs is not affected; no "
    "JIRA found",
)

GET_THROTTLED_AFTER_PUSH_ERROR = Deviation(
    "apache-get-throttle-or-bug",
    "kip714.get.throttle.after_push_error",
    "Apache 3.7.0-4.0.0: ClientMetricsManager.validateGetRequest tests lastKnownError with "
    "'||', which is always true, so every early Get is throttled (§C.2 step 3; fixed in "
    "4.0.1/4.1.0 by #19959, commit 4c2d86f4)",
    frozenset({"get_throttled_after_unknown_subscription"}),
)

REPEATED_GET_NOT_THROTTLED = Deviation(
    "repeated-get-not-throttled",
    "kip714.get.throttle.repeated",
    "a broker without Apache's per-instance Get interval check (§C.2 step 3)",
    frozenset({"no_get_throttle"}),
)

TERMINATING_FLAG_ON_FAILED_PUSH = Deviation(
    "apache-terminating-flag-kafka-20898",
    "kip714.push.terminating.per_subscription",
    "KAFKA-20898: ClientMetricsManager.processPushTelemetryRequest sets "
    "instance.terminating(request.terminating) in a finally block, so a failed Terminating push "
    "still terminates the instance and a rejected non-terminating push clears the flag again "
    "(§C.4 steps 2-6; server/src/main/java/org/apache/kafka/server/"
    "ClientMetricsManager.java, 3.7.0-4.1.0)",
    frozenset({"terminating_flag_on_failed_push"}),
)

NO_DECOMPRESSION = Deviation(
    "apache-3.7-no-decompression",
    "kip714.push.invalid_record",
    "Apache 3.7.0: PushTelemetryRequest.decompressMetricsData is a TODO that returns the raw "
    "bytes, so the broker never decompresses and accepts any payload "
    "(clients/.../requests/PushTelemetryRequest.java; §A.5)",
    frozenset({"invalid_record_accepted"}),
)

STATEFUL = (
    GET_THROTTLED_AFTER_PUSH_ERROR,
    REPEATED_GET_NOT_THROTTLED,
    TERMINATING_FLAG_ON_FAILED_PUSH,
    NO_DECOMPRESSION,
)
"""What the stateful machine tries, acceptable ones first (see the module docstring)."""


def explain_request(request: FuzzRequest, kind: str) -> Deviation | None:
    """The known deviation behind a request finding of `kind` (hang, closed...), if any."""
    if kind == "hang" and _duplicate_alter_configs(request):
        return ALTER_CONFIGS_DUPLICATE_RESOURCE
    return None


RESOURCE_TYPES_3_7 = frozenset({2, 4, 8, 16})
RESOURCE_TYPES_4_X = RESOURCE_TYPES_3_7 | {32}
"""ConfigResource.Type ids; `Type.forId` reads any other id as UNKNOWN (§D)."""


def _duplicate_alter_configs(request: FuzzRequest) -> bool:
    """Is this an AlterConfigs a broker reads as naming one resource twice? Apache keys the
    resources by ConfigResource, so two unknown type ids with one name are the same resource."""
    payload = request.payload
    if request.size is not None and 0 <= request.size < len(payload):
        payload = payload[: request.size]
    buf = memoryview(payload)
    try:
        api_key, version = peek_request_api(buf)
        if api_key != AlterConfigsRequest.api_key or version not in AlterConfigsRequest.versions():
            return False
        _, at = RequestHeader.decode_from(
            buf, 0, len(buf), request_header_version(api_key, version)
        )
        # as Kafka reads it: bytes after the body are ignored
        body, _ = AlterConfigsRequest.decode_from(buf, at, len(buf), version, strict=False)
    except DecodeError:
        return False
    resources = body.resources or []  # a null array (length -1) when read leniently
    for known in (RESOURCE_TYPES_3_7, RESOURCE_TYPES_4_X):
        seen = [
            (r.resource_type if r.resource_type in known else -1, r.resource_name)
            for r in resources
        ]
        if len(set(seen)) < len(seen):
            return True
    return False
