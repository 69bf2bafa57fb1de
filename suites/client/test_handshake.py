"""KIP-714 client handshake: when to Get, which ClientInstanceId, which connection, opting out.

Spec: KIP-714 (approved text) "Client behavior" (Get only to a broker advertising
GetTelemetrySubscriptions; Null ClientInstanceId once, then the returned id "regardless of
broker"; no metrics requested -> no pushes, a new Get after PushIntervalMs), "Connection
selection" (keep using the same broker connection), "Default behaviour" ("only then will
clients push metrics"), "Client configuration" (enable.metrics.push=false), ruling 5
(clients must accept a response that carries Null instead of echoing the id).
"""

from __future__ import annotations

from itertools import pairwise

from kconform.codecs.errors import ErrorCode
from kconform.codecs.wire import ZERO_UUID, kafka_uuid_str
from kconform.engine.check import Check, present
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.proxy.injections import Injection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import (
    BASELINE_INTERVAL_MS,
    TELEMETRY,
    Recording,
    for_client,
    lag_text,
    produce,
    require_telemetry,
    run_client,
    shared_run,
)
from kconform.suites.client.scripted import (
    NULL_INSTANCE_ID,
    ScriptedTelemetry,
    fail_pushes,
    without_telemetry_keys,
)
from kconform.suites.client.timing import distribution, gaps
from kconform.suites.client.traffic import API_VERSIONS, METADATA
from kconform.suites.client.traffic import GET_TELEMETRY_SUBSCRIPTIONS as GET_SUBSCRIPTIONS
from kconform.suites.client.traffic import TELEMETRY as TELEMETRY_KEYS

BEHAVIOR = "KIP-714 Client behavior"
METADATA_HOLD_S = 1.0  # single_connection: the first Metadata answer this late


@case(
    "kip714.client.handshake.requires_advertisement",
    rules=["kip714.client.handshake.advertised_only"],
    title="No GetTelemetrySubscriptions/PushTelemetry to brokers that do not advertise them",
    spec=f"{BEHAVIOR} ('identifies a supporting broker (through detecting at least "
    "GetTelemetrySubscriptionsRequestV0 in the ApiVersionResponse)'); Receiving broker behavior "
    "('the client will not send GetTelemetrySubscriptions or PushTelemetry RPCs')",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_requires_advertisement(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    def injections(client_id: str) -> list[Injection]:
        return [
            for_client(
                client_id,
                API_VERSIONS,
                replace_body=without_telemetry_keys,
                name="ApiVersions without keys 71/72",
            )
        ]

    recording = await run_client(
        check,
        client,
        client_target,
        Scenario.idle(seconds=2.5),
        interval_ms=300,
        injections=injections,
    )
    answered = [e for e in recording.traffic.of(API_VERSIONS) if e.error_code == 0]
    check.precondition(
        "ApiVersions requests of the client answered without error",
        ">= 1",
        f"0 of {len(recording.traffic.of(API_VERSIONS))}",
        ok=bool(answered),
    )
    sent = [str(e) for e in recording.traffic.telemetry]
    check.expect("telemetry requests to brokers without keys 71/72", [], sent[:10])


SILENCE_INTERVALS = 3
"""Intervals without a telemetry request after a Null-id Get that show the client stopped:
an accepting client pushes within 1.5 intervals of a Get (the KIP's first-push jitter)."""


async def _id_run(
    check: Check, client: ClientDriver, target: BrokerTarget, *, null_echo: bool
) -> Recording:
    # pushes 1 and 2 get UNKNOWN_SUBSCRIPTION_ID, so the client Gets again; with `null_echo`
    # the second Get is answered with a Null id, as the KIP's schema says ("else Null")
    def overrides(number: int) -> dict[str, object]:
        return {"client_instance_id": NULL_INSTANCE_ID} if null_echo and number == 2 else {}

    scripted = ScriptedTelemetry(
        300, push=fail_pushes(ErrorCode.UNKNOWN_SUBSCRIPTION_ID, 1, 2), get_overrides=overrides
    )
    return await run_client(check, client, target, Scenario.idle(seconds=3.0), scripted=scripted)


def _expect_assigned_id(check: Check, recording: Recording, *, null_echo: bool) -> None:
    gets = recording.traffic.gets
    answered = bool(gets) and gets[0].response is not None and gets[0].request is not None
    check.precondition(
        "an answered GetTelemetrySubscriptions request of the client",
        ">= 1",
        f"{len(gets)} Gets, the first {'answered' if answered else 'not answered'}",
        ok=answered,
    )
    first = gets[0]
    request = present(first.request, "the body of a Get the proxy decoded")
    response = present(first.response, "the answer of a Get found answered above")
    check.expect(
        "first Get's ClientInstanceId (Null/zero)",
        kafka_uuid_str(ZERO_UUID),
        kafka_uuid_str(request.client_instance_id),
    )
    assigned = kafka_uuid_str(response.client_instance_id)
    later = [e for e in recording.traffic.telemetry[1:] if e.request is not None]
    check.observe("requests after the first Get", [f"{e} -> broker {e.broker}" for e in later])
    used = [(str(e), kafka_uuid_str(e.request.client_instance_id)) for e in later if e.request]
    check.expect(
        "every later Get and Push carries the assigned id " + assigned,
        [],
        [f"{name}: {uuid}" for name, uuid in used if uuid != assigned],
    )
    # the re-Get itself is judged by kip714.client.errors.reget_immediately; here it is what
    # gives a second id to compare, and a client that closed right after the error gave none
    refused = next(
        (e for e in recording.traffic.pushes
         if e.error_code == ErrorCode.UNKNOWN_SUBSCRIPTION_ID and e.answered is not None),
        None,
    )  # fmt: skip
    since = [] if refused is None else recording.traffic.after(refused.sent, *TELEMETRY_KEYS)
    check.precondition(
        "a Get after a push answered UNKNOWN_SUBSCRIPTION_ID (a second id to compare)",
        ">= 1",
        "no push was answered UNKNOWN_SUBSCRIPTION_ID" if refused is None else
        f"none; the telemetry requests after {refused}: "
        f"{[str(e) + (' (Terminating)' if e.terminating else '') for e in since]}",
        ok=any(e.api_key == GET_SUBSCRIPTIONS for e in since),
    )  # fmt: skip
    if null_echo:  # the ids check above judges the requests after the Null answer: are there any?
        nulled = gets[1] if len(gets) > 1 and gets[1].answered else None
        # the Terminating push is the close's doing, not the client going on: a client that
        # stopped at the Null answer may still send it (Java 4.4.0 did, with the id it kept,
        # in the CI run of 2026-11-26, and then passed)
        after_null = [] if nulled is None else recording.traffic.after(nulled.sent, *TELEMETRY_KEYS)
        later_than_null = [e for e in after_null if not e.terminating]
        closing = recording.run.named("closing")
        interval = SILENCE_INTERVALS * 0.3  # the scripted PushIntervalMs is 300 ms
        silent = (recording.run.monotonic(closing[0]) - nulled.sent
                  if nulled is not None and closing else 0.0)  # fmt: skip
        if nulled is not None and not later_than_null and silent >= interval:
            # a client that accepts Null goes on (ruling 5); one that stops is not accepting it
            check.expect(
                f"telemetry requests but the Terminating push in the {silent:.1f} s after the Get "
                f"answered with a Null ClientInstanceId (>= {SILENCE_INTERVALS} x PushIntervalMs "
                "300 ms)",
                ">= 1", 0,
            )  # fmt: skip
            return
        check.precondition(
            "a telemetry request but the Terminating push after the Get answered with a Null "
            "ClientInstanceId",
            ">= 1",
            "no second Get answered" if nulled is None else len(later_than_null),
            ok=bool(later_than_null),
        )


@case(
    "kip714.client.handshake.instance_id",
    rules=["kip714.client.handshake.instance_id"],
    title="First Get with a Null ClientInstanceId, then the returned id on every Get and Push",
    spec=f"{BEHAVIOR} ('This handshake with a Null ClientInstanceId is only performed once ... "
    "Subsequent GetTelemetrySubscriptionsRequests must include the ClientInstanceId returned in "
    "the first response, regardless of broker')",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_instance_id(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
    run = await _id_run(check, client, client_target, null_echo=False)
    _expect_assigned_id(check, run, null_echo=False)


@case(
    "kip714.client.handshake.null_id_echo",
    rules=["kip714.client.handshake.null_echo"],
    title="A later Get response carrying a Null ClientInstanceId does not replace the id",
    spec="KIP-714 GetTelemetrySubscriptionsResponse schema ('Assigned client instance id if "
    "ClientInstanceId was Null in the request, else Null'); ruling 5 (clients must accept "
    f"both an echo and Null); {BEHAVIOR} (the returned id for the client's lifetime)",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_null_id_echo(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    run = await _id_run(check, client, client_target, null_echo=True)
    _expect_assigned_id(check, run, null_echo=True)


@case(
    "kip714.client.handshake.single_connection",
    rules=["kip714.client.handshake.single_connection"],
    title="Telemetry requests keep to one broker connection",
    spec="KIP-714 Connection selection ('It should also keep using the same broker connection "
    "for telemetry requests until the connection goes down'); the baseline producer, its first "
    f"Metadata answer {METADATA_HOLD_S:g} s late, so its first Get goes out before it knows the "
    "cluster, on the bootstrap connection",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
)
async def test_single_connection(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await run_client(
        check,
        client,
        client_target,
        produce(5.0),
        interval_ms=BASELINE_INTERVAL_MS,
        injections=_late_first_metadata,
    )
    require_telemetry(check, recording, 2)
    traffic = recording.traffic
    telemetry = traffic.telemetry
    switches = [
        f"{a} -> {b}"
        for a, b in pairwise(telemetry)
        if a.connection != b.connection and traffic.closed.get(a.connection, b.sent + 1) > b.sent
    ]
    check.observe("connections the client opened", [c.split()[0] for c in traffic.connections()])
    check.observe(
        "connections carrying telemetry",
        list(dict.fromkeys(e.connection.split()[0] for e in telemetry)),
    )
    check.expect("switches to another connection while the previous one was up", [], switches)


def _late_first_metadata(client_id: str) -> list[Injection]:
    """The first Metadata answer held back: whether a client's first Get precedes what it learns
    of the cluster is then never a race (the Java client moves its telemetry off the bootstrap
    connection once the metadata lacks that node, KAFKA-20393, in 4.2.1, 4.2.2 and 4.4.0)."""
    return [for_client(client_id, METADATA, delay=METADATA_HOLD_S, times=1, name="late metadata")]


async def _empty_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    scripted = ScriptedTelemetry(400, requested_metrics=())
    return await shared_run(
        check,
        client,
        target,
        "empty_subscription",
        lambda: run_client(check, client, target, Scenario.idle(seconds=2.5), scripted=scripted),
    )


@case(
    "kip714.client.handshake.empty_subscription",
    rules=["kip714.client.handshake.no_push_without_metrics"],
    title="No PushTelemetry (not even at close) while RequestedMetrics is empty",
    spec="KIP-714 Default behaviour ('only then will clients push metrics to the broker'); "
    f"{BEHAVIOR} (RequestedMetrics empty: no metrics desired); Client termination ('only if "
    "the client has an active metrics subscription')",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
    shares="empty_subscription",
)
async def test_empty_subscription(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _empty_run(check, client, client_target)
    check.precondition(
        "GetTelemetrySubscriptions requests the client sent",
        ">= 1",
        0,
        ok=bool(recording.traffic.gets),
    )
    check.expect("PushTelemetry requests", [], [str(e) for e in recording.traffic.pushes][:10])


@case(
    "kip714.client.handshake.empty_subscription_reget",
    rules=["kip714.client.handshake.reget_after_interval"],
    title="With no metrics requested the client Gets again after PushIntervalMs",
    spec=f"{BEHAVIOR} ('the client should send a new GetTelemetrySubscriptionsRequest after the "
    "PushIntervalMs has expired'); tolerance: each gap in [0.95 x interval - 20 ms, "
    "1.5 x interval + 200 ms]",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
    shares="empty_subscription",
)
async def test_empty_subscription_reget(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await _empty_run(check, client, client_target)
    interval = (recording.push_interval_ms or 0) / 1000
    spaced = gaps([e.sent for e in recording.traffic.gets])
    check.observe(
        "gaps between Gets, in PushIntervalMs", distribution([g / interval for g in spaced])
    )
    check.expect("the client Got again at least once", True, len(spaced) >= 1)
    low, high = 0.95 * interval - 0.02, 1.5 * interval + 0.2 + recording.harness_lag
    check.expect(
        f"every gap in [{low:.3f}, {high:.3f}] s{lag_text(recording)}",
        [],
        [round(g, 3) for g in spaced if not low <= g <= high],
    )


@case(
    "kip714.client.handshake.opt_out",
    rules=["kip714.client.opt_out"],
    title="enable.metrics.push=false: no telemetry requests at all, despite a subscription",
    spec="KIP-714 Client configuration (enable.metrics.push: 'false - The client will not push "
    "metrics'); Opting out",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_opt_out(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
    recording = await run_client(
        check,
        client,
        client_target,
        Scenario.idle(seconds=2.0),
        interval_ms=300,
        config={"enable.metrics.push": "false"},
    )
    check.precondition(
        "ApiVersions requests of the client (it connected)",
        ">= 1",
        0,
        ok=bool(recording.traffic.of(API_VERSIONS)),
    )
    check.expect("telemetry requests", [], [str(e) for e in recording.traffic.telemetry][:10])
