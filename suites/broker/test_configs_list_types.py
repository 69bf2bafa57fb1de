"""ListConfigResources v1 with explicit ResourceTypes (kip714.configs.list.resource_types).

Spec: KIP-1142 made KIP-714's ListClientMetricsResources (key 74 v0, CLIENT_METRICS only) the
ListConfigResources API: v1 adds ResourceTypes, "If the list is empty, it uses default supported
config resource types" (Apache's ListConfigResourcesRequest.json). The other config cases list
CLIENT_METRICS only (`ConfigAdmin.listed`), so Apache's handling of an empty list, of the other
types and of a type it cannot list (KafkaApis.handleListConfigResources) was never reached
(docs/coverage.md). A broker that advertises key 74 up to v0 only has no ResourceTypes: unsupported.
"""

from __future__ import annotations

from kconform.codecs.errors import error_name
from kconform.codecs.messages import ListConfigResourcesRequest
from kconform.codecs.schema import Message
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.errors import Unsupported
from kconform.fixtures.targets.admin import KEY_LIST_CONFIG_RESOURCES
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.broker.helpers import eventually
from kconform.suites.broker.helpers_configs import (
    ADMIN,
    BASE,
    ConfigAdmin,
    config_admin,
    delete_later,
)

# ConfigResource.Type ids (clients/.../config/ConfigResource.java)
UNKNOWN, TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 0, 2, 4, 8, 16, 32
NOT_CLIENT_METRICS = [TOPIC, BROKER, BROKER_LOGGER, GROUP]
SPEC = (
    "KIP-1142 / Apache ListConfigResourcesRequest.json: ResourceTypes 'If the list is empty, it "
    "uses default supported config resource types'; KIP-714 'kafka-client-metrics.sh' (--list)"
)


async def list_types(admin: ConfigAdmin, types: list[int]) -> Message:
    """ListConfigResources v1 asking for `types`, on the case's logged connection."""
    request = ListConfigResourcesRequest(resource_types=types)
    return (await admin.connection.request(request, 1)).body


def listed(response: Message) -> set[tuple[str, int]]:
    return {(r.resource_name, r.resource_type) for r in response.config_resources}


@case(
    "kip714.configs.list.resource_types",
    rules=["kip714.configs.list_types"],
    title="ListConfigResources v1 lists the types asked for, every type for none, refuses UNKNOWN",
    spec=SPEC,
    level=Level.MUST,
    requires=ADMIN,
)
async def test_list_resource_types(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    advertised = admin.apis.get(KEY_LIST_CONFIG_RESOURCES)
    check.observe("key 74 advertised", None if advertised is None else
                  f"v{advertised.min_version}-v{advertised.max_version}")  # fmt: skip
    if advertised is None or advertised.max_version < 1:
        raise Unsupported(f"{target.name} advertises no ListConfigResources v1: no ResourceTypes")
    name = check.unique("sub")
    delete_later(check, admin, name)
    code, _ = await admin.incremental(name, BASE)
    check.require("IncrementalAlterConfigs create", "NONE", error_name(code))
    ours = (name, CLIENT_METRICS)
    every = await eventually(lambda: list_types(admin, []), lambda r: ours in listed(r))
    check.expect("empty ResourceTypes: ErrorCode", "NONE", error_name(every.error_code))
    check.expect("empty ResourceTypes lists the subscription (a default type)", True,
                 ours in listed(every))  # fmt: skip
    only = await list_types(admin, [CLIENT_METRICS])
    check.expect("[CLIENT_METRICS]: the subscription listed", True, ours in listed(only))
    check.expect("[CLIENT_METRICS]: other types listed", [],
                 sorted({t for _, t in listed(only)} - {CLIENT_METRICS}))  # fmt: skip
    others = await list_types(admin, NOT_CLIENT_METRICS)
    check.expect("[TOPIC, BROKER, BROKER_LOGGER, GROUP]: ErrorCode", "NONE",
                 error_name(others.error_code))  # fmt: skip
    check.expect("[TOPIC, BROKER, BROKER_LOGGER, GROUP]: types listed beyond those asked", [],
                 sorted({t for _, t in listed(others)} - set(NOT_CLIENT_METRICS)))  # fmt: skip
    check.observe("[TOPIC, BROKER, BROKER_LOGGER, GROUP]: listed", sorted(listed(others)))
    refused = await list_types(admin, [CLIENT_METRICS, UNKNOWN])
    check.observe("[CLIENT_METRICS, UNKNOWN (0)]: ErrorCode", error_name(refused.error_code))
    check.expect("[CLIENT_METRICS, UNKNOWN (0)]: refused with an error", True,
                 refused.error_code != 0 and not refused.config_resources)  # fmt: skip
