"""KIP-714 client error handling: what the client does after each PushTelemetry error.

Spec: KIP-714 "Error handling" table (UNKNOWN_SUBSCRIPTION_ID and UNSUPPORTED_COMPRESSION_TYPE:
"Immediately send a GetTelemetrySubscriptionsRequest"; TELEMETRY_TOO_LARGE: "Reduce the size of
the metrics payload so its size does not exceed TelemetryMaxBytes", SHOULD per ruling 10;
INVALID_REQUEST / INVALID_RECORD: "Log an error and stop pushing metrics"), "Throttling and
rate-limiting" (THROTTLING_QUOTA_EXCEEDED; standard request throttling with ThrottleTimeMs).
The broker side is scripted (`scripted.py`) so that only the error under test reaches the client.
A push lost to the transport is `test_errors_transport.py`'s.
"""

from __future__ import annotations

from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.codecs.schema import Message
from kconform.engine.check import Check, present
from kconform.engine.model import Family, Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import TELEMETRY, Recording, lag_text, run_client
from kconform.suites.client.scripted import PushAnswer, ScriptedTelemetry, fail_pushes
from kconform.suites.client.traffic import Exchange

TABLE = "KIP-714 Error handling"
IMMEDIATE = 0.25  # seconds: "immediately", against a PushIntervalMs of 1000 ms


CLOSE_RACE_MARGIN = 0.05
"""Seconds between the proxy answering and the client reading it: a close begun within them may
not have seen the answer (the driver stamps `closing` just before it calls close)."""


def _first_error(check: Check, recording: Recording, error: int) -> Exchange:
    """The first push the script answered `error`; not applicable if the client never sent it."""
    failed = [e for e in recording.traffic.pushes if e.error_code == error]
    check.precondition(
        f"a push of the client answered {ErrorCode(error).name} (the script's answer to it)",
        ">= 1",
        f"0 ({len(recording.traffic.pushes)} pushes, {len(recording.traffic.gets)} Gets)",
        ok=bool(failed) and failed[0].answered is not None,
    )
    return failed[0]


def _immediate_get_case(case_id: str, error: ErrorCode) -> Any:
    @case(
        case_id,
        rules=["kip714.client.errors.reget_immediately"],
        title=f"After {error.name} on a push the client immediately sends a Get",
        spec=f"{TABLE} ({error.name}: 'Immediately send a GetTelemetrySubscriptionsRequest'); "
        f"ruling 4; 'immediately': within {IMMEDIATE * 1000:.0f} ms, PushIntervalMs 1000",
        level=Level.MUST,
        requires=TELEMETRY,
        kind="client",
    )
    async def test(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
        scripted = ScriptedTelemetry(1000, push=fail_pushes(error, 1))
        recording = await run_client(
            check, client, client_target, Scenario.idle(seconds=3.2), scripted=scripted
        )
        failed = _first_error(check, recording, error)
        answered = present(failed.answered, "the answer time _first_error requires")
        after = recording.traffic.after(failed.sent, 71, 72)
        nxt = after[0] if after else None
        check.observe("next telemetry request", str(nxt) if nxt else "none")
        check.expect("the next telemetry request is a Get", 71, nxt.api_key if nxt else None)
        delay = None if nxt is None else round(nxt.sent - answered, 3)
        bound = round(IMMEDIATE + recording.harness_lag, 3)
        check.expect(
            f"sent within {IMMEDIATE:g} s of the error{lag_text(recording)}",
            f"<= {bound:g}",
            delay,
            delay is not None and delay <= bound,
        )

    return test


IMMEDIATE_GET = Family(_immediate_get_case)
test_unknown_subscription_id = IMMEDIATE_GET(
    "kip714.client.errors.unknown_subscription_id", ErrorCode.UNKNOWN_SUBSCRIPTION_ID
)
test_unsupported_compression_type = IMMEDIATE_GET(
    "kip714.client.errors.unsupported_compression_type", ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
)

SIZE_LIMIT = 64


def _size_limited(_: int, request: Message) -> PushAnswer:
    size = len(bytes(request.metrics or b""))
    return PushAnswer(ErrorCode.TELEMETRY_TOO_LARGE if size > SIZE_LIMIT else 0)


@case(
    "kip714.client.errors.telemetry_too_large",
    rules=["kip714.client.errors.too_large"],
    title="After TELEMETRY_TOO_LARGE the next pushes are no larger than TelemetryMaxBytes",
    spec=f"{TABLE} (TELEMETRY_TOO_LARGE: 'Reduce the size of the metrics payload so its size "
    f"does not exceed GetTelemetrySubscriptionsResponse.TelemetryMaxBytes'); ruling 10; "
    f"TelemetryMaxBytes {SIZE_LIMIT}, size as sent (after compression)",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
)
async def test_telemetry_too_large(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    scripted = ScriptedTelemetry(300, telemetry_max_bytes=SIZE_LIMIT, push=_size_limited)
    recording = await run_client(
        check, client, client_target, Scenario.idle(seconds=3.0), scripted=scripted
    )
    pushes = recording.traffic.pushes
    sizes = [len(bytes(e.request.metrics or b"")) for e in pushes if e.request is not None]
    check.observe("push sizes as sent (bytes)", sizes)
    too_large = [e for e in pushes if e.error_code == ErrorCode.TELEMETRY_TOO_LARGE]
    if not too_large:
        check.precondition("PushTelemetry requests the client sent", ">= 1", 0, ok=bool(pushes))
        check.note(f"every push already fit TelemetryMaxBytes ({SIZE_LIMIT})")
        return
    later = [e for e in pushes if e.sent > too_large[0].sent and e.request is not None]
    check.observe("pushes after the first TELEMETRY_TOO_LARGE", len(later))
    check.expect(
        f"pushes after TELEMETRY_TOO_LARGE larger than {SIZE_LIMIT} bytes",
        [],
        [f"{e}: {_size(e)} bytes" for e in later if _size(e) > SIZE_LIMIT],
    )


def _stop_case(case_id: str, error: ErrorCode) -> Any:
    @case(
        case_id,
        rules=["kip714.client.errors.stop_pushing"],
        title=f"After {error.name} on a push the client stops pushing metrics",
        spec=f"{TABLE} ({error.name}: 'Log an error and stop pushing metrics')",
        level=Level.MUST,
        requires=TELEMETRY,
        kind="client",
    )
    async def test(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
        scripted = ScriptedTelemetry(300, push=fail_pushes(error, 1))
        recording = await run_client(
            check, client, client_target, Scenario.idle(seconds=2.5), scripted=scripted
        )
        failed = _first_error(check, recording, error)
        later = recording.traffic.after(failed.sent, 72)
        check.observe("Gets after the error", len(recording.traffic.after(failed.sent, 71)))
        # A client that began closing before the error reached it has not seen the error yet:
        # its one Terminating push is the close, not a push after the error.
        closing = recording.event_time("closing")
        answered = present(failed.answered, "the answer time _first_error requires")
        racing = [e for e in later if e.terminating and closing is not None
                  and closing <= answered + CLOSE_RACE_MARGIN]  # fmt: skip
        if racing:
            check.observe("Terminating push of a close begun before the error arrived", len(racing))
        pushed = [str(e) for e in later if e not in racing]
        check.expect(f"pushes after {error.name}", [], pushed[:10])

    return test


STOP = Family(_stop_case)
test_invalid_request = STOP("kip714.client.errors.invalid_request", ErrorCode.INVALID_REQUEST)
test_invalid_record = STOP("kip714.client.errors.invalid_record", ErrorCode.INVALID_RECORD)

THROTTLE_INTERVAL_MS = 500


@case(
    "kip714.client.errors.throttling_quota_exceeded",
    rules=["kip714.client.errors.throttled_wait"],
    title="After THROTTLING_QUOTA_EXCEEDED the client waits PushIntervalMs before its next request",
    spec="KIP-714 Throttling and rate-limiting ('Should the client send a push request prior to "
    "expiry of the previously calculated PushIntervalMs the broker will discard the metrics and "
    "return ... THROTTLING_QUOTA_EXCEEDED'); §E.1/E.2 (Java and librdkafka wait the "
    "interval); tolerance: not before 0.95 x PushIntervalMs - 20 ms",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_throttling_quota_exceeded(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    scripted = ScriptedTelemetry(
        THROTTLE_INTERVAL_MS, push=fail_pushes(ErrorCode.THROTTLING_QUOTA_EXCEEDED, 1)
    )
    recording = await run_client(
        check, client, client_target, Scenario.idle(seconds=3.0), scripted=scripted
    )
    failed = _first_error(check, recording, ErrorCode.THROTTLING_QUOTA_EXCEEDED)
    answered = present(failed.answered, "the answer time _first_error requires")
    after = recording.traffic.after(failed.sent, 71, 72)
    delay = None if not after else round(after[0].sent - answered, 3)
    check.observe("next telemetry request", f"{after[0]} after {delay} s" if after else "none")
    earliest = 0.95 * THROTTLE_INTERVAL_MS / 1000 - 0.02
    check.expect(
        f"next telemetry request not before {earliest:.3f} s",
        f">= {earliest:.3f}",
        delay,
        delay is None or delay >= earliest,
    )


THROTTLE_TIME_MS = 1500


@case(
    "kip714.client.errors.throttle_time",
    rules=["kip714.client.errors.throttle_time"],
    title="A push response with ThrottleTimeMs holds the client's requests on that connection",
    spec="KIP-714 Throttling and rate-limiting ('Standard request throttling'; ThrottleTimeMs: "
    "'The duration in milliseconds for which the request was throttled'); KIP-219 client-side "
    f"throttling; ThrottleTimeMs {THROTTLE_TIME_MS}, tolerance 50 ms",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
)
async def test_throttle_time(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    def throttled(number: int, _: Message) -> PushAnswer:
        return PushAnswer(0, THROTTLE_TIME_MS if number == 1 else 0)

    scripted = ScriptedTelemetry(300, push=throttled)
    recording = await run_client(
        check, client, client_target, Scenario.idle(seconds=3.5), scripted=scripted
    )
    pushes = recording.traffic.pushes
    check.precondition(
        "an answered PushTelemetry request of the client",
        ">= 1",
        f"{len(pushes)} pushes, the first {'answered' if pushes else 'not sent'}",
        ok=bool(pushes) and pushes[0].answered is not None,
    )
    first = pushes[0]
    answered = present(first.answered, "the answer time the precondition above requires")
    held_until = answered + THROTTLE_TIME_MS / 1000 - 0.05
    early = [
        f"{e} ({e.sent - answered:.3f} s after)"
        for e in recording.traffic.on(first.connection)
        if first.sent < e.sent < held_until
    ]
    later = [e for e in recording.traffic.on(first.connection) if e.sent > first.sent]
    check.observe(
        "next request on the connection",
        f"{later[0]} after {later[0].sent - answered:.3f} s" if later else "none",
    )
    check.precondition(
        "a later request on the throttled connection (else nothing shows whether the client "
        "held back)",
        ">= 1",
        "none",
        ok=bool(later),
    )
    check.expect(
        f"requests on the connection within ThrottleTimeMs ({THROTTLE_TIME_MS} ms)", [], early
    )


def _size(exchange: Exchange) -> int:
    """The size of a push's Metrics as sent."""
    request = exchange.request
    return 0 if request is None else len(bytes(request.metrics or b""))
