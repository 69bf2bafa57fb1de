"""What the CLIENT_METRICS config cases share: the config APIs over the case's own connection."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kconform.codecs.errors import error_name
from kconform.codecs.messages import (
    AlterConfigsRequest,
    ApiVersionsRequest,
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
)
from kconform.engine.check import Check
from kconform.errors import SubjectViolation
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.admin import (
    CLIENT_METRICS,  # ConfigResource.Type.CLIENT_METRICS (§D)
    DELETE,
    KEY_DESCRIBE_CONFIGS,
    KEY_INCREMENTAL_ALTER,
    SET,
    SUBSCRIPTION_KEYS,
    ApiRange,
    ClusterAdmin,
    pick_version,
)
from kconform.fixtures.targets.base import Capability

KEY_ALTER_CONFIGS = 33
DEFAULT_CONFIG = 5  # DescribeConfigsResponse ConfigSource: a default, not something set
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
        described = await self.described_sources(name)
        return {key: value for key, (value, default) in described.items() if not default}

    async def described_sources(self, name: str) -> dict[str, tuple[str | None, bool]]:
        """Every key DescribeConfigs reports: its value and whether it is a default
        (config_source DEFAULT_CONFIG from v1, is_default in v0)."""
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
            raise SubjectViolation(
                f"DescribeConfigs {name!r} answered {error_name(result.error_code)}"
            )
        return {
            c.name: (c.value, c.config_source == DEFAULT_CONFIG if version >= 1 else c.is_default)
            for c in result.configs
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


BASE = {"metrics": PRODUCER}
