"""KIP-714 CLIENT_METRICS config resources on the broker: valid values, describe, list, delete.

Spec: KIP-714 "Client metrics configuration" (`metrics`; `interval.ms` "minimum: 100, maximum:
3600000"; `match`, "A list of key-value pairs. The valid keys are: ..."), "Tools / kafka-
configs.sh" ("the allowed configs are: interval.ms, metrics and match"), "kafka-client-metrics.sh"
(describe, list, delete by deleting every key); §D (the Apache 4.1 error table).

Levels: the KIP defines the valid values, so a broker that stores anything else breaks it (MUST:
rejected, and nothing applied). The KIP names no error code for any of these, so the code Apache
answers (§D) is SHOULD, in its own `.error_code` case. Every request goes over the case's own
connection, through AlterConfigs and IncrementalAlterConfigs alike, so the wire log shows the per-
resource error codes the verdict rests on.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kconform.codecs.errors import error_name
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.targets.admin import SUBSCRIPTION_KEYS
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import (
    eventually,
    get,
)
from kconform.suites.broker.helpers_configs import (
    ADMIN,
    BASE,
    CONFIGS,
    CONSUMER,
    PRODUCER,
    ConfigAdmin,
    _interval_is,
    config_admin,
    delete_later,
    normalized,
)

# --- valid values, describe, list, delete ------------------------------------------------------


@case(
    "kip714.configs.interval.bounds_accepted",
    rules=["kip714.configs.interval_range"],
    title="interval.ms 100 and 3600000 (the bounds) are accepted by both alter APIs",
    spec=f"{CONFIGS}: interval.ms 'minimum: 100, maximum: 3600000 (1 hour)'",
    level=Level.MUST,
    requires=ADMIN,
)
async def test_interval_bounds_accepted(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    name = check.unique("sub")
    delete_later(check, admin, name)
    steps: list[tuple[Any, str]] = [(admin.incremental, "100"), (admin.incremental, "3600000"),
                                    (admin.alter, "100"), (admin.alter, "3600000")]  # fmt: skip
    for alter, interval in steps:
        api = "IncrementalAlterConfigs" if alter == admin.incremental else "AlterConfigs"
        code, _ = await alter(name, {**BASE, "interval.ms": interval})
        check.expect(f"{api} interval.ms={interval}", "NONE", error_name(code))
        described = await eventually(
            lambda: admin.described(name),
            functools.partial(_interval_is, int(interval)),
        )
        check.expect(
            f"described after {api}", int(interval), normalized(described).get("interval.ms")
        )


async def described_as(admin: ConfigAdmin, name: str, want: Mapping[str, str]) -> dict[str, Any]:
    """What DescribeConfigs reports once the change `want` has reached the broker."""
    described = await eventually(
        lambda: admin.described(name), lambda d: normalized(d) == normalized(want)
    )
    return normalized(described)


@case(
    "kip714.configs.describe_reflects_changes",
    rules=["kip714.configs.admin_visible"],
    title="DescribeConfigs returns the metrics, interval.ms and match set, after every change",
    spec="KIP-714 'kafka-client-metrics.sh' (--describe --name); §D (DescribeConfigs)",
    level=Level.MUST,
    requires=ADMIN,
)
async def test_describe_reflects_changes(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    name = check.unique("sub")
    delete_later(check, admin, name)
    created = {
        "metrics": f"{PRODUCER},{CONSUMER}",
        "interval.ms": "15000",
        "match": "client_id=kconform-.*,client_software_name=apache-kafka-java",
    }
    code, _ = await admin.incremental(name, created)
    check.require("IncrementalAlterConfigs create", "NONE", error_name(code))
    check.expect("described after create", normalized(created),
                 await described_as(admin, name, created))  # fmt: skip
    code, _ = await admin.incremental(name, {"interval.ms": "60000", "match": None})
    check.expect("IncrementalAlterConfigs SET interval.ms, DELETE match", "NONE", error_name(code))
    altered = {"metrics": created["metrics"], "interval.ms": "60000"}
    check.expect("described after alter", normalized(altered),
                 await described_as(admin, name, altered))  # fmt: skip
    replaced = {"metrics": CONSUMER, "match": "client_source_port=1234"}
    code, _ = await admin.alter(name, replaced)
    check.expect("AlterConfigs replace", "NONE", error_name(code))
    check.expect("described after AlterConfigs: exactly the keys given", normalized(replaced),
                 await described_as(admin, name, replaced))  # fmt: skip


@case(
    "kip714.configs.describe_defaults",
    rules=["kip714.configs.describe_defaults"],
    title="DescribeConfigs lists interval.ms and match at their defaults when only metrics is set",
    spec="KIP-714 'kafka-client-metrics.sh' (--describe); KAFKA-17516; §D (DescribeConfigs)",
    level=Level.SHOULD,
    requires=ADMIN,
)
async def test_describe_defaults(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    name = check.unique("sub")
    delete_later(check, admin, name)
    code, _ = await admin.incremental(name, BASE)
    check.require("IncrementalAlterConfigs create (metrics only)", "NONE", error_name(code))
    # The change reaches a broker asynchronously, and until it has the broker describes the
    # resource with every key at its default: wait until `metrics` shows as set (3.7-4.0 list
    # only the set keys, so there it shows at once); then judge what else is marked default
    described = await eventually(
        lambda: admin.described_sources(name), lambda d: d.get("metrics", ("", True))[1] is False
    )
    check.expect("keys described", sorted(SUBSCRIPTION_KEYS), sorted(described))
    check.expect("metrics: set, not marked default", False, described["metrics"][1])
    check.expect("interval.ms: the default 300000, marked default", ("300000", True),
                 described.get("interval.ms"))  # fmt: skip
    check.expect("match: marked default", True, described.get("match", (None, False))[1])


async def listed_as(admin: ConfigAdmin, name: str, present: bool) -> bool:
    """Whether `name` is listed, once the broker shows it as `present` (or the wait ends)."""
    listed = await eventually(admin.listed, lambda names: (name in names) == present)
    return name in listed


@case(
    "kip714.configs.list_reflects_lifecycle",
    rules=["kip714.configs.admin_visible"],
    title="The subscription list shows a subscription once created, not once its keys are deleted",
    spec="KIP-714 'kafka-client-metrics.sh' (--list, --delete); §D (ListConfigResources v1 / "
    "ListClientMetricsResources v0, deletion)",
    level=Level.MUST,
    requires=ADMIN,
)
async def test_list_reflects_lifecycle(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    name, other = check.unique("sub"), check.unique("other")
    delete_later(check, admin, name)
    delete_later(check, admin, other)
    check.expect("not listed before creation", False, name in await admin.listed())
    code, _ = await admin.incremental(name, {**BASE, "interval.ms": "1000"})
    check.require("IncrementalAlterConfigs create", "NONE", error_name(code))
    check.expect("listed after IncrementalAlterConfigs", True, await listed_as(admin, name, True))
    code, _ = await admin.alter(other, BASE)
    check.require("AlterConfigs create", "NONE", error_name(code))
    check.expect("listed after AlterConfigs", True, await listed_as(admin, other, True))
    code, _ = await admin.incremental(name, {"interval.ms": None})
    check.expect("DELETE one key", "NONE", error_name(code))
    check.expect("still listed with a key left", True, name in await admin.listed())
    code, _ = await admin.incremental(name, dict.fromkeys(SUBSCRIPTION_KEYS))
    check.expect("DELETE every key", "NONE", error_name(code))
    check.expect("not listed once every key is deleted", False, await listed_as(admin, name, False))
    check.expect("the other subscription is still listed", True, other in await admin.listed())
    check.expect("nothing described as set", {}, await admin.described(name))


@case(
    "kip714.configs.validate_only_not_applied",
    rules=["kip714.configs.validate_only"],
    title="ValidateOnly validates (an invalid value is still rejected) but changes nothing",
    spec="AlterConfigs/IncrementalAlterConfigs ValidateOnly ('validate the request, but not change "
    "the configurations'); KIP-714 'Metrics subscription' (the standard Admin API)",
    level=Level.MUST,
    requires=ADMIN,
)
async def test_validate_only_not_applied(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    name = check.unique("sub")
    delete_later(check, admin, name)
    valid, invalid = {**BASE, "interval.ms": "1000"}, {**BASE, "interval.ms": "99"}
    for alter, api in (
        (admin.incremental, "IncrementalAlterConfigs"),
        (admin.alter, "AlterConfigs"),
    ):
        code, _ = await alter(name, valid, validate_only=True)
        check.expect(f"{api} ValidateOnly, valid value", "NONE", error_name(code))
        code, _ = await alter(name, invalid, validate_only=True)
        check.expect(f"{api} ValidateOnly, invalid value", "an error", error_name(code), code != 0)
    check.expect("not listed after ValidateOnly", False, name in await admin.listed())
    check.expect("nothing described as set", {}, await admin.described(name))
    code, _ = await admin.incremental(name, valid)
    check.require("subscription created", "NONE", error_name(code))
    check.require("subscription listed", True, await listed_as(admin, name, True))
    code, _ = await admin.incremental(name, {"interval.ms": "2000"}, validate_only=True)
    check.expect("ValidateOnly change answered", "NONE", error_name(code))
    code, _ = await admin.incremental(name, dict.fromkeys(SUBSCRIPTION_KEYS), validate_only=True)
    check.expect("ValidateOnly delete answered", "NONE", error_name(code))
    check.expect("still listed", True, name in await admin.listed())
    check.expect("configs unchanged", normalized(valid), normalized(await admin.described(name)))


@case(
    "kip714.configs.subscription_applies_until_deleted",
    rules=["kip714.configs.applies_until_deleted", "kip714.get.no_subscription"],
    title="A subscription reaches the clients it matches, and stops once all its keys are deleted",
    spec="KIP-714 'Metrics subscription' (matching clients get its metrics and interval); 'Client "
    "metrics configuration' ('An empty list means no metrics subscribed'); §C.2, D (deletion)",
    level=Level.MUST,
    requires=[Capability.CLIENT_METRICS_ADMIN, Capability.TELEMETRY],
)
async def test_subscription_applies_until_deleted(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    name, client_id = check.unique("sub"), check.unique("client")
    delete_later(check, admin, name)
    metric = f"{PRODUCER}record.queue.time."
    code, _ = await admin.incremental(
        name, {"metrics": metric, "interval.ms": "1234", "match": f"client_id={client_id}"}
    )
    check.require("subscription created", "NONE", error_name(code))

    async def fresh_get() -> Any:  # a new connection and instance: never throttled
        return await get(await check.connect(client_id=client_id))

    response = await eventually(fresh_get, lambda r: list(r.requested_metrics) == [metric])
    check.expect("Get ErrorCode", 0, response.error_code)
    check.expect("RequestedMetrics", [metric], list(response.requested_metrics))
    check.expect("PushIntervalMs", 1234, response.push_interval_ms)
    code, _ = await admin.incremental(name, dict.fromkeys(SUBSCRIPTION_KEYS))
    check.require("every key deleted", "NONE", error_name(code))
    response = await eventually(fresh_get, lambda r: not r.requested_metrics)
    check.expect("Get ErrorCode after deletion", 0, response.error_code)
    check.expect("RequestedMetrics after deletion", [], list(response.requested_metrics))
