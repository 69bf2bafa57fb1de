"""KIP-511 on the broker: ApiVersions v0-v5, client software validation, the v0 fallback.

Spec: KIP-511 "Proposed Changes" (validation, the UNSUPPORTED_VERSION fallback), §B.1,
§B.2, §B.4 and ruling 9 (the KIP's pattern vs Apache's stricter one).
"""

from __future__ import annotations

from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import ApiVersionsRequest, ApiVersionsResponse, RequestHeader
from kconform.engine.check import Check, present
from kconform.engine.model import Family, Level, case
from kconform.errors import Unsupported
from kconform.fixtures.connection import ConnectionClosed, KafkaConnection, UndecodableResponse
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.broker.helpers import err

VALIDATION = "KIP-511 Proposed Changes (validation: INVALID_REQUEST); §B.1"
FALLBACK = "KIP-511 Proposed Changes, step 1 (fall back to v0, UNSUPPORTED_VERSION); §B.2"
API_VERSIONS = 18


async def api_versions(
    check: Check, version: int, name: str = "kconform", software_version: str = "1.0"
) -> tuple[KafkaConnection, Any]:
    conn = await check.connect()
    body = ApiVersionsRequest(client_software_name=name, client_software_version=software_version)
    response = await conn.request(body, version)
    return conn, response


async def advertised_max(check: Check) -> int:
    """The highest ApiVersions version the broker advertises at v0: versions above it are the
    ones it does not support, whatever its release (4.4.0 supports v5, KIP-1242)."""
    _, response = await api_versions(check, 0)
    own = next((k for k in response.body.api_keys if k.api_key == API_VERSIONS), None)
    check.require("v0 lists ApiVersions (18)", True, own is not None)
    own = present(own, "ApiVersions' entry, required above")
    check.observe("ApiVersions range advertised at v0", f"v{own.min_version}-v{own.max_version}")
    return int(own.max_version)


async def needs_v3(check: Check) -> None:
    """KIP-511's fields exist from ApiVersions v3 on: a broker that advertises less does not
    implement them (its answer to v3 is the fallback, judged by the fallback case)."""
    _, response = await api_versions(check, 0)
    own = next((k for k in response.body.api_keys if k.api_key == API_VERSIONS), None)
    top = None if own is None else own.max_version
    check.observe("ApiVersions range advertised at v0", None if own is None else
                  f"v{own.min_version}-v{own.max_version}")  # fmt: skip
    if top is None or top < 3:
        name = check.target.name if check.target is not None else "the broker"
        raise Unsupported(
            f"{name} advertises ApiVersions up to v{top}; ClientSoftwareName/Version need v3"
        )


@case(
    "kip511.apiversions.all_versions_decode",
    rules=["kip511.apiversions.schema"],
    title="ApiVersions v0-v5 decode at the requested version, or fall back above the broker's max",
    spec="KIP-511 ApiVersionsRequest/Response v3 schema; Kafka ApiVersions{Request,Response}.json; "
    "KIP-511 'ApiVersionsRequest/Response': a version above the broker's own maximum is answered "
    "with a v0 response and UNSUPPORTED_VERSION",
    level=Level.MUST,
)
async def test_all_versions_decode(target: BrokerTarget, check: Check) -> None:
    _, first = await api_versions(check, 0)
    own = next((k for k in first.body.api_keys if k.api_key == API_VERSIONS), None)
    check.require("v0 lists ApiVersions (18)", True, own is not None)
    own = present(own, "ApiVersions' own entry, required above")
    known = ApiVersionsRequest.valid_versions  # every version the codec reads (v0-v5)
    for version in range(known.low, (known.high or 0) + 1):
        try:
            _, response = await api_versions(check, version)
        except UndecodableResponse as exc:
            check.expect(
                f"v{version} response decodes", "a v{version} body", f"undecodable: {exc}", False
            )
            continue
        except ConnectionClosed as exc:  # every version gets an answer (the fallback above max)
            check.expect(f"v{version} answered", "a response", f"connection closed ({exc})", False)
            continue
        body = response.body
        if version > own.max_version:  # judged by what the broker advertises, not its release
            check.expect(f"v{version} (above max v{own.max_version}) read at v0", 0,
                         response.version)  # fmt: skip
            check.expect(f"v{version} ErrorCode", "UNSUPPORTED_VERSION (35)", err(body.error_code))
            continue
        check.expect(f"v{version} body read at v{version}", version, response.version)
        check.expect(f"v{version} ErrorCode", 0, body.error_code)
        bad = [k.api_key for k in body.api_keys if not 0 <= k.min_version <= k.max_version]
        check.expect(f"v{version} every range has 0 <= min <= max", [], bad)
        keys = [k.api_key for k in body.api_keys]
        check.expect(f"v{version} lists each api key once", len(set(keys)), len(keys))
        check.expect(f"v{version} lists ApiVersions (18)", True, API_VERSIONS in keys)


@case(
    "kip511.apiversions.valid_software_accepted",
    rules=["kip511.apiversions.software.valid_accepted"],
    title="A v3 request with a valid ClientSoftwareName/Version is accepted",
    spec=VALIDATION,
    level=Level.MUST,
)
async def test_valid_software_accepted(target: BrokerTarget, check: Check) -> None:
    await needs_v3(check)
    _, response = await api_versions(check, 3, "kconform-suite", "1.2.3-rc.4")
    check.expect("ErrorCode", 0, response.body.error_code)
    check.expect("ApiKeys listed", True, len(response.body.api_keys) > 0)


def _invalid_case(case_id: str, software: tuple[str, str]) -> Any:
    variant = case_id.rsplit(".", 1)[1]
    name, version = software

    @case(
        case_id,
        rules=["kip511.apiversions.software.invalid_rejected"],
        title=f"Invalid client software ({variant}) is answered INVALID_REQUEST, connection kept",
        spec=f"{VALIDATION}; the client, not the broker, closes (KIP-511 'the client ... close')",
        level=Level.MUST,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        await needs_v3(check)
        conn, response = await api_versions(check, 3, name, version)
        check.expect("ErrorCode", int(ErrorCode.INVALID_REQUEST), response.body.error_code)
        check.expect("response read at the request's version (3)", 3, response.version)
        try:
            follow_up = await conn.request(ApiVersionsRequest(), 0)
            kept: object = follow_up.body.error_code
        except ConnectionClosed:
            kept = "connection closed by the broker"
        check.expect("the same connection still answers ApiVersions v0", 0, kept)

    return test


INVALID = Family(_invalid_case)
# each (name, version) outside the KIP's pattern ([\.\-_a-zA-Z0-9])+
test_invalid_empty_name = INVALID("kip511.apiversions.invalid.empty_name", ("", "1.0"))
test_invalid_empty_version = INVALID("kip511.apiversions.invalid.empty_version", ("kconform", ""))
test_invalid_space = INVALID("kip511.apiversions.invalid.space", ("kconform client", "1.0"))
test_invalid_non_ascii = INVALID("kip511.apiversions.invalid.non_ascii", ("kçonform", "1.0"))
test_invalid_slash = INVALID("kip511.apiversions.invalid.slash", ("kconform/python", "1.0"))
test_invalid_version_with_plus = INVALID(
    "kip511.apiversions.invalid.version_with_plus", ("kconform", "1.0+local")
)


@case(
    "kip511.apiversions.invalid.too_long",
    rules=["kip511.apiversions.software.invalid_rejected"],
    title="A 1 KiB software name outside the pattern (trailing '.') is rejected",
    spec=VALIDATION,
    level=Level.MUST,
)
async def test_long_invalid_name(target: BrokerTarget, check: Check) -> None:
    await needs_v3(check)
    _, response = await api_versions(check, 3, "a" * 1023 + " ", "1.0")
    check.expect("ErrorCode", int(ErrorCode.INVALID_REQUEST), response.body.error_code)


@case(
    "kip511.apiversions.kip_pattern_only",
    rules=["kip511.apiversions.software.kip_pattern_only"],
    title="Names inside the KIP's pattern but outside Apache's (underscore, leading '-', '.')",
    spec="ruling 9: the KIP's ([\\.\\-_a-zA-Z0-9])+ vs Apache's stricter pattern (B.1)",
    level=Level.INFO,
)
async def test_kip_pattern_only(target: BrokerTarget, check: Check) -> None:
    await needs_v3(check)
    for name in ("kafka_python", "-leading-dash", "trailing.", ".x"):
        _, response = await api_versions(check, 3, name, "1.0")
        check.observe(f"ErrorCode for {name!r}", int(response.body.error_code))


@case(
    "kip511.apiversions.unsupported_version.fallback",
    rules=["kip511.apiversions.unsupported_version.fallback"],
    title="An unsupported ApiVersions version gets a v0 body with UNSUPPORTED_VERSION",
    spec=FALLBACK,
    level=Level.MUST,
)
async def test_unsupported_version_fallback(target: BrokerTarget, check: Check) -> None:
    # the versions asked are above what the broker advertises, never fixed numbers: 4.4.0
    # supports v5 (KIP-1242) and closed the connection on a v5 request carrying a v4 body
    top = await advertised_max(check)
    conn = await check.connect()
    for version in sorted({top + 1, 127, 32767} - set(range(top + 1))):
        header = RequestHeader(
            request_api_key=API_VERSIONS, request_api_version=version,
            correlation_id=9000 + version, client_id="kconform",
        )  # fmt: skip
        # an unknown high version is framed with header v2 (open-ended flexible range, §B.2)
        payload = header.encode(2) + ApiVersionsRequest(
            client_software_name="kconform", client_software_version="1.0"
        ).encode(4)
        try:
            response = await conn.request_raw(payload, expect=(API_VERSIONS, version))
        except UndecodableResponse as exc:
            check.expect(
                f"v{version}: a v0 body", "decodable v0 body", f"undecodable: {exc}", False
            )
            continue
        except ConnectionClosed as exc:  # the KIP asks for an answer: closing is no answer
            check.expect(f"v{version}: answered", "a v0 body with UNSUPPORTED_VERSION",
                         f"connection closed, no answer ({exc})", False)  # fmt: skip
            conn = await check.connect()  # the next version on a connection of its own
            continue
        response = present(response, "the answer request_raw returns when it expects one")
        body = response.body
        check.expect(f"v{version}: body read as v0", 0, response.version)
        check.expect(f"v{version}: ErrorCode", int(ErrorCode.UNSUPPORTED_VERSION), body.error_code)
        ranges = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        check.expect(f"v{version}: ApiKeys holds ApiVersions' range", True, API_VERSIONS in ranges)
        check.expect(f"v{version}: ApiKeys holds only ApiVersions", [API_VERSIONS], sorted(ranges))
        if API_VERSIONS in ranges:
            _, high = ranges[API_VERSIONS]
            check.expect(
                f"v{version}: advertised max below the version asked", True, high < version
            )


@case(
    "kip511.apiversions.fallback_range_usable",
    rules=["kip511.apiversions.unsupported_version.retry_works"],
    title="The ApiVersions range advertised in the fallback is one the broker answers",
    spec="KIP-511 Proposed Changes, step 2 (the client retries at the advertised version)",
    level=Level.MUST,
)
async def test_fallback_range_usable(target: BrokerTarget, check: Check) -> None:
    unsupported = await advertised_max(check) + 1
    conn = await check.connect()
    header = RequestHeader(
        request_api_key=API_VERSIONS, request_api_version=unsupported, correlation_id=1
    )
    try:
        response = await conn.request_raw(header.encode(2), expect=(API_VERSIONS, unsupported))
    except (UndecodableResponse, ConnectionClosed) as exc:  # no range to retry at
        judge = "kip511.apiversions.unsupported_version.fallback"  # that case fails it
        what = "connection closed" if isinstance(exc, ConnectionClosed) else "undecodable"
        check.precondition(f"the fallback answer decodes ({judge} judges it)", "a v0 body",
                           f"{what}: {exc}", False, needs=judge)  # fmt: skip
        raise
    response = present(response, "the answer request_raw returns when it expects one")
    entry = next((k for k in response.body.api_keys if k.api_key == API_VERSIONS), None)
    check.require("fallback lists ApiVersions", True, entry is not None)
    entry = present(entry, "ApiVersions' entry, required above")
    retry = await conn.request(
        ApiVersionsRequest(client_software_name="kconform", client_software_version="1.0"),
        entry.max_version,
    )
    check.expect(f"retry at advertised max v{entry.max_version}", 0, retry.body.error_code)


@case(
    "kip714.apiversions.telemetry_advertised",
    rules=["kip714.apiversions.telemetry_advertised"],
    title="A broker with telemetry enabled advertises GetTelemetrySubscriptions and PushTelemetry",
    spec="KIP-714 Client API; §B.4 (advertised iff a ClientTelemetry receiver is configured)",
    level=Level.MUST,
)
async def test_telemetry_advertised(target: BrokerTarget, check: Check) -> None:
    # judged from what it advertises, not from the TELEMETRY capability (which needs both): a
    # broker listing one of the two keys without the other is the deviation this case exists for
    _, response = await api_versions(check, 0)
    ranges = {k.api_key: (k.min_version, k.max_version) for k in response.body.api_keys}
    if 71 not in ranges and 72 not in ranges:
        raise Unsupported(f"{target.name} advertises neither GetTelemetrySubscriptions (71) nor "
                          "PushTelemetry (72): no telemetry receiver to judge")  # fmt: skip
    check.expect("GetTelemetrySubscriptions (71) advertised", True, 71 in ranges)
    check.expect("PushTelemetry (72) advertised", True, 72 in ranges)
    check.expect("71 covers v0", True, 71 in ranges and ranges[71][0] == 0)
    check.expect("72 covers v0", True, 72 in ranges and ranges[72][0] == 0)


@case(
    "kip511.apiversions.response_header_v0",
    rules=["kip511.apiversions.response_header_v0"],
    title="ApiVersions v3 responses use response header v0 (no tag buffer)",
    spec="KIP-511 (ApiVersionsResponse keeps header v0); §A.3",
    level=Level.MUST,
)
async def test_response_header_v0(target: BrokerTarget, check: Check) -> None:
    await needs_v3(check)
    _, response = await api_versions(check, 3)
    # after the correlation id comes the int16 ErrorCode directly; a v1 header would put a
    # tag-count byte first and the body would not decode (the connection checks both)
    check.expect("v3 response decodes with header v0", 0, response.body.error_code)
    check.expect("raw bytes 4-6 are the ErrorCode", 0, int.from_bytes(response.raw[4:6], "big"))
    check.expect(
        "decoded as ApiVersionsResponse", True, isinstance(response.body, ApiVersionsResponse)
    )
