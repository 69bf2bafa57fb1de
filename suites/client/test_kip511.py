"""KIP-511 on the client side: ClientSoftwareName/Version on every connection, and INVALID_REQUEST
(the fallback after UNSUPPORTED_VERSION is in test_kip511_fallback.py).

Spec: KIP-511 "Proposed Changes" (the client provides its name and version in ApiVersions v3;
on INVALID_REQUEST it must error out, close the connection and log the error), "Public
Interfaces" (ClientSoftwareVersion is "The version of the client", ruling 16), "Validation"
(the KIP's pattern), ruling 9 (Apache's pattern is SHOULD for clients).
"""

from __future__ import annotations

import re
from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import ApiVersionsResponse
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.proxy.injections import Injection, Respond
from kconform.fixtures.reference.apiversions import SOFTWARE_NAME_VERSION_PATTERN
from kconform.fixtures.targets.base import BrokerTarget
from kconform.rules.rulings import RECONNECT_WITHIN_S
from kconform.suites.client.helpers import Recording, baseline_run, for_client, run_client
from kconform.suites.client.timing import MAX_APIVERSIONS_PER_SECOND
from kconform.suites.client.traffic import API_VERSIONS, Traffic, connections_of

KIP_PATTERN = re.compile(r"[.\-_a-zA-Z0-9]+")
"""KIP-511 "Validation": ([\\.\\-_a-zA-Z0-9])+, matched in full."""
IDENTITY = "KIP-511 Proposed Changes (clients provide name and version, ApiVersionsRequest v3)"


Identity = tuple[str, int | None, str | None, str | None]
"""(connection, ApiVersions version, ClientSoftwareName, ClientSoftwareVersion)."""


def _identities(traffic: Traffic) -> list[Identity]:
    """(connection, version, name, version string) of each connection's first ApiVersions."""
    out: list[Identity] = []
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


def _judge_identity(check: Check, identities: list[Identity], pattern: re.Pattern[str]) -> None:
    """`identities`: `_identities` of the run, computed once by the caller (which may need them
    for a precondition of its own)."""
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
    recording = await baseline_run(check, client, client_target)
    _judge_identity(check, _identities(recording.traffic), KIP_PATTERN)


@case(
    "kip511.client.software_identity_after_reset",
    rules=["kip511.client.software_identity"],
    title="A connection reset at the first ApiVersions: the next connection still sends v3+ with "
    "name and version",
    spec=f"{IDENTITY}; KIP-511 Proposed Changes (the client goes below v3 on an "
    "UNSUPPORTED_VERSION answer, which a lost connection is not); franz-go CHANGELOG v1.21.4; "
    f"ruling 22 (the next connection awaited up to {RECONNECT_WITHIN_S:g} s)",
    level=Level.MUST,
    kind="client",
)
async def test_software_identity_after_reset(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    """The window lasts until the client's next connection after the reset (ruling 22's bound
    at most), then LINGER: a client reconnects on its own timer (kafka-go's within 6 s), which a
    fixed window would catch in some runs and miss in others."""
    name = "the first ApiVersions: connection reset (TCP RST)"
    reset: list[Injection] = []
    ids: list[str] = []
    log = client_target.wire_log  # type: ignore[attr-defined]
    mark = log.mark()

    def injections(client_id: str) -> list[Injection]:
        ids.append(client_id)
        reset.append(for_client(client_id, API_VERSIONS, reset=True, times=1, name=name))
        return reset

    def reconnected() -> bool:  # a request of the client on a second connection
        return bool(reset and reset[0].fired) and len(connections_of(log.since(mark), ids[0])) >= 2

    recording = await run_client(check, client, client_target,
                                 Scenario.idle(seconds=RECONNECT_WITHIN_S), metrics=None,
                                 injections=injections, until=reconnected)  # fmt: skip
    fired = sum(i.fired for i in reset)
    identities = _identities(recording.traffic)
    connections = len(identities)
    check.precondition(
        "a connection reset at its first ApiVersions, then another connection of the client",
        f">= 1 reset and >= 2 connections within ruling 22's {RECONNECT_WITHIN_S:g} s",
        f"{fired} reset, {connections} connections"
        + ("" if connections >= 2 else
           f": the client did not reconnect within the {RECONNECT_WITHIN_S:g} s bound "
           "stated by ruling 22"),
        ok=fired >= 1 and connections >= 2,
    )  # fmt: skip
    _judge_identity(check, identities, KIP_PATTERN)


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
    _judge_identity(check, _identities(recording.traffic), SOFTWARE_NAME_VERSION_PATTERN)


def _version_tokens(text: str) -> set[str]:
    """The release numbers in `text` ("2.5.0-rdkafka-2.5.0" -> {"2.5.0"}), without a leading v."""
    return {m.lstrip("vV") for m in re.findall(r"[vV]?\d+(?:\.\d+)+", text)}


@case(
    "kip511.client.software_version_is_library",
    rules=["kip511.client.identity_is_library"],
    title="ClientSoftwareVersion is the version of the client library the driver loaded",
    spec="KIP-511 Public Interfaces (ClientSoftwareVersion: 'The version of the client'); "
    "ruling 16",
    level=Level.MUST,
    kind="client",
    shares="baseline",
)
async def test_software_version_is_library(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    """The driver knows what it installed (`--describe`: its library's version, and the version
    of an embedded library its implementation names); the client must advertise one of them."""
    loaded = _version_tokens(client.version) | _version_tokens(client.implementation)
    check.precondition(
        "the library versions the driver says it loaded (--describe)",
        "a release number",
        f"{client.implementation!r} {client.version!r}",
        ok=bool(loaded),
    )
    recording = await baseline_run(check, client, client_target)
    advertised = [(c, s) for c, v, _, s in _identities(recording.traffic) if v and v >= 3]
    check.precondition(
        "connections that sent ApiVersions v3+ (the versions that carry ClientSoftwareVersion)",
        ">= 1",
        0,
        ok=bool(advertised),
        needs="kip511.client.software_identity",
    )
    check.observe("library versions loaded", sorted(loaded))
    check.expect(
        f"every connection's ClientSoftwareVersion carries one of {sorted(loaded)}",
        [],
        [f"{c.split()[0]}: {s!r}" for c, s in advertised if not loaded & _version_tokens(s or "")],
    )


INVALID = (
    "KIP-511 Validation ('When the client receives an INVALID_REQUEST, it must error out "
    "and to close the connection and log the error')"
)


@case(
    "kip511.client.invalid_request",
    rules=["kip511.client.invalid_request"],
    title="On INVALID_REQUEST the client errors out, closes the connection, and does not loop",
    spec=f"{INVALID}; §B.1 (v0-v2 are always valid)",
    level=Level.MUST,
    kind="client",
)
async def test_invalid_request(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    await _judge_invalid_request(check, client, client_target, keep_keys=False)


@case(
    "kip511.client.invalid_request_with_keys",
    rules=["kip511.client.invalid_request"],
    title="INVALID_REQUEST with the broker's ApiKeys table still attached is still a refusal",
    spec=f"{INVALID} (whatever else the response holds); franz-go CHANGELOG v1.21.6 (PR #1381)",
    level=Level.MUST,
    kind="client",
)
async def test_invalid_request_with_keys(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    await _judge_invalid_request(check, client, client_target, keep_keys=True)


async def _judge_invalid_request(
    check: Check, client: ClientDriver, target: BrokerTarget, *, keep_keys: bool
) -> None:
    """Answer every ApiVersions v3+ INVALID_REQUEST, with Apache's empty ApiKeys table or (
    `keep_keys`) the broker's own, so a client that reads only the table goes on."""

    def injections(client_id: str) -> list[Injection]:
        refusal: dict[str, Any] = {"predicate": lambda r: r.api_version >= 3}
        if keep_keys:  # the broker's own answer, its error code changed
            refusal.update(error_code=ErrorCode.INVALID_REQUEST,
                           name="ApiVersions v3+ INVALID_REQUEST, ApiKeys kept")  # fmt: skip
        else:
            body = ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST, throttle_time_ms=0)
            refusal.update(respond=Respond(body), name="ApiVersions v3+ INVALID_REQUEST")
        return [for_client(client_id, API_VERSIONS, **refusal)]

    seconds = 3.0
    recording = await run_client(
        check, client, target, Scenario.idle(seconds=seconds), metrics=None, injections=injections
    )
    traffic = recording.traffic
    refused = [e for e in traffic.of(API_VERSIONS) if e.error_code == ErrorCode.INVALID_REQUEST]
    check.precondition(
        "ApiVersions v3+ requests of the client (the injection answers them INVALID_REQUEST)",
        ">= 1",
        f"0; ApiVersions versions it sent: {traffic.versions(API_VERSIONS)}",
        ok=bool(refused),
        needs="kip511.client.software_identity",
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
