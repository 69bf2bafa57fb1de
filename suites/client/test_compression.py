"""KIP-714 payload compression on the client side.

Spec: KIP-714 "Compression" ("the client is free to pick any supported compression type but
should pick the first mutually supported type in the returned list. If the
AcceptedCompressionTypes array is empty the client must send metrics uncompressed"; "it is
recommended that the serialized metrics are compressed ... if the serialized uncompressed size
exceeds 1000 bytes"), ruling 8 (both recommendations are SHOULD).
"""

from __future__ import annotations

from kconform.codecs.errors import ErrorCode
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import TELEMETRY, baseline_run, require_telemetry, run_client
from kconform.suites.client.scripted import ScriptedTelemetry, fail_pushes
from kconform.suites.client.traffic import Exchange, payload_or_error

COMPRESSION = "KIP-714 Compression"
THRESHOLD = 1000
NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def _size(push: Exchange) -> int | None:
    payload, _ = payload_or_error(push)
    return None if payload is None else len(payload)


@case(
    "kip714.client.compression.preferred_type",
    rules=["kip714.client.compression.preferred"],
    title="The client compresses with the first type of AcceptedCompressionTypes it supports",
    spec=f"{COMPRESSION} ('should pick the first mutually supported type in the returned "
    "list'); ruling 8. Method: every Get answers a rotation of [zstd, lz4, gzip, snappy] and "
    "every push gets UNKNOWN_SUBSCRIPTION_ID (so the client Gets again); each push is judged "
    "against the list offered with the SubscriptionId it carries; the types the client used "
    "are taken as the ones it supports",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
)
async def test_preferred_type(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    scripted = ScriptedTelemetry(
        250, compression_rotation=True, push=fail_pushes(ErrorCode.UNKNOWN_SUBSCRIPTION_ID)
    )
    recording = await run_client(
        check, client, client_target, Scenario.idle(seconds=4.0), scripted=scripted
    )
    require_telemetry(check, recording, 2)
    # each push is judged against the list offered with the SubscriptionId it carries, not the
    # latest one: a client closing right after a Get still pushes under its previous one (seen
    # with java:4.1.0, its Terminating push racing the last Get's answer)
    offered_then_used: list[tuple[list[int], int, int | None]] = []
    offered: dict[int, list[int]] = {}
    for exchange in recording.traffic.telemetry:
        if exchange.api_key == 71 and exchange.response is not None:
            types = [int(t) for t in exchange.response.accepted_compression_types]
            offered[int(exchange.response.subscription_id)] = types
        elif exchange.api_key == 72 and exchange.request is not None:
            choices = offered.get(int(exchange.request.subscription_id))
            if choices is not None:
                used = int(exchange.request.compression_type)
                offered_then_used.append((choices, used, _size(exchange)))
    supported = {used for _, used, _ in offered_then_used if used != 0}
    check.observe(
        "offered -> used (uncompressed size)",
        [
            f"{[NAMES.get(t, t) for t in o]} -> {NAMES.get(u, u)} ({s} bytes)"
            for o, u, s in offered_then_used
        ],
    )
    check.observe("types the client used (taken as supported)", sorted(NAMES[t] for t in supported))
    wrong = []
    for choices, used, size in offered_then_used:
        first = next((t for t in choices if t in supported), 0)
        if used == 0 and (size or 0) <= THRESHOLD:
            continue  # small payloads may go uncompressed (the 1000-byte recommendation)
        if used != first:
            wrong.append(f"offered {[NAMES.get(t, t) for t in choices]}, used {NAMES.get(used)}")
    check.expect("pushes not using the first supported type offered", [], wrong)
    if not supported:
        check.note("the client never compressed, so its preference could not be observed")


@case(
    "kip714.client.compression.empty_list",
    rules=["kip714.client.compression.empty_list"],
    title="With an empty AcceptedCompressionTypes the client sends metrics uncompressed",
    spec=f"{COMPRESSION} ('If the AcceptedCompressionTypes array is empty the client must send "
    "metrics uncompressed')",
    level=Level.MUST,
    requires=TELEMETRY,
    kind="client",
)
async def test_empty_list(client: ClientDriver, client_target: BrokerTarget, check: Check) -> None:
    scripted = ScriptedTelemetry(300, accepted_compression_types=())
    recording = await run_client(
        check, client, client_target, Scenario.idle(seconds=2.5), scripted=scripted
    )
    require_telemetry(check, recording)
    used = [int(e.request.compression_type) for e in recording.traffic.pushes if e.request]
    check.expect("CompressionType of every push", [0] * len(used), used)


@case(
    "kip714.client.compression.large_payload",
    rules=["kip714.client.compression.large_payload"],
    title="Payloads above 1000 bytes uncompressed are sent compressed",
    spec=f"{COMPRESSION} ('recommended that the serialized metrics are compressed ... if the "
    "serialized uncompressed size exceeds 1000 bytes'); ruling 8",
    level=Level.SHOULD,
    requires=TELEMETRY,
    kind="client",
    shares="baseline",
)
async def test_large_payload(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await baseline_run(check, client, client_target)
    require_telemetry(check, recording)
    sized = [(e, _size(e)) for e in recording.traffic.pushes if e.request is not None]
    check.observe(
        "uncompressed sizes -> CompressionType",
        [f"{s} -> {NAMES.get(_ctype(e))}" for e, s in sized],
    )
    large = [(e, s) for e, s in sized if s is not None and s > THRESHOLD]
    check.precondition(
        f"pushes of more than {THRESHOLD} bytes uncompressed",
        ">= 1",
        f"0; largest: {max((s for _, s in sized if s is not None), default=None)} bytes",
        ok=bool(large),
    )
    check.expect(
        f"pushes above {THRESHOLD} bytes sent uncompressed",
        [],
        [f"{e}: {s} bytes" for e, s in large if _ctype(e) == 0],
    )


def _ctype(exchange: Exchange) -> int:
    """A push's CompressionType (-1 when its request could not be decoded)."""
    return -1 if exchange.request is None else int(exchange.request.compression_type)
