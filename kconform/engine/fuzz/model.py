"""The stateful fuzzer's oracle: the pure reference broker, fed the same requests and clock.

`TimedModel` wraps `fixtures.reference.ReferenceBroker` (Apache Kafka's ClientMetricsManager and
config validation, the KIP winning where the rulings say so). Each real request is bracketed by
`time.monotonic()` readings in ms, t0 before sending and t1 after the answer; the target handled
it somewhere in between. The model answers at the middle of that window and, on copies of its
state, at both ends widened by a few ms; near an interval boundary those answers differ, and
then each of them is acceptable: the model keeps the copy whose answer the target gave, so it
stays in step with the target's clock. Everything else must match exactly.

Every model of a session is seeded the same way, so the ids it issues depend only on the
requests: `replay` can then run the session again through a model with other mutants (the
known deviations of `deviations.py`) and see whether that model gives every answer the target
gave.

`PUSH_RULES`, `GET_RULES` and the other `*_RULE`s name the rule-book rules behind each answer,
for the trace of a mismatch; the push errors' rules are read off the reference's validation table
(`fixtures.reference.validation.PUSH_ERROR_RULES`). `ORACLE_RULES` lists them all (the stateful case
claims each).
"""

from __future__ import annotations

import pickle
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kconform.codecs.errors import ErrorCode, error_name
from kconform.codecs.framing import RequestFrame, decode_request
from kconform.codecs.messages import RequestHeader, request_header_version
from kconform.codecs.schema import Message
from kconform.errors import HarnessDefect
from kconform.fixtures.reference import Outcome, ReferenceBroker, RequestContext
from kconform.fixtures.reference.validation import PUSH_ERROR_RULES
from kconform.rules import rule

SLACK_MS = 5
"""Widening of each window: the target's clock and ours are read at different instants."""


def now_ms() -> int:
    """The clock the reference target reads too (`int(time.monotonic() * 1000)`)."""
    return int(time.monotonic() * 1000)


@dataclass
class Candidate:
    """The model's answer if the target handled the request at `at_ms`, and the state after."""

    at_ms: int
    outcome: Outcome
    broker: ReferenceBroker


class TimedModel:
    """The reference broker driven by real clock readings (see the module docstring)."""

    def __init__(
        self, telemetry_max_bytes: int, *, seed: int = 0, mutants: Iterable[str] = ()
    ) -> None:
        self.telemetry_max_bytes = telemetry_max_bytes
        self.seed = seed
        self.mutants = frozenset(mutants)
        self.broker = ReferenceBroker(
            {},
            telemetry_max_bytes=telemetry_max_bytes,
            rng=random.Random(seed),
            mutants=self.mutants,
        )
        self.widest_window = 0
        self.ambiguous_steps = 0

    def candidates(
        self, ctx: RequestContext, request: RequestFrame, t0: int, t1: int
    ) -> list[Candidate]:
        """The model's answers across the window [t0, t1], middle first, distinct answers only.

        The slack covers our previous choices too: a state committed at a window's middle may be
        off from the target's by half that window. Each answer is computed on its own copy of
        the model (pickled once and loaded per time: four times faster than `copy.deepcopy`).
        """
        self.widest_window = max(self.widest_window, t1 - t0)
        slack = SLACK_MS + self.widest_window
        snapshot = pickle.dumps(self.broker, pickle.HIGHEST_PROTOCOL)
        found: list[Candidate] = []
        for at in ((t0 + t1) // 2, t0 - slack, t1 + slack):
            broker = pickle.loads(snapshot)
            outcome = broker.handle(ctx, request, at)
            assert outcome is not None, "the reference answers every request the fuzzer sends"
            if not any(signature(outcome) == signature(c.outcome) for c in found):
                found.append(Candidate(at, outcome, broker))
        if len(found) > 1:
            self.ambiguous_steps += 1
        return found

    def commit(self, chosen: Candidate) -> None:
        self.broker = chosen.broker


@dataclass(frozen=True)
class Step:
    """One request of a session as the model saw it, and the answer the target gave."""

    ctx: RequestContext
    frame: RequestFrame
    t0: int
    t1: int
    seen: tuple[object, ...]


def replay(
    steps: Sequence[Step], telemetry_max_bytes: int, seed: int, mutants: Iterable[str]
) -> tuple[TimedModel, Candidate] | None:
    """A model with `mutants` that gives every answer of `steps` (choosing, at each step, the
    candidate the target's answer matches, as the session did), and its last candidate; None
    when it cannot."""
    model = TimedModel(telemetry_max_bytes, seed=seed, mutants=mutants)
    chosen: Candidate | None = None
    for step in steps:
        found = model.candidates(step.ctx, step.frame, step.t0, step.t1)
        chosen = next((c for c in found if signature(c.outcome) == step.seen), None)
        if chosen is None:
            return None
        model.commit(chosen)
    return (model, chosen) if chosen is not None else None


def as_received(body: Message, version: int, client_id: str) -> RequestFrame:
    """`body` as the target's request decoder sees it (header included, decoded leniently)."""
    assert body.api_key is not None
    header = RequestHeader(
        request_api_key=body.api_key,
        request_api_version=version,
        correlation_id=0,
        client_id=client_id,
    )
    payload = header.encode(request_header_version(body.api_key, version))
    return decode_request(payload + body.encode(version, strict=False), strict=False)


def ruling_4(
    api_key: int, seen: tuple[object, ...], expected: list[tuple[object, ...]], last_error: int
) -> str | None:
    """A Get difference ruling 4 puts below MUST, described with its level; else None.

    Throttling the Get right after an UNKNOWN_SUBSCRIPTION_ID/UNSUPPORTED_COMPRESSION_TYPE push
    fails a SHOULD; not throttling a plain repeated Get within the interval is INFO."""
    if api_key != 71 or len(expected) != 1:
        return None
    throttled = ErrorCode.THROTTLING_QUOTA_EXCEEDED.name
    after_error = last_error in (
        ErrorCode.UNKNOWN_SUBSCRIPTION_ID,
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
    )
    if seen[0] == throttled and expected[0][0] == "NONE" and after_error:
        return f"SHOULD (ruling 4): Get throttled right after a {ErrorCode(last_error).name} push"
    if seen[0] == "NONE" and expected[0][0] == throttled:
        return "INFO (ruling 4): a repeated Get within the interval was not throttled"
    return None


def signature(outcome: Outcome) -> tuple[object, ...]:
    """What of an answer must match the target's (ids are compared symbolically elsewhere)."""
    body = outcome.response_body
    if body is None:
        return ("closed",)
    if hasattr(body, "push_interval_ms"):  # GetTelemetrySubscriptionsResponse
        if body.error_code:
            return (error_name(body.error_code),)
        return (
            "NONE",
            body.push_interval_ms,
            tuple(sorted(body.requested_metrics)),
            tuple(body.accepted_compression_types),
            body.telemetry_max_bytes,
        )
    if hasattr(body, "responses"):  # (Incremental)AlterConfigsResponse
        return tuple(error_name(r.error_code) for r in body.responses)
    return (error_name(body.error_code),)


def observed_signature(body: Message) -> tuple[object, ...]:
    """The target's answer, reduced as `signature` reduces the model's."""
    return signature(Outcome(body, 0))


def show(sig: tuple[object, ...]) -> str:
    """A signature as the trace prints it."""
    if len(sig) == 5 and sig[0] == "NONE":
        _, interval, metrics, compression, max_bytes = (
            str(list(s)) if isinstance(s, tuple) else str(s) for s in sig
        )
        return (
            f"NONE interval={interval} metrics={metrics} compression={compression} "
            f"max_bytes={max_bytes}"
        )
    return "+".join(str(s) for s in sig)


def _cite(*rule_ids: str) -> str:
    """The rules as the trace of a mismatch names them: id, level, KIP section and sentence."""
    return "; ".join(rule(rule_id).citation for rule_id in rule_ids)


PUSH_RULE_IDS = {
    **{code: (rule_id,) for code, rule_id in PUSH_ERROR_RULES.items()},
    ErrorCode.NONE: ("kip714.push.accepted",),
}
"""The rules behind each answer to a push: the reference's check table's (`PUSH_ERROR_RULES`),
and the rule an accepted push follows."""
GET_RULE_IDS = {
    ErrorCode.INVALID_REQUEST: ("kip714.robustness.malformed_answered",),  # an undecodable Get
    ErrorCode.THROTTLING_QUOTA_EXCEEDED: ("kip714.get.throttle.repeated",),
    ErrorCode.NONE: ("kip714.get.interval.minimum", "kip714.get.metrics.union"),
}
OTHER_RULE_IDS = {
    "reserved": ("kip714.push.instance_id.reserved",),
    "config": ("kip714.configs.interval_range", "kip714.configs.known_keys"),
    "fresh_id": ("kip714.get.instance_id.assigned",),
    "subscription_id": ("kip714.get.subscription_id.recalculated",),
    "propagation": ("kip714.configs.applies_until_deleted",),
    "null_metrics": ("kip714.robustness.malformed_answered",),
}
ORACLE_RULES = tuple(
    sorted(
        {i for table in (PUSH_RULE_IDS, GET_RULE_IDS, OTHER_RULE_IDS)
         for ids in table.values() for i in ids}
    )
)  # fmt: skip
"""Every rule the stateful oracle names; `fuzz.stateful.telemetry` claims each of them."""

PUSH_RULES = {code: _cite(*ids) for code, ids in PUSH_RULE_IDS.items()}
GET_RULES = {code: _cite(*ids) for code, ids in GET_RULE_IDS.items()}
RESERVED_RULE = _cite(*OTHER_RULE_IDS["reserved"])
CONFIG_RULE = _cite(*OTHER_RULE_IDS["config"])
FRESH_ID_RULE = _cite(*OTHER_RULE_IDS["fresh_id"])
SUBSCRIPTION_ID_RULE = _cite(*OTHER_RULE_IDS["subscription_id"])
PROPAGATION_RULE = _cite(*OTHER_RULE_IDS["propagation"])
NULL_METRICS_RULE = _cite(*OTHER_RULE_IDS["null_metrics"])


def rule_for(
    api_key: int, expected: tuple[object, ...], observed: tuple[object, ...], reserved: bool
) -> str:
    """The rule a mismatch is about: the one behind the model's error; else the one behind the
    target's error if the table names one; else the one behind the model's answer (a push the
    reference accepts but the target refused with an error no rule names breaks the rule of an
    accepted push). `reserved`: the request named the ZERO or ONE ClientInstanceId.

    `HarnessDefect` if the model itself answers an error its table names no rule for: the
    reference and the table have drifted apart, and a trace would cite the wrong rule."""
    if api_key in (33, 44):
        return CONFIG_RULE
    if api_key == 72 and reserved:
        return RESERVED_RULE
    table = PUSH_RULES if api_key == 72 else GET_RULES
    model_error, target_error = _error(expected), _error(observed)
    if model_error is not None:
        if model_error not in table:
            raise HarnessDefect(
                f"the reference answered api key {api_key} with {model_error.name}, which no "
                "rule of the fuzz oracle's table names"
            )
        return table[model_error]
    if target_error is not None and target_error in table:
        return table[target_error]
    return table[ErrorCode.NONE]


def _error(sig: tuple[object, ...]) -> ErrorCode | None:
    """The error code a signature leads with, if it is one other than NONE."""
    name = str(sig[0])
    return ErrorCode[name] if name != "NONE" and name in ErrorCode.__members__ else None
