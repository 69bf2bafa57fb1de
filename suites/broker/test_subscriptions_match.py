"""KIP-714 GetTelemetrySubscriptions on the broker: match selectors (kip714.subscriptions.match.*).

Spec: KIP-714 "Client metrics configuration", match; §C.6. Every case matches its subscriptions on
its own client id (or on an attribute only its own connection has) and uses its own client instance
ids.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping

from kconform.codecs.messages import ApiVersionsRequest
from kconform.codecs.subscription import java_host_address, kafka_uuid_str
from kconform.codecs.wire import ZERO_UUID
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.broker.helpers import (
    NONE,
    TELEMETRY_ADMIN,
    add_subscription,
    err,
    get,
    get_after_change,
)

MATCH = (
    "KIP-714 'Client metrics configuration', match: \"The values are anchored regular "
    'expressions."; §C.6 (full match)'
)


# --- match selectors ----------------------------------------------------------------------


async def check_selector(
    check: Check,
    conn: KafkaConnection,
    selector: str,
    value: str,
    partial: str,
    *,
    isolate: Mapping[str, str] | None = None,
    instance_id: uuid.UUID = ZERO_UUID,
) -> set[str]:
    """`selector=<value>` must match; `selector=<partial>` (a substring) must not. Returns the
    RequestedMetrics of the Get that judged it."""
    extra = dict(isolate or {})
    await add_subscription(check, {**extra, selector: re.escape(value)}, ("kconform.full.",))
    await add_subscription(check, {**extra, selector: re.escape(partial)}, ("kconform.partial.",))
    if instance_id == ZERO_UUID:
        response = await get(conn)
        check.require("Get", err(NONE), err(response.error_code))
    else:
        response = await get_after_change(check, conn, instance_id)
    metrics = set(response.requested_metrics)
    check.expect(f"{selector}={value!r} (full value) matches", True, "kconform.full." in metrics)
    check.expect(
        f"{selector}={partial!r} (part of the value) does not match",
        False,
        "kconform.partial." in metrics,
    )
    return metrics


@case(
    "kip714.subscriptions.match.client_instance_id",
    rules=["kip714.get.match.anchored"],
    title="match client_instance_id: the full Uuid string matches, a part of it does not",
    spec=f"{MATCH}; Kafka matches Uuid.toString() (URL-safe base64)",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_instance_id(target: BrokerTarget, check: Check) -> None:
    conn = await check.connect()
    first = await get(conn)
    check.require("first Get", err(NONE), err(first.error_code))
    instance_id = first.client_instance_id
    text = kafka_uuid_str(instance_id)
    # the KIP's own example uses the 8-4-4-4-12 form; Apache does not match it (recorded only)
    await add_subscription(check, {"client_instance_id": str(instance_id)}, ("kconform.hex.",))
    metrics = await check_selector(
        check, conn, "client_instance_id", text, text[2:], instance_id=instance_id
    )
    check.observe("the 8-4-4-4-12 form matches too", "kconform.hex." in metrics)


@case(
    "kip714.subscriptions.match.client_id",
    rules=["kip714.get.match.anchored"],
    title="match client_id: the full client id matches, a part of it does not",
    spec=MATCH,
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_id(target: BrokerTarget, check: Check) -> None:
    client_id = check.unique("client")
    conn = await check.connect(client_id=client_id)
    await check_selector(check, conn, "client_id", client_id, client_id[1:])


async def registered_connection(
    check: Check, name: str, version: str
) -> tuple[KafkaConnection, dict[str, str]]:
    """A connection whose client software is registered through ApiVersions v3 (KIP-511), and
    the match entry that keeps other clients out of the case's subscriptions."""
    client_id = check.unique("client")
    conn = await check.connect(client_id=client_id)
    body = ApiVersionsRequest(client_software_name=name, client_software_version=version)
    response = await conn.request(body, 3)
    check.require("ApiVersions v3 registration", err(NONE), err(response.body.error_code))
    return conn, {"client_id": re.escape(client_id)}


@case(
    "kip714.subscriptions.match.client_software_name",
    rules=["kip714.get.match.anchored"],
    title="match client_software_name (from ApiVersions v3): full name matches, a part does not",
    spec=f"{MATCH}; KIP-511 ClientSoftwareName",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_software_name(target: BrokerTarget, check: Check) -> None:
    name = f"kconform-sw-{uuid.uuid4().hex[:8]}"
    conn, isolate = await registered_connection(check, name, "1.0.0")
    await check_selector(check, conn, "client_software_name", name, name[1:], isolate=isolate)


@case(
    "kip714.subscriptions.match.client_software_version",
    rules=["kip714.get.match.anchored"],
    title="match client_software_version (from ApiVersions v3): full matches, a part does not",
    spec=f"{MATCH}; KIP-511 ClientSoftwareVersion",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_software_version(target: BrokerTarget, check: Check) -> None:
    version = f"9.8.7-{uuid.uuid4().hex[:8]}"
    conn, isolate = await registered_connection(check, "kconform-suite", version)
    await check_selector(
        check, conn, "client_software_version", version, version[:-1], isolate=isolate
    )


@case(
    "kip714.subscriptions.match.client_source_address",
    rules=["kip714.get.match.anchored"],
    title="match client_source_address: the full address matches, a prefix of it does not",
    spec=f"{MATCH}; the address as InetAddress.getHostAddress() renders it",
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_source_address(target: BrokerTarget, check: Check) -> None:
    client_id = check.unique("client")
    conn = await check.connect(client_id=client_id)
    address = java_host_address(conn.local_address[0])
    await check_selector(
        check, conn, "client_source_address", address, address[:-1],
        isolate={"client_id": re.escape(client_id)},
    )  # fmt: skip


@case(
    "kip714.subscriptions.match.client_source_port",
    rules=["kip714.get.match.anchored"],
    title="match client_source_port: the full port matches, a part of it does not",
    spec=MATCH,
    level=Level.MUST,
    requires=TELEMETRY_ADMIN,
)
async def test_match_client_source_port(target: BrokerTarget, check: Check) -> None:
    client_id = check.unique("client")
    conn = await check.connect(client_id=client_id)
    port = str(conn.local_address[1])
    await check_selector(
        check, conn, "client_source_port", port, port[1:],
        isolate={"client_id": re.escape(client_id)},
    )  # fmt: skip
