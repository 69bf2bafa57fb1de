"""KIP-714 temporality across a subscription change: DELTA, then CUMULATIVE after a new Get.

Spec: KIP-714 "Metric aggregation temporality" ("Clients must support both"; ruling 6: sums are
DELTA when the subscription's DeltaTemporality is true, CUMULATIVE when false). A subscription
can change between Gets (a new SubscriptionId after an operator's change), so the temporality a
push must use is the one of the last Get the client had answered before it, not the first's.
The broker side is scripted (`scripted.py`): the first Get asks for DELTA, the second push is
answered UNKNOWN_SUBSCRIPTION_ID (the client Gets again at once) and every later Get asks for
CUMULATIVE. Each push is validated (`otlp_validation.validate`) with the temporality it was due.
"""

from __future__ import annotations

from kconform.codecs.errors import ErrorCode
from kconform.codecs.otlp import OtlpDecodeError, parse_metrics_data
from kconform.codecs.otlp_validation import validate
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import TELEMETRY, produce, require_telemetry, run_client
from kconform.suites.client.scripted import ScriptedTelemetry, fail_pushes
from kconform.suites.client.traffic import Exchange, payload_or_error

RULE = "kip714.client.payload.temporality"
CONDITION = "otlp.temporality"  # the rule-book condition (rules/otlp_payload.py) part of RULE
PUSH_INTERVAL_MS = 500
CHANGED_AT_PUSH = 2  # answered UNKNOWN_SUBSCRIPTION_ID: the client Gets the changed subscription


def _due(push: Exchange, gets: list[Exchange]) -> bool | None:
    """DeltaTemporality of the last Get answered before `push` was sent (None: no Get yet)."""
    answered = [g for g in gets if g.answered is not None and g.answered <= push.sent]
    if not answered or answered[-1].response is None:
        return None
    return bool(answered[-1].response.delta_temporality)


@case(
    "kip714.client.payload.temporality_change",
    rules=[RULE],
    title="A subscription that turns DeltaTemporality off makes the next pushes CUMULATIVE",
    spec="KIP-714 Metric aggregation temporality ('Clients must support both'); ruling 6; the "
    f"first Get asks for DELTA, push {CHANGED_AT_PUSH} is answered UNKNOWN_SUBSCRIPTION_ID and "
    "every later Get asks for CUMULATIVE",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_temporality_change(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    scripted = ScriptedTelemetry(
        PUSH_INTERVAL_MS,
        push=fail_pushes(ErrorCode.UNKNOWN_SUBSCRIPTION_ID, CHANGED_AT_PUSH),
        get_overrides=lambda number: {"delta_temporality": number == 1},
    )
    recording = await run_client(check, client, client_target, produce(4.0), scripted=scripted)
    require_telemetry(check, recording, pushes=CHANGED_AT_PUSH + 1)
    gets = sorted(recording.traffic.gets, key=lambda e: e.sent)
    pushes = [e for e in recording.traffic.pushes if e.request is not None]
    due = [(push, _due(push, gets)) for push in pushes]
    after = [push for push, delta in due if delta is False]
    check.observe("pushes, with the DeltaTemporality each was due", [f"{p}: {d}" for p, d in due])
    check.precondition(
        "pushes sent after the Get that asked for CUMULATIVE", ">= 1", 0, ok=bool(after)
    )
    found = []
    for push, delta in due:
        payload, _ = payload_or_error(push)
        if delta is None or payload is None:
            continue  # an unreadable push is kip714.client.payload.valid_otlp's to judge
        try:
            data = parse_metrics_data(payload)
        except OtlpDecodeError:
            continue
        violations = validate(data, delta_temporality=delta, requested_metrics=["*"])
        found += sorted({f"{push}: {v}" for v in violations if v.rule == CONDITION})
    check.expect(
        "pushes whose sums do not follow the DeltaTemporality they were due", [], found[:12]
    )
