"""KIP-714 client termination: one final push flagged Terminating, only with a subscription.

Spec: KIP-714 "Client termination" ("When a client with an active metrics subscription is being
shut down, it should send its final metrics without waiting for the PushIntervalMs time. ... the
PushTelemetryRequest.Terminating field must be set to true"; after UNKNOWN_SUBSCRIPTION_ID on the
final push the client may re-Get and push Terminating again, or abandon the final push),
"Throttling and rate-limiting" and ruling 2 (a second Terminating push is an error).
The subscription interval is long (5 s) and the client closes after 1.5 s, so a final push that
waited for the interval would come too late to count. `push_in_flight` closes the client
while the answer to its first push is held back. Why it exists: an idle Java producer has nothing
in flight at close(), so on no release does its Sender run once more after it (Sender.run's drain
loop) and none creates the Terminating push; with a push in flight 3.7.2, 3.8.1 and 3.9.0+
(telemetry close first, KAFKA-17731) send it at once, and 3.7.0-3.7.1 and 3.8.0 end the I/O
thread first, which closes the telemetry sender, so they send none.
"""

from __future__ import annotations

from kconform.codecs.errors import ErrorCode
from kconform.engine.check import Check, present
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.proxy.injections import Injection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import (
    TELEMETRY,
    Recording,
    for_client,
    lag_text,
    run_client,
    shared_run,
)
from kconform.suites.client.scripted import ScriptedTelemetry, fail_pushes
from kconform.suites.client.traffic import PUSH_TELEMETRY, Exchange

TERMINATION = "KIP-714 Client termination"
LONG_INTERVAL_MS = 5000
PROMPT = 1.0  # seconds from the start of close() to the final push
IN_FLIGHT_INTERVAL_MS = 500  # the first push comes 0.25-0.75 s after the Get (Java's jitter)
# close() is asked for LINGER (1 s) after the first push reached the proxy, whose answer is held
# HOLD_S: it comes about 0.5 s after close() began, within the second a client that waits for
# it before its final push may take (franz-go's Close waits 1 s for the metrics loop)
HOLD_S = 1.6
# a client whose close pushed in time is closed again (its own runs), up to CLOSES closes in all:
# whether a final push follows is a race in some clients (the idle Java producer: one close in
# several), and one verdict every run needs more than the one close that happened to win it
CLOSES = 3
# unknown_subscription_retry's second try only needs a push in flight when close() begins: held
# long enough that close() (LINGER after the push) begins before the answer on a loaded machine
RETRY_HOLD_S = 4.0


async def _termination_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    return await shared_run(
        check,
        client,
        target,
        "termination",
        lambda: run_client(
            check, client, target, Scenario.idle(seconds=1.5), interval_ms=LONG_INTERVAL_MS
        ),
    )


def _closing(check: Check, recording: Recording) -> float:
    """When close() began; the case is not applicable unless the driver said so and the client
    then had an active subscription (the condition of a final push)."""
    closing = recording.event_time("closing")
    check.precondition(
        "the driver's 'closing' event (it closed the client)",
        "printed",
        "not printed",
        ok=closing is not None,
    )
    closing = present(closing, "the 'closing' event, a precondition above")
    subscribed = [e for e in recording.traffic.gets if e.error_code == 0 and e.sent < closing]
    last = (
        list(subscribed[-1].response.requested_metrics)
        if subscribed and subscribed[-1].response is not None
        else None
    )
    check.precondition(
        "an active subscription (a successful Get with RequestedMetrics) when close() began",
        "RequestedMetrics not empty",
        "no successful Get before close()" if last is None else f"RequestedMetrics {last}",
        ok=bool(last),
    )
    return closing


@case(
    "kip714.client.terminating.final_push",
    rules=["kip714.client.terminating.final_push"],
    title="On close with an active subscription the client pushes its final metrics at once",
    spec=f"{TERMINATION} ('it should send its final metrics without waiting for the "
    f"PushIntervalMs time'); PushIntervalMs {LONG_INTERVAL_MS}, close after 1.5 s, final push "
    f"within {PROMPT:g} s of close(), on each of {CLOSES} closes (fewer: the first without one "
    "ends it)",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
    shares="termination",
)
async def test_final_push(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
    recording = await _termination_run(check, client, client_target)
    delays = [_final_push_delay(check, recording, 1)]
    while len(delays) < CLOSES and delays[-1][0] is not None and delays[-1][0] <= delays[-1][1]:
        again = await run_client(
            check, client, client_target, Scenario.idle(seconds=1.5), interval_ms=LONG_INTERVAL_MS
        )
        delays.append(_final_push_delay(check, again, len(delays) + 1))
    check.expect(
        f"seconds from close() to a final push, each within {PROMPT:g} s (+ the harness's lag "
        f"that run), for up to {CLOSES} closes (ended by the first without one in time)",
        [f"<= {bound:g}" for _, bound in delays],
        [delay for delay, _ in delays],
        all(delay is not None and delay <= bound for delay, bound in delays),
    )


def _final_push_delay(
    check: Check, recording: Recording, number: int
) -> tuple[float | None, float]:
    """Seconds from close() to the first push after it (None: none) and the bound it gets."""
    closing = _closing(check, recording)
    final = [e for e in recording.traffic.pushes if e.sent >= closing - 0.05]
    check.observe(
        f"close {number}: pushes after close() began",
        [f"{e} Terminating={e.terminating} +{e.sent - closing:.3f} s" for e in final],
    )
    delay = round(final[0].sent - closing, 3) if final else None
    return delay, round(PROMPT + recording.harness_lag, 3)


def _hold_first_push(client_id: str, hold: float = HOLD_S) -> list[Injection]:
    """Hold the answer to the client's first non-Terminating push for `hold` seconds (the
    proxy reads what the client sends meanwhile, so a push sent behind it is seen at once)."""
    return [
        for_client(
            client_id,
            PUSH_TELEMETRY,
            predicate=lambda r: r.body is not None and not r.body.terminating,
            delay=hold,
            times=1,
            name="first push answered late",
        )
    ]


@case(
    "kip714.client.terminating.push_in_flight",
    rules=["kip714.client.terminating.final_push"],
    title="On close while a push awaits its answer, the client still pushes its final metrics "
    "at once (at the latest once that answer is in)",
    spec=f"{TERMINATION} ('it should send its final metrics without waiting for the "
    f"PushIntervalMs time'); PushIntervalMs {IN_FLIGHT_INTERVAL_MS}, the first push answered "
    f"{HOLD_S:g} s late, close 1 s after that push, final push within {PROMPT:g} s of close() or "
    "of that answer, whichever is later",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
)
async def test_push_in_flight(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    scripted = ScriptedTelemetry(IN_FLIGHT_INTERVAL_MS)
    recording = await run_client(
        check,
        client,
        client_target,
        Scenario.idle(seconds=5.0),  # the window ends 1 s after the first push (`until`)
        scripted=scripted,
        injections=_hold_first_push,
        until=lambda: scripted.pushes >= 1,
    )
    closing = _closing(check, recording)
    pushes = recording.traffic.pushes
    held = [
        e
        for e in pushes
        if not e.terminating and e.sent < closing and (e.answered is None or e.answered > closing)
    ]
    check.precondition(
        "a push sent before close() and still unanswered when close() began",
        ">= 1",
        f"0 ({len([e for e in pushes if e.sent < closing])} pushes before close(), each "
        "answered before it)",
        ok=bool(held),
    )
    first = held[0]
    answered = first.answered
    check.observe(
        "the held push",
        f"{first} answered "
        + ("never" if answered is None else f"+{answered - closing:.3f} s after close() began"),
    )
    final = [e for e in pushes if e is not first and e.sent >= closing - 0.05]
    check.observe(
        "pushes after close() began",
        [f"{e} Terminating={e.terminating} +{e.sent - closing:.3f} s" for e in final],
    )
    start = closing if answered is None else max(closing, answered)
    delay = round(final[0].sent - start, 3) if final else None
    bound = round(PROMPT + recording.harness_lag, 3)
    check.expect(
        f"seconds from the later of close() and the held answer to a final push (negative: sent "
        f"before that answer), within {PROMPT:g}{lag_text(recording)}",
        f"<= {bound:g}",
        delay,
        delay is not None and delay <= bound,
    )


@case(
    "kip714.client.terminating.single_terminating",
    rules=["kip714.client.terminating.single", "kip714.push.terminating.once"],
    title="The final push has Terminating=true, there is only one, and nothing follows it",
    spec=f"{TERMINATION} ('the PushTelemetryRequest.Terminating field must be set to true'); "
    "ruling 2 (a second Terminating push is rejected)",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
    shares="termination",
)
async def test_single_terminating(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _termination_run(check, client, client_target)
    closing = _closing(check, recording)
    pushes = recording.traffic.pushes
    terminating = [e for e in pushes if e.terminating]
    check.observe("pushes (Terminating flag)", [f"{e} {e.terminating}" for e in pushes])
    check.expect(
        "pushes with Terminating=true", "at most 1", len(terminating), len(terminating) <= 1
    )
    after_close = [str(e) for e in pushes if e.sent >= closing and not e.terminating]
    check.expect("pushes during close() without Terminating=true", [], after_close)
    if terminating:
        following = recording.traffic.after(terminating[0].sent, 71, 72)
        check.expect(
            "telemetry requests after the Terminating push", [], [str(e) for e in following]
        )


@case(
    "kip714.client.terminating.none_without_subscription",
    rules=["kip714.client.handshake.no_push_without_metrics"],
    title="Without a subscription the client sends no final (or any) push on close",
    spec=f"{TERMINATION} ('When a client with an active metrics subscription is being shut "
    "down'); Default behaviour ('only then will clients push metrics')",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_none_without_subscription(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await run_client(
        check, client, client_target, Scenario.idle(seconds=1.5), metrics=None
    )
    check.precondition(
        "GetTelemetrySubscriptions requests the client sent",
        ">= 1",
        0,
        ok=bool(recording.traffic.gets),
    )
    check.observe(
        "RequestedMetrics of the Gets",
        [
            list(e.response.requested_metrics)
            for e in recording.traffic.gets
            if e.response is not None
        ],
    )
    check.expect("PushTelemetry requests", [], [str(e) for e in recording.traffic.pushes])


@case(
    "kip714.client.terminating.unknown_subscription_retry",
    rules=["kip714.client.terminating.retry"],
    title="After UNKNOWN_SUBSCRIPTION_ID on the final push: one new Get and one Terminating "
    "push with its SubscriptionId, or nothing",
    spec=f"{TERMINATION} ('the terminating client can choose to obtain a new subscription ID by "
    "sending a GetTelemetrySubscriptionsRequest and then immediately sending a "
    "PushTelemetryRequest with the Terminating flag set to true, or it can choose to abandon "
    "sending a final metrics push'); ruling 3",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_unknown_subscription_retry(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _refused_final_push_run(check, client, client_target, in_flight=False)
    if not _refused_final_pushes(recording):
        # none after an idle close (the Java producer's race, see final_push): a push in flight
        # at close() is what makes the releases that fixed KAFKA-17731 send one every time
        recording = await _refused_final_push_run(check, client, client_target, in_flight=True)
    refused = _refused_final_pushes(recording)
    pushes = recording.traffic.pushes
    check.precondition(
        "a Terminating push from the client, after an idle close or one with a push in flight "
        "(the script answers it UNKNOWN_SUBSCRIPTION_ID)",
        ">= 1",
        f"0 ({len(pushes)} pushes, {len([e for e in pushes if e.terminating])} Terminating, "
        f"{len(recording.traffic.gets)} Gets; {_in_flight_at_close(recording)})",
        ok=bool(refused),
        needs="kip714.client.terminating.final_push",
    )
    after = recording.traffic.after(refused[0].sent, 71, 72)
    shape = [("Get" if e.api_key == 71 else f"Push Terminating={e.terminating}") for e in after]
    check.observe("telemetry requests after the refused Terminating push", shape)
    if not after:
        check.observe("the client's choice", "abandoned the final push")
        return
    check.observe("the client's choice", "new Get, then Terminating push")
    check.expect("requests after the refusal", ["Get", "Push Terminating=True"], shape)
    if len(after) >= 2 and after[0].response is not None and after[1].request is not None:
        check.expect(
            "the retried push carries the new SubscriptionId",
            int(after[0].response.subscription_id),
            int(after[1].request.subscription_id),
        )


async def _refused_final_push_run(
    check: Check, client: ClientDriver, target: BrokerTarget, *, in_flight: bool
) -> Recording:
    """A run whose Terminating push is answered UNKNOWN_SUBSCRIPTION_ID once: an idle close, or
    (`in_flight`) a close while the first push's answer is held back, as in push_in_flight."""
    scripted = ScriptedTelemetry(
        IN_FLIGHT_INTERVAL_MS if in_flight else LONG_INTERVAL_MS,
        push=fail_pushes(ErrorCode.UNKNOWN_SUBSCRIPTION_ID, 1, terminating=True),
    )
    if not in_flight:
        return await run_client(
            check, client, target, Scenario.idle(seconds=1.5), scripted=scripted
        )
    return await run_client(
        check,
        client,
        target,
        Scenario.idle(seconds=5.0),
        scripted=scripted,
        injections=lambda client_id: _hold_first_push(client_id, RETRY_HOLD_S),
        until=lambda: scripted.pushes >= 1,
    )


def _refused_final_pushes(recording: Recording) -> list[Exchange]:
    return [
        e
        for e in recording.traffic.pushes
        if e.terminating and e.error_code == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
    ]


def _in_flight_at_close(recording: Recording) -> str:
    """How many pushes awaited their answer when close() began (the second try's point)."""
    closing = recording.event_time("closing")
    if closing is None:
        return "no 'closing' event"
    waiting = [
        e
        for e in recording.traffic.pushes
        if e.sent < closing and (e.answered is None or e.answered > closing)
    ]
    return f"{len(waiting)} push(es) unanswered when close() began"
