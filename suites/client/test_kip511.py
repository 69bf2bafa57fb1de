"""KIP-511 on the client side: ClientSoftwareName/Version on every connection, and the fallback.

Spec: KIP-511 "Proposed Changes" (the client provides its name and version in ApiVersions v3;
on UNSUPPORTED_VERSION it reads the v0 body and restarts with the version the ApiKeys entry for
ApiVersions advertises, or v0 without one; on INVALID_REQUEST it must error out, close the
connection and log the error), "Validation" (the KIP's pattern), ruling 9 (Apache's pattern
is SHOULD for clients), §B.2 (the broker's v0 fallback body, the Java client's retry).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import ApiVersionsResponse
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.proxy.injections import Injection, Respond
from kconform.fixtures.reference.apiversions import SOFTWARE_NAME_VERSION_PATTERN
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import Recording, baseline_run, for_client, run_client
from kconform.suites.client.traffic import API_VERSIONS, Exchange, Traffic

KIP_PATTERN = re.compile(r"[.\-_a-zA-Z0-9]+")
"""KIP-511 "Validation": ([\\.\\-_a-zA-Z0-9])+, matched in full."""
IDENTITY = "KIP-511 Proposed Changes (clients provide name and version, ApiVersionsRequest v3)"
FALLBACK = "KIP-511 Proposed Changes, fail back step 2 (restart with the advertised version); §B.2"
ADVERTISED_MAX = 2
MAX_APIVERSIONS_PER_CONNECTION = 2  # the refused request and one retry


def _identities(traffic: Traffic) -> list[tuple[str, int | None, str | None, str | None]]:
    """(connection, version, name, version string) of each connection's first ApiVersions."""
    out: list[tuple[str, int | None, str | None, str | None]] = []
    for connection in traffic.connections():
        first = next((e for e in traffic.on(connection) if e.api_key == API_VERSIONS), None)
        if first is None or first.request is None:
            out.append((connection, None, None, None))
        elif first.api_version < 3:
            out.append((connection, first.api_version, None, None))
        else:
            body = first.request
            out.append(
                (
                    connection,
                    first.api_version,
                    body.client_software_name,
                    body.client_software_version,
                )
            )
    return out


def _judge_identity(check: Check, recording: Recording, pattern: re.Pattern[str]) -> None:
    identities = _identities(recording.traffic)
    check.precondition(
        "connections on which the client's requests carried its client.id",
        ">= 1",
        0,
        ok=bool(identities),
    )
    check.observe(
        "ClientSoftwareName/Version per connection",
        [f"{c.split()[0]}: v{v} {n!r} {s!r}" for c, v, n, s in identities],
    )
    bad = [
        f"{c.split()[0]}: v{v} {n!r} {s!r}"
        for c, v, n, s in identities
        if v is None or v < 3 or not all(x and pattern.fullmatch(x) for x in (n, s))
    ]
    check.expect(
        f"every connection's ApiVersions is v3+ with name and version matching {pattern.pattern}",
        [],
        bad,
    )


@case(
    "kip511.client.software_identity",
    rules=["kip511.client.software_identity"],
    title="Every connection sends ApiVersions v3+ with a name and version in the KIP's pattern",
    spec=f"{IDENTITY}; KIP-511 Validation ([\\.\\-_a-zA-Z0-9])+",
    level=Level.MUST,
    kind="client",
    shares="baseline",
)
async def test_software_identity(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    _judge_identity(check, await baseline_run(check, client, client_target), KIP_PATTERN)


@case(
    "kip511.client.software_identity_apache",
    rules=["kip511.client.software_identity_apache"],
    title="ClientSoftwareName/Version also match Apache's stricter pattern (interoperability)",
    spec=f"{IDENTITY}; ruling 9, B.1 (Apache's SOFTWARE_NAME_VERSION_PATTERN)",
    level=Level.SHOULD,
    kind="client",
    shares="baseline",
)
async def test_software_identity_apache(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await baseline_run(check, client, client_target)
    _judge_identity(check, recording, SOFTWARE_NAME_VERSION_PATTERN)


def _refuse_new_versions(
    advertise: Sequence[tuple[int, int, int]],
) -> Callable[[str], list[Injection]]:
    """Rules for a broker that knows ApiVersions only up to v2: v3+ gets the v0 fallback body."""
    entry = ApiVersionsResponse.ApiVersion
    body = ApiVersionsResponse(
        error_code=ErrorCode.UNSUPPORTED_VERSION,
        api_keys=[entry(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in advertise],
    )

    def injections(client_id: str) -> list[Injection]:
        return [
            for_client(
                client_id,
                API_VERSIONS,
                predicate=lambda r: r.api_version > 2,
                respond=Respond(body, version=0),
                name="ApiVersions v3+ unsupported",
            )
        ]

    return injections


def _versions_sent(traffic: Traffic) -> list[int]:
    return sorted({e.api_version for e in traffic.of(API_VERSIONS)})


def _retries(traffic: Traffic, error: int) -> list[tuple[Exchange, Exchange | None, int]]:
    """For each ApiVersions answered `error`: the next request on its connection, and how many
    ApiVersions that connection sent until one was answered without an error or another request
    went out (the handshake; an ApiVersions a client sends later, franz-go's v0 probe when it
    opens a produce connection, is no retry)."""
    out = []
    for refused in (e for e in traffic.of(API_VERSIONS) if e.error_code == error):
        on = traffic.on(refused.connection)
        later = [e for e in on if e.sent > refused.sent]
        count = 0
        for exchange in on:
            if exchange.api_key != API_VERSIONS:
                break
            count += 1
            if exchange.error_code == 0:
                break
        out.append((refused, later[0] if later else None, count))
    return out


async def _judge_fallback(
    check: Check,
    client: ClientDriver,
    target: BrokerTarget,
    advertise: Sequence[tuple[int, int, int]],
    expected: int,
) -> None:
    recording = await run_client(
        check,
        client,
        target,
        Scenario.idle(seconds=2.5),
        metrics=None,
        injections=_refuse_new_versions(advertise),
    )
    retries = _retries(recording.traffic, ErrorCode.UNSUPPORTED_VERSION)
    check.precondition(
        "ApiVersions v3+ requests of the client (the injection answers them UNSUPPORTED_VERSION)",
        ">= 1",
        f"0; ApiVersions versions it sent: {_versions_sent(recording.traffic)}",
        ok=bool(retries),
    )
    check.observe(
        "retries after UNSUPPORTED_VERSION",
        [f"{r}: next {n or 'nothing'}; ApiVersions on the connection: {c}" for r, n, c in retries],
    )
    versions = [n.api_version if n and n.api_key == API_VERSIONS else None for _, n, _ in retries]
    check.expect(
        "the next request on each refused connection is ApiVersions at version",
        [expected] * len(retries),
        versions,
    )
    counts = [c for _, _, c in retries]
    check.expect(
        f"ApiVersions requests per refused connection (at most "
        f"{MAX_APIVERSIONS_PER_CONNECTION}: no downgrade loop)",
        f"<= {MAX_APIVERSIONS_PER_CONNECTION}",
        counts,
        all(c <= MAX_APIVERSIONS_PER_CONNECTION for c in counts),
    )


@case(
    "kip511.client.unsupported_version.retry_max",
    rules=["kip511.client.fallback"],
    title="On UNSUPPORTED_VERSION the client retries at the max version the v0 body advertises",
    spec=f"{FALLBACK}; broker advertises {{18: 0..{ADVERTISED_MAX}}}",
    level=Level.MUST,
    kind="client",
)
async def test_unsupported_version_retry_max(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    await _judge_fallback(check, client, client_target, [(18, 0, ADVERTISED_MAX)], ADVERTISED_MAX)


@case(
    "kip511.client.unsupported_version.retry_v0",
    rules=["kip511.client.fallback"],
    title="On UNSUPPORTED_VERSION without an ApiVersions entry the client retries at v0",
    spec=f"{FALLBACK} ('or default to versions 0 if not present')",
    level=Level.MUST,
    kind="client",
)
async def test_unsupported_version_retry_v0(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    await _judge_fallback(check, client, client_target, [], 0)


MAX_APIVERSIONS_PER_SECOND = 10.0


@case(
    "kip511.client.invalid_request",
    rules=["kip511.client.invalid_request"],
    title="On INVALID_REQUEST the client errors out, closes the connection, and does not loop",
    spec="KIP-511 Validation ('When the client receives an INVALID_REQUEST, it must error out "
    "and to close the connection and log the error'); §B.1 (v0-v2 are always valid)",
    level=Level.MUST,
    kind="client",
)
async def test_invalid_request(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    def injections(client_id: str) -> list[Injection]:
        body = ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST, throttle_time_ms=0)
        return [
            for_client(
                client_id,
                API_VERSIONS,
                predicate=lambda r: r.api_version >= 3,
                respond=Respond(body),
                name="ApiVersions v3+ INVALID_REQUEST",
            )
        ]

    seconds = 3.0
    recording = await run_client(
        check,
        client,
        client_target,
        Scenario.idle(seconds=seconds),
        metrics=None,
        injections=injections,
    )
    traffic = recording.traffic
    refused = [e for e in traffic.of(API_VERSIONS) if e.error_code == ErrorCode.INVALID_REQUEST]
    check.precondition(
        "ApiVersions v3+ requests of the client (the injection answers them INVALID_REQUEST)",
        ">= 1",
        f"0; ApiVersions versions it sent: {_versions_sent(traffic)}",
        ok=bool(refused),
    )
    went_on = []
    for r in refused:
        later = [str(e) for e in traffic.on(r.connection) if e.sent > r.sent]
        if later:
            went_on.append(f"{r.connection.split()[0]}: {later[:3]}")
    check.expect(
        "no request after INVALID_REQUEST on the same connection (it is closed)", [], went_on
    )
    total = len(traffic.of(API_VERSIONS)) + traffic.truncated
    rate = total / seconds
    check.expect(
        f"ApiVersions requests per second (bounded retries: <= {MAX_APIVERSIONS_PER_SECOND:g}/s)",
        f"<= {MAX_APIVERSIONS_PER_SECOND:g}",
        round(rate, 1),
        rate <= MAX_APIVERSIONS_PER_SECOND,
    )
    _expect_reported(check, recording)


def _expect_reported(check: Check, recording: Recording) -> None:
    errors = recording.run.named("error")
    logged = [
        line
        for line in recording.run.stderr_tail(20000).splitlines()
        if re.search(r"invalid|error", line, re.IGNORECASE)
    ]
    check.expect(
        "the error is reported (an error event, or an error logged on stderr)",
        True,
        (errors[:1] and dict(errors[0].data)) or (logged[:1] and logged[0][:200]) or None,
        bool(errors or logged),
    )
