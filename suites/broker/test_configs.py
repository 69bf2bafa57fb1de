"""KIP-714 CLIENT_METRICS config resources on the broker: validation, describe, list, delete.

Spec: KIP-714 "Client metrics configuration" (`metrics`; `interval.ms` "minimum: 100, maximum:
3600000"; `match`, "A list of key-value pairs. The valid keys are: ..."), "Tools / kafka-configs.sh"
("the allowed configs are: interval.ms, metrics and match"), "kafka-client-metrics.sh" (describe,
list, delete by deleting every key); §D (the Apache 4.1 error table).

Levels: the KIP defines the valid values, so a broker that stores anything else breaks it (MUST:
rejected, and nothing applied). The KIP names no error code for any of these, so the code Apache
answers (§D) is SHOULD, in its own `.error_code` case. Every request goes over the case's own
connection, through AlterConfigs and IncrementalAlterConfigs alike, so the wire log shows the
per-resource error codes the verdict rests on.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kconform.codecs.errors import ErrorCode, error_name
from kconform.codecs.messages import (
    AlterConfigsRequest,
    ApiVersionsRequest,
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
)
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.admin import (
    KEY_DESCRIBE_CONFIGS,
    KEY_INCREMENTAL_ALTER,
    ApiRange,
    ClusterAdmin,
    pick_version,
)
from kconform.fixtures.targets.base import BrokerTarget, Capability
from kconform.suites.broker.helpers import answer, eventually, get

CLIENT_METRICS = 16  # ConfigResource.Type.CLIENT_METRICS (§D)
KEY_ALTER_CONFIGS = 33
SET, DELETE = 0, 1
DEFAULT_CONFIG = 5  # DescribeConfigsResponse ConfigSource: a default, not something set
SUBSCRIPTION_KEYS = ("metrics", "interval.ms", "match")
LIST_KEYS = frozenset({"metrics", "match"})
PRODUCER = "org.apache.kafka.producer."
CONSUMER = "org.apache.kafka.consumer."

CONFIGS = "KIP-714 'Client metrics configuration'; §D"
ADMIN = [Capability.CLIENT_METRICS_ADMIN]


# --- the config APIs over the case's connection ------------------------------------------------


@dataclass
class ConfigAdmin:
    """CLIENT_METRICS requests on one logged connection, answering per-resource error codes."""

    connection: KafkaConnection
    apis: dict[int, ApiRange]

    def _version(self, api_key: int, request: Any) -> int:
        return pick_version(self.apis, api_key, list(request.versions()))

    async def incremental(
        self,
        name: str,
        changes: Mapping[str, str | None],
        *,
        validate_only: bool = False,
        resource_type: int = CLIENT_METRICS,
    ) -> tuple[int, str | None]:
        """IncrementalAlterConfigs: SET each key with a value, DELETE each key mapped to None."""
        req = IncrementalAlterConfigsRequest
        configs = [
            req.AlterableConfig(name=k, config_operation=SET if v is not None else DELETE, value=v)
            for k, v in changes.items()
        ]
        body = req(
            resources=[req.AlterConfigsResource(
                resource_type=resource_type, resource_name=name, configs=configs
            )],
            validate_only=validate_only,
        )  # fmt: skip
        version = self._version(KEY_INCREMENTAL_ALTER, req)
        response = (await self.connection.request(body, version)).body
        (result,) = response.responses
        return int(result.error_code), result.error_message

    async def alter(
        self, name: str, configs: Mapping[str, str], *, validate_only: bool = False
    ) -> tuple[int, str | None]:
        """AlterConfigs: the resource's configs become exactly `configs`."""
        req = AlterConfigsRequest
        body = req(
            resources=[req.AlterConfigsResource(
                resource_type=CLIENT_METRICS, resource_name=name,
                configs=[req.AlterableConfig(name=k, value=v) for k, v in configs.items()],
            )],
            validate_only=validate_only,
        )  # fmt: skip
        response = (await self.connection.request(body, self._version(KEY_ALTER_CONFIGS, req))).body
        (result,) = response.responses
        return int(result.error_code), result.error_message

    async def described(self, name: str) -> dict[str, str | None]:
        """The keys DescribeConfigs reports as set (any source but DEFAULT_CONFIG)."""
        req = DescribeConfigsRequest
        body = req(
            resources=[req.DescribeConfigsResource(
                resource_type=CLIENT_METRICS, resource_name=name, configuration_keys=None
            )]
        )  # fmt: skip
        version = self._version(KEY_DESCRIBE_CONFIGS, req)
        response = (await self.connection.request(body, version)).body
        (result,) = response.results
        if result.error_code:
            raise AssertionError(
                f"DescribeConfigs {name!r} answered {error_name(result.error_code)}"
            )
        return {
            c.name: c.value
            for c in result.configs
            if (c.config_source != DEFAULT_CONFIG if version >= 1 else not c.is_default)
        }

    async def listed(self) -> list[str]:
        """CLIENT_METRICS names: ListConfigResources v1, else v0 (ListClientMetricsResources)."""
        return await ClusterAdmin(self.connection, self.apis).list_subscriptions()


async def config_admin(check: Check) -> ConfigAdmin:
    connection = await check.connect()
    response = await connection.request(ApiVersionsRequest(), 0)
    apis = {k.api_key: ApiRange(k.min_version, k.max_version) for k in response.body.api_keys}
    return ConfigAdmin(connection, apis)


def delete_later(check: Check, admin: ConfigAdmin, name: str) -> None:
    """Remove the subscription after the case, whatever it left behind."""

    async def cleanup() -> None:
        if not admin.connection.closed:
            await admin.incremental(name, dict.fromkeys(SUBSCRIPTION_KEYS))

    check.defer(cleanup)


def _interval_is(want: int, described: Mapping[str, str | None]) -> bool:
    return bool(normalized(described).get("interval.ms") == want)


def normalized(configs: Mapping[str, str | None]) -> dict[str, Any]:
    """Values as the KIP defines them: lists with whitespace ignored, interval as a number."""
    out: dict[str, Any] = {}
    for key, value in configs.items():
        if key in LIST_KEYS:
            out[key] = [p.strip() for p in (value or "").split(",") if p.strip()]
        elif key == "interval.ms" and value is not None and value.strip().lstrip("-").isdigit():
            out[key] = int(value)
        else:
            out[key] = value
    return out


# --- invalid values: rejected (MUST), with Apache's code (SHOULD) -------------------------------


@dataclass(frozen=True)
class Invalid:
    title: str
    configs: Mapping[str, str]
    apache: ErrorCode  # §D, Kafka 4.1
    why: str  # the KIP text that makes the value invalid
    name: str | None = None  # a fixed resource name instead of a unique one
    code_note: str = ""


BASE = {"metrics": PRODUCER}
INVALID = {
    "interval_below_min": Invalid(
        "interval.ms 99 (below the minimum 100)", {**BASE, "interval.ms": "99"},
        ErrorCode.INVALID_REQUEST, "interval.ms 'minimum: 100'",
    ),
    "interval_above_max": Invalid(
        "interval.ms 3600001 (above the maximum 3600000)", {**BASE, "interval.ms": "3600001"},
        ErrorCode.INVALID_REQUEST, "interval.ms 'maximum: 3600000 (1 hour)'",
    ),
    "interval_not_integer": Invalid(
        "interval.ms 'bbb' (not an integer)", {**BASE, "interval.ms": "bbb"},
        ErrorCode.INVALID_CONFIG, "interval.ms is 'The client metrics push interval in ms'",
        code_note="Apache 4.0+ (KAFKA-17525); 3.7-3.9 answer UNKNOWN_SERVER_ERROR",
    ),
    "unknown_key": Invalid(
        "an unknown key", {**BASE, "colour": "red"},
        ErrorCode.INVALID_REQUEST, "'the allowed configs are: interval.ms, metrics and match'",
    ),
    "match_without_equals": Invalid(
        "a match entry without '='", {**BASE, "match": "client_id"},
        ErrorCode.INVALID_CONFIG, "match is 'A list of key-value pairs'",
    ),
    "match_unknown_selector": Invalid(
        "a match selector the KIP does not list", {**BASE, "match": "client_colour=red"},
        ErrorCode.INVALID_CONFIG, "match: 'The valid keys are: client_instance_id, ...'",
    ),
    "match_invalid_regex": Invalid(
        "a match value that is not a regular expression", {**BASE, "match": "client_id=(x"},
        ErrorCode.INVALID_CONFIG, "match: 'The values are anchored regular expressions'",
    ),
    "empty_name": Invalid(
        "an empty resource name", BASE, ErrorCode.INVALID_REQUEST,
        "'The ConfigResource has a name'", name="",
    ),
}  # fmt: skip


async def both_apis(
    check: Check, admin: ConfigAdmin, name: str, configs: Mapping[str, str]
) -> list[tuple[str, int, str | None]]:
    """Send `configs` through IncrementalAlterConfigs, then AlterConfigs; each one's answer."""
    if name:
        delete_later(check, admin, name)
    answers = [("IncrementalAlterConfigs", *await admin.incremental(name, configs))]
    answers.append(("AlterConfigs", *await admin.alter(name, configs)))
    return answers


REJECTED_BY = {
    "interval_below_min": "kip714.configs.interval_range",
    "interval_above_max": "kip714.configs.interval_range",
    "interval_not_integer": "kip714.configs.interval_integer",
    "unknown_key": "kip714.configs.known_keys",
    "match_without_equals": "kip714.configs.match_syntax",
    "match_unknown_selector": "kip714.configs.match_syntax",
    "match_invalid_regex": "kip714.configs.match_syntax",
    "empty_name": "kip714.configs.name_required",
}
"""The rule that makes each invalid change invalid."""


def _rejected_case(variant: str, spec: Invalid) -> Any:
    @case(
        f"kip714.configs.invalid.{variant}.rejected",
        rules=[REJECTED_BY[variant]],
        title=f"CLIENT_METRICS with {spec.title} is rejected and not applied (both alter APIs)",
        spec=f"{CONFIGS}: {spec.why}",
        level=Level.MUST,
        requires=ADMIN,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        admin = await config_admin(check)
        name = check.unique("sub") if spec.name is None else spec.name
        for api, code, message in await both_apis(check, admin, name, spec.configs):
            check.expect(f"{api} rejects it", "an error code", answer(code, message), code != 0)
        check.expect("no subscription was created", False, name in await admin.listed())

    test.__name__ = f"test_invalid_{variant}_rejected"
    return test


def _code_case(variant: str, spec: Invalid) -> Any:
    note = f" ({spec.code_note})" if spec.code_note else ""

    @case(
        f"kip714.configs.invalid.{variant}.error_code",
        rules=["kip714.configs.error_code"],
        title=f"CLIENT_METRICS with {spec.title} is answered {spec.apache.name}",
        spec=f"§D (Apache 4.1){note}; the KIP names no code, so SHOULD",
        level=Level.SHOULD,
        requires=ADMIN,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        admin = await config_admin(check)
        name = check.unique("sub") if spec.name is None else spec.name
        for api, code, message in await both_apis(check, admin, name, spec.configs):
            check.expect(f"{api} ErrorCode", spec.apache.name, answer(code, message),
                         code == spec.apache)  # fmt: skip

    test.__name__ = f"test_invalid_{variant}_error_code"
    return test


for _variant, _spec in INVALID.items():
    globals()[f"test_invalid_{_variant}_rejected"] = _rejected_case(_variant, _spec)
    globals()[f"test_invalid_{_variant}_error_code"] = _code_case(_variant, _spec)


@case(
    "kip714.configs.invalid.change_keeps_previous",
    rules=["kip714.configs.interval_range", "kip714.configs.interval_integer"],
    title="A rejected change to an existing subscription leaves its configs as they were",
    spec=f"{CONFIGS}: interval.ms 'minimum: 100, maximum: 3600000'",
    level=Level.MUST,
    requires=ADMIN,
)
async def test_invalid_change_keeps_previous(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    name = check.unique("sub")
    delete_later(check, admin, name)
    configs = {"metrics": PRODUCER, "interval.ms": "1000"}
    code, _ = await admin.incremental(name, configs)
    check.require("valid subscription created", "NONE", error_name(code))
    for interval in ("99", "3600001", "bbb"):
        code, _ = await admin.incremental(name, {"interval.ms": interval})
        check.expect(
            f"SET interval.ms={interval} rejected", "an error", error_name(code), code != 0
        )
    code, _ = await admin.alter(name, {"metrics": CONSUMER, "interval.ms": "50"})
    check.expect("AlterConfigs interval.ms=50 rejected", "an error", error_name(code), code != 0)
    described = await eventually(lambda: admin.described(name), lambda d: "metrics" in d)
    check.expect("configs unchanged", normalized(configs), normalized(described))


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
