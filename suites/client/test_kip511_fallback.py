"""KIP-511 on the client side: the fallback after UNSUPPORTED_VERSION.

Spec: KIP-511 "Proposed Changes" (on UNSUPPORTED_VERSION the client reads the v0 body and
restarts with the version the ApiKeys entry for ApiVersions advertises, or v0 without one),
ruling 15 (an advertised version that does not go lower should not make it loop), §B.2 (the
broker's v0 fallback body, the Java client's retry).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kconform.codecs.errors import ErrorCode
from kconform.codecs.framing import RequestFrame
from kconform.codecs.messages import ApiVersionsResponse
from kconform.codecs.schema import Message
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.proxy.injections import Injection, Respond
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.client.helpers import for_client, run_client
from kconform.suites.client.timing import MAX_APIVERSIONS_PER_SECOND
from kconform.suites.client.traffic import API_VERSIONS, Exchange, Traffic

FALLBACK = "KIP-511 Proposed Changes, fail back step 2 (restart with the advertised version); §B.2"
ADVERTISED_MAX = 2
MAX_APIVERSIONS_PER_CONNECTION = 2  # the refused request and one retry


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


def _retries(
    traffic: Traffic, error: int, first_only: bool = False
) -> list[tuple[Exchange, Exchange | None, int]]:
    """For each ApiVersions answered `error`: the next request on its connection, and how many
    ApiVersions that connection sent until one was answered without an error or another request
    went out (the handshake; an ApiVersions a client sends later, franz-go's v0 probe when it
    opens a produce connection, is no retry). `first_only`: the first such ApiVersions of each
    connection (a looping client is refused thousands of times on one, all the same loop)."""
    out = []
    refusals = [e for e in traffic.of(API_VERSIONS) if e.error_code == error]
    if first_only:
        firsts: dict[str, Exchange] = {}
        for e in refusals:
            firsts.setdefault(e.connection, e)
        refusals = list(firsts.values())
    for refused in refusals:
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
        f"0; ApiVersions versions it sent: {recording.traffic.versions(API_VERSIONS)}",
        ok=bool(retries),
        needs="kip511.client.software_identity",
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


PRODUCE_ONLY = (0, 0, 9)  # Produce v0..v9: an ApiKeys list that is not empty, without key 18


@case(
    "kip511.client.unsupported_version.retry_v0_other_keys",
    rules=["kip511.client.fallback"],
    title="On UNSUPPORTED_VERSION listing other keys but not ApiVersions the client retries at v0",
    spec=f"{FALLBACK} ('or default to versions 0 if not present'); broker advertises "
    f"{{{PRODUCE_ONLY[0]}: {PRODUCE_ONLY[1]}..{PRODUCE_ONLY[2]}}} only",
    level=Level.MUST,
    kind="client",
)
async def test_unsupported_version_retry_v0_other_keys(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    await _judge_fallback(check, client, client_target, [PRODUCE_ONLY], 0)


NO_LOOP_BOUND = 6
"""ApiVersions on one refused connection: a strictly decreasing walk from v4 (the newest today) to
v0 is 5 requests, and one repeat is let pass; a loop sends thousands in the window."""
MAX_REFUSALS = 200
"""Refusals per run, after which the broker answers: a looping client (franz-go before v1.21.4
sends ~16,000 a second, and its application cannot close) is let out once it has shown it."""


def _refuse_all_but_v0(client_id: str) -> list[Injection]:
    """Every ApiVersions v1+ is answered UNSUPPORTED_VERSION (v0 body) advertising {18: 0..the
    version just refused}: a range that never lets the client go lower. v0 goes to the broker,
    as does everything after MAX_REFUSALS."""
    entry = ApiVersionsResponse.ApiVersion

    def refusal(request: RequestFrame) -> Message:
        top = entry(api_key=API_VERSIONS, min_version=0, max_version=request.api_version)
        return ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=[top])

    return [
        for_client(
            client_id,
            API_VERSIONS,
            predicate=lambda r: r.api_version > 0,
            respond=Respond(refusal, version=0),
            times=MAX_REFUSALS,
            name="ApiVersions v1+ unsupported, max = the version refused",
        )
    ]


@case(
    "kip511.client.unsupported_version.no_loop",
    rules=["kip511.client.fallback.terminates"],
    title="An UNSUPPORTED_VERSION range that does not go lower ends in v0 or a closed connection",
    spec=f"{FALLBACK}; ruling 15 (the broker advertises {{18: 0..the version refused}})",
    level=Level.SHOULD,
    kind="client",
)
async def test_unsupported_version_no_loop(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    seconds = 2.5
    recording = await run_client(
        check, client, client_target, Scenario.idle(seconds=seconds), metrics=None,
        injections=_refuse_all_but_v0,
    )  # fmt: skip
    traffic = recording.traffic
    retries = _retries(traffic, ErrorCode.UNSUPPORTED_VERSION, first_only=True)
    check.precondition(
        "ApiVersions v1+ requests of the client (the injection answers them UNSUPPORTED_VERSION)",
        ">= 1",
        f"0; ApiVersions versions it sent: {traffic.versions(API_VERSIONS)}",
        ok=bool(retries),
        needs="kip511.client.software_identity",
    )
    check.observe(
        "per refused connection: ApiVersions sent, and the next request",
        [f"{r}: {c} ApiVersions; next {n or 'nothing'}" for r, n, c in retries[:20]],
    )
    counts = [c for _, _, c in retries]
    check.expect(
        f"ApiVersions requests per refused connection (at most {NO_LOOP_BOUND}: no loop)",
        f"<= {NO_LOOP_BOUND}",
        sorted(set(counts)),
        all(c <= NO_LOOP_BOUND for c in counts),
    )
    rate = (len(traffic.of(API_VERSIONS)) + traffic.truncated) / seconds
    check.expect(
        f"ApiVersions requests per second (no storm: <= {MAX_APIVERSIONS_PER_SECOND:g}/s)",
        f"<= {MAX_APIVERSIONS_PER_SECOND:g}",
        round(rate, 1),
        rate <= MAX_APIVERSIONS_PER_SECOND,
    )
