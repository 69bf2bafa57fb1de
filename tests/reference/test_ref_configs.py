"""§D: CLIENT_METRICS validation, alter/delete semantics, describe and list; broker configs."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import (
    AlterConfigsRequest,
    DescribeConfigsRequest,
    ListClientMetricsResourcesRequest,
    ListConfigResourcesRequest,
)
from kconform.codecs.schema import Message
from kconform.fixtures.reference import ReferenceBroker, RequestContext
from kconform.fixtures.reference.scenario import BACKEND_APIS, Session

E = ErrorCode
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
CM, BROKER = 16, 4


def session() -> Session:
    broker = ReferenceBroker(BACKEND_APIS, rng=random.Random(9), node_id=1)
    return Session(broker, RequestContext("admin", listener_node_id=1))


VALIDATION = [
    pytest.param("", {"metrics": "*"}, E.INVALID_REQUEST, "name can't be empty", id="empty name"),
    pytest.param("s", {"color": "red"}, E.INVALID_REQUEST, "Unknown client metrics", id="key"),
    pytest.param("s", {"interval.ms": "99"}, E.INVALID_REQUEST, "between 100", id="interval 99"),
    pytest.param("s", {"interval.ms": "3600001"}, E.INVALID_REQUEST, "between", id="3600001"),
    pytest.param("s", {"interval.ms": "100"}, E.NONE, None, id="interval 100"),
    pytest.param("s", {"interval.ms": "3600000"}, E.NONE, None, id="interval 3600000"),
    pytest.param("s", {"interval.ms": "bbb"}, E.INVALID_CONFIG, "INT", id="interval bbb"),
    pytest.param("s", {"match": "client_id"}, E.INVALID_CONFIG, "Illegal", id="match without ="),
    pytest.param("s", {"match": "client_id=a=b"}, E.INVALID_CONFIG, "Illegal", id="match two ="),
    pytest.param("s", {"match": "colour=red"}, E.INVALID_CONFIG, "Illegal", id="match selector"),
    pytest.param("s", {"match": "client_id=["}, E.INVALID_CONFIG, "Illegal", id="match regex"),
    pytest.param("s", {"match": " client_id = app.* , client_software_name=x"}, E.NONE, None,
                 id="match trimmed"),
    pytest.param("s", {"metrics": "anything, at all,*"}, E.NONE, None, id="metrics unchecked"),
    pytest.param("s", {"interval.ms": "bbb", "match": "x"}, E.INVALID_CONFIG, "interval.ms",
                 id="first broken rule wins"),
    pytest.param("s", {"color": "red", "interval.ms": "1"}, E.INVALID_REQUEST, "Unknown",
                 id="unknown key before interval"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "configs", "error", "message"), VALIDATION)
@pytest.mark.parametrize("api", ["incremental", "alter"])
def test_validation_table(
    name: str, configs: dict[str, str], error: ErrorCode, message: str | None, api: str
) -> None:
    s = session()
    if api == "incremental":
        code, text = s.alter(CM, name, {k: (SET, v) for k, v in configs.items()})
    else:
        code, text = alter_configs(s, CM, name, configs)
    assert code == error
    if message is None:
        assert text is None
        assert [sub.name for sub in s.broker.subscriptions()] == [name]
    else:
        assert text is not None and message in text
        assert s.broker.subscriptions() == []


def alter_configs(
    s: Session, resource_type: int, name: str, configs: Mapping[str, str | None], *,
    validate_only: bool = False, version: int = 2,
) -> tuple[int, str | None]:  # fmt: skip
    req = AlterConfigsRequest
    resource = req.AlterConfigsResource(
        resource_type=resource_type, resource_name=name,
        configs=[req.AlterableConfig(name=k, value=v) for k, v in configs.items()],
    )  # fmt: skip
    outcome = s.send(req(resources=[resource], validate_only=validate_only), version)
    assert outcome.response_body is not None
    (result,) = outcome.response_body.responses
    return int(result.error_code), result.error_message


def describe(
    s: Session, resource_type: int, name: str, version: int = 4, **options: Any
) -> Message:
    req = DescribeConfigsRequest
    keys = options.pop("keys", None)
    resource = req.DescribeConfigsResource(
        resource_type=resource_type, resource_name=name, configuration_keys=keys
    )
    outcome = s.send(req(resources=[resource], **options), version)
    assert outcome.response_body is not None
    (result,) = outcome.response_body.results
    return result


def values(result: Message) -> dict[str, tuple[str, int]]:
    return {c.name: (c.value, c.config_source) for c in result.configs}


# --- alter semantics -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2])
def test_validate_only_stores_nothing(version: int) -> None:
    s = session()
    assert alter_configs(s, CM, "s", {"metrics": "*"}, validate_only=True, version=version) == (
        0,
        None,
    )
    assert s.broker.subscriptions() == [] and s.get().requested_metrics == []


def test_deleting_every_key_removes_the_subscription() -> None:
    s = session()
    s.set_subscription("s", {"metrics": "*", "interval.ms": "1000"})
    assert s.get().requested_metrics == ["*"]
    s.delete_subscription("s", ("metrics",))
    assert [sub.interval_ms for sub in s.broker.subscriptions()] == [1000]
    s.delete_subscription("s", ("interval.ms",))
    assert s.broker.subscriptions() == []
    assert list_names(s) == []
    fresh = s.get()
    assert (fresh.requested_metrics, fresh.push_interval_ms) == ([], 300000)


def test_alter_configs_replaces_the_whole_resource() -> None:
    s = session()
    s.set_subscription("s", {"metrics": "*", "interval.ms": "1000"})
    assert alter_configs(s, CM, "s", {"metrics": "org.a."}) == (0, None)
    (sub,) = s.broker.subscriptions()
    assert (sub.metrics, sub.interval_ms) == (("org.a.",), 300000)
    assert alter_configs(s, CM, "s", {}) == (0, None)
    assert s.broker.subscriptions() == []


@pytest.mark.parametrize(
    ("ops", "error", "metrics"),
    [
        ({"metrics": (APPEND, "org.b.,org.a.")}, E.NONE, ("org.a.", "org.b.")),
        ({"metrics": (SUBTRACT, "org.a.")}, E.NONE, ()),
        ({"metrics": (SET, "org.c.")}, E.NONE, ("org.c.",)),
        ({"interval.ms": (APPEND, "5")}, E.INVALID_CONFIG, ("org.a.",)),
        ({"metrics": (7, "x")}, E.INVALID_REQUEST, ("org.a.",)),
    ],
)
def test_incremental_operations(
    ops: dict[str, tuple[int, str]], error: ErrorCode, metrics: tuple[str, ...]
) -> None:
    s = session()
    s.set_subscription("s", {"metrics": "org.a.", "interval.ms": "1000"})
    assert s.alter(CM, "s", ops)[0] == error
    (sub,) = s.broker.subscriptions()
    assert sub.metrics == metrics


def test_unknown_resource_type_fails_only_that_resource() -> None:
    s = session()
    req = AlterConfigsRequest
    resources = [
        req.AlterConfigsResource(resource_type=t, resource_name=n,
                                 configs=[req.AlterableConfig(name="metrics", value="*")])
        for t, n in [(2, "topic"), (CM, "s"), (99, "x")]
    ]  # fmt: skip
    body = s.send(req(resources=resources, validate_only=False), 1).response_body
    assert body is not None
    assert [r.error_code for r in body.responses] == [E.INVALID_REQUEST, E.NONE, E.INVALID_REQUEST]


def test_duplicate_keys_are_invalid_request() -> None:
    s = session()
    req = AlterConfigsRequest
    resource = req.AlterConfigsResource(
        resource_type=CM, resource_name="s",
        configs=[req.AlterableConfig(name="metrics", value="*")] * 2,
    )  # fmt: skip
    body = s.send(req(resources=[resource], validate_only=False), 1).response_body
    assert body is not None and body.responses[0].error_code == E.INVALID_REQUEST


# --- describe ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_describe_client_metrics_shows_set_keys_and_defaults(version: int) -> None:
    s = session()
    s.set_subscription("s", {"metrics": "org.a., org.b.", "interval.ms": " 1000 "})
    result = describe(s, CM, "s", version)
    assert result.error_code == E.NONE and result.resource_name == "s"
    shown = {c.name: c.value for c in result.configs}
    assert shown == {"metrics": "org.a.,org.b.", "interval.ms": "1000", "match": ""}
    if version >= 1:
        assert values(result)["metrics"][1] == 7 and values(result)["match"][1] == 5
    else:
        assert {c.name: c.is_default for c in result.configs}["match"] is True


def test_describe_unknown_subscription_is_all_defaults() -> None:
    result = describe(session(), CM, "nope")
    assert values(result) == {"interval.ms": ("300000", 5), "match": ("", 5), "metrics": ("", 5)}


def test_describe_filters_keys_and_adds_synonyms_and_docs() -> None:
    s = session()
    s.set_subscription("s", {"metrics": "*"})
    result = describe(s, CM, "s", keys=["metrics"], include_synonyms=True,
                      include_documentation=True)  # fmt: skip
    (entry,) = result.configs
    assert [(y.name, y.value, y.source) for y in entry.synonyms] == [("metrics", "*", 7)]
    assert entry.documentation and entry.config_type == 7


@pytest.mark.parametrize(("resource_type", "name"), [(CM, ""), (BROKER, "5"), (2, "topic")])
def test_describe_errors(resource_type: int, name: str) -> None:
    result = describe(session(), resource_type, name)
    assert result.error_code == E.INVALID_REQUEST and result.configs == []


# --- broker configs ------------------------------------------------------------------------------


def test_broker_config_precedence_and_sources() -> None:
    s = session()
    assert values(describe(s, BROKER, "1"))["telemetry.max.bytes"] == ("1048576", 5)
    assert describe(s, BROKER, "").configs == []
    assert s.alter(BROKER, "", {"telemetry.max.bytes": (SET, "5000")}) == (0, None)
    assert values(describe(s, BROKER, "1"))["telemetry.max.bytes"] == ("5000", 3)
    assert values(describe(s, BROKER, ""))["telemetry.max.bytes"] == ("5000", 3)
    assert s.alter(BROKER, "1", {"telemetry.max.bytes": (SET, "4000")}) == (0, None)
    assert values(describe(s, BROKER, "1"))["telemetry.max.bytes"] == ("4000", 2)
    assert s.get().telemetry_max_bytes == 4000
    assert s.alter(BROKER, "1", {"telemetry.max.bytes": (DELETE, None)}) == (0, None)
    assert s.get().telemetry_max_bytes == 5000


@pytest.mark.parametrize(
    ("name", "key", "value", "error"),
    [
        ("1", "telemetry.max.bytes", "0", E.INVALID_CONFIG),
        ("1", "telemetry.max.bytes", "abc", E.INVALID_CONFIG),
        ("1", "telemetry.max.bytes", "1", E.NONE),
        ("1", "metrics.verbosity", "not json", E.INVALID_CONFIG),
        ("1", "metrics.verbosity", '[{"level": "high", "filters": [{"topics": ["t"]}]}]', E.NONE),
        ("1", "log.retention.ms", "1", E.INVALID_REQUEST),
        ("7", "telemetry.max.bytes", "10", E.INVALID_REQUEST),
    ],
)
def test_broker_config_validation(name: str, key: str, value: str, error: ErrorCode) -> None:
    code, message = session().alter(BROKER, name, {key: (SET, value)})
    assert code == error and (message is None) == (error == E.NONE)


# --- list ----------------------------------------------------------------------------------------


def list_names(
    s: Session, version: int = 0, types: list[int] | None = None
) -> list[tuple[str, int]]:
    request = ListConfigResourcesRequest(resource_types=types or [])
    body = s.send(request, version).response_body
    assert body is not None and body.error_code == E.NONE
    return [(r.resource_name, r.resource_type) for r in body.config_resources]


def test_list_config_resources() -> None:
    s = session()
    s.set_subscription("b", {"metrics": "*"})
    s.set_subscription("a", {"interval.ms": "1000"})
    assert list_names(s) == [("a", 16), ("b", 16)]
    assert list_names(s, 1, [CM]) == [("a", 16), ("b", 16)]
    assert list_names(s, 1, [2]) == []
    s.alter(BROKER, "1", {"telemetry.max.bytes": (SET, "10")})
    assert list_names(s, 1) == [("a", 16), ("b", 16), ("1", 4)]
    legacy = s.send(ListClientMetricsResourcesRequest(), 0).response_body
    assert legacy is not None and [r.resource_name for r in legacy.config_resources] == ["a", "b"]
    unsupported = s.send(ListConfigResourcesRequest(resource_types=[99]), 1).response_body
    assert unsupported is not None and unsupported.error_code == E.UNSUPPORTED_VERSION
