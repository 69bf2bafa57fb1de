"""Telemetry of the clients beyond the producer and the classic consumer: the Admin client
(KIP-714's enable.metrics.push; KIP-1076 gave Apache's Admin client its telemetry and changed its
default), application metrics (KIP-1076's registerMetricForSubscription) and the share consumer
(KIP-932).

The `admin` and `share-consume` scenarios are run only on a driver whose `--describe` lists
them; on any other the driver refuses before starting and the case is `unsupported` (see
fixtures/clients). The application metric is asked for with the `kconform.app.metric`
instruction, only of a driver that lists it; a client of that driver without the API (a share
consumer before 4.1) answers `config_ignored`, and the case is `unsupported` with its reason.
"""

from __future__ import annotations

from kconform.codecs.otlp import OtlpDecodeError, flatten, parse_metrics_data
from kconform.engine.check import Check
from kconform.engine.model import Level, case
from kconform.errors import Unsupported
from kconform.fixtures.clients import ClientDriver, Scenario
from kconform.fixtures.clients.contract import APP_METRIC, APP_METRIC_CONFIG
from kconform.fixtures.clients.driver import missing_scenario
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.types import Shown
from kconform.suites.client.helpers import (
    TELEMETRY,
    TOPIC,
    Recording,
    produce,
    require_telemetry,
    run_client,
)
from kconform.suites.client.traffic import payload_or_error

ADMIN_SECONDS = 4.0  # an Admin client's first push comes 0.5-1.5 intervals after its Get
INTERVAL_MS = 500
SHARE_GROUP_HEARTBEAT, SHARE_FETCH = 76, 78
SHARE_SECONDS = 4.0
PUSH_ON = {"enable.metrics.push": "true"}
KIP714_CONFIG = "KIP-714 Client configuration (enable.metrics.push: 'true (default) - The client "
ADMIN_FACTS = (
    "Apache's Admin default: true in 3.7-3.9 (AdminClientConfig), false from 4.0.0 "
    "(KAFKA-17248, apache/kafka PR #17422)"
)


def pushed_metric_names(recording: Recording) -> set[str]:
    """The names of every metric the client's readable pushes carried."""
    names: set[str] = set()
    for push in recording.traffic.pushes:
        payload, _ = payload_or_error(push)
        if not payload:
            continue
        try:
            names.update(point.name for point in flatten(parse_metrics_data(payload)))
        except OtlpDecodeError:
            continue  # kip714.client.payload.valid_otlp's to judge
    return names


def _telemetry_counts(recording: Recording) -> str:
    traffic = recording.traffic
    return f"{len(traffic.gets)} GetTelemetrySubscriptions, {len(traffic.pushes)} PushTelemetry"


@case(
    "kip714.client.admin.pushes_when_enabled",
    rules=["kip714.client.admin.pushes_when_enabled"],
    title="An Admin client with enable.metrics.push=true Gets its subscription and pushes",
    spec=KIP714_CONFIG + "will push metrics if there are any matching subscriptions'); "
    "KIP-714 Admin API (Admin.clientInstanceId)",
    level=Level.MUST,
    requires=TELEMETRY,
    needs_shown=(Shown.ADMIN_CLIENT,),
    kind="client",
)
async def test_admin_pushes_when_enabled(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await run_client(
        check, client, client_target, Scenario.admin(seconds=ADMIN_SECONDS),
        interval_ms=INTERVAL_MS, config=PUSH_ON,
    )  # fmt: skip
    _require_described(check, recording)
    traffic = recording.traffic
    check.expect("GetTelemetrySubscriptions requests", ">= 1", len(traffic.gets),
                 ok=bool(traffic.gets))  # fmt: skip
    check.expect("PushTelemetry requests", ">= 1", len(traffic.pushes), ok=bool(traffic.pushes))


@case(
    "kip714.client.admin.opt_out",
    rules=["kip714.client.opt_out"],
    title="An Admin client with enable.metrics.push=false sends no telemetry request",
    spec="KIP-714 Client configuration (enable.metrics.push: 'false - The client will not push "
    "metrics')",
    level=Level.MUST,
    requires=TELEMETRY,
    needs_shown=(Shown.ADMIN_CLIENT,),
    kind="client",
)
async def test_admin_opt_out(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await run_client(
        check, client, client_target, Scenario.admin(seconds=ADMIN_SECONDS),
        interval_ms=INTERVAL_MS, config={"enable.metrics.push": "false"},
    )  # fmt: skip
    _require_described(check, recording)
    check.expect("telemetry requests", [], [str(e) for e in recording.traffic.telemetry][:10])


@case(
    "kip1076.client.admin.default",
    rules=["kip1076.client.admin.default"],
    title="What an Admin client does at its enable.metrics.push default (recorded)",
    spec=f"KIP-714 Client configuration (default true); KIP-1076; {ADMIN_FACTS}",
    level=Level.INFO,
    requires=TELEMETRY,
    needs_shown=(Shown.ADMIN_CLIENT,),
    kind="client",
)
async def test_admin_default(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await run_client(
        check, client, client_target, Scenario.admin(seconds=ADMIN_SECONDS),
        interval_ms=INTERVAL_MS,
    )  # fmt: skip
    _require_described(check, recording)
    traffic = recording.traffic
    check.observe(
        "an Admin client at its default enable.metrics.push",
        f"{'sends telemetry' if traffic.telemetry else 'sends no telemetry request'} "
        f"({_telemetry_counts(recording)}); {ADMIN_FACTS}",
    )


def _require_described(check: Check, recording: Recording) -> None:
    """The Admin client did what the scenario asks (it described the cluster at least once)."""
    described = recording.run.named("described")
    check.precondition("`described` events of the admin scenario", ">= 1", len(described),
                       ok=bool(described))  # fmt: skip


async def _app_metric_run(
    check: Check, client: ClientDriver, target: BrokerTarget, scenario: Scenario,
    config: dict[str, str],
) -> tuple[Recording, str]:  # fmt: skip
    """Run `scenario` asking the driver to register an application metric; the recording and
    the metric's name. Unsupported when the driver or this client of it has no such API."""
    if APP_METRIC_CONFIG not in client.instructions:
        raise Unsupported(
            f"{client.name}'s --describe does not list the {APP_METRIC_CONFIG} instruction: it "
            "cannot register an application metric (KIP-1076)"
        )
    name = check.unique("kconform-app")
    recording = await run_client(
        check, client, target, scenario, interval_ms=INTERVAL_MS,
        config={**config, APP_METRIC_CONFIG: name},
    )  # fmt: skip
    if not recording.run.named(APP_METRIC):
        ignored = [e.data.get("reason") for e in recording.run.named("config_ignored")
                   if e.data.get("key") == APP_METRIC_CONFIG]  # fmt: skip
        if ignored:
            raise Unsupported(f"this client cannot register an application metric: {ignored[0]}")
        check.precondition("the driver's app_metric event (the metric was registered)", "1", 0,
                           ok=False)  # fmt: skip
    return recording, name


def _expect_app_metric(check: Check, recording: Recording, name: str) -> None:
    require_telemetry(check, recording)
    tail = name.replace("-", ".")  # Java's naming: dashes become dots, group and prefix before
    names = pushed_metric_names(recording)
    found = sorted(n for n in names if n.endswith(tail) or n.endswith(name))
    check.observe("metric names pushed", sorted(names)[:60])
    check.expect(f"pushed metrics named ...{tail} (the registered {name!r})", ">= 1 name",
                 found, ok=bool(found))  # fmt: skip


@case(
    "kip1076.client.app_metric.producer",
    rules=["kip1076.client.app_metric_pushed"],
    title="A producer's registered application metric is in its pushes",
    spec="KIP-1076 (registerMetricForSubscription: 'sent as telemetry data to the broker')",
    level=Level.MUST,
    requires=TELEMETRY,
    needs_shown=(Shown.APP_METRIC,),
    kind="client",
)
async def test_app_metric_producer(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording, name = await _app_metric_run(check, client, client_target, produce(3.0), {})
    _expect_app_metric(check, recording, name)


@case(
    "kip1076.client.app_metric.admin",
    rules=["kip1076.client.app_metric_pushed"],
    title="An Admin client's registered application metric is in its pushes",
    spec="KIP-1076 (Admin.registerMetricForSubscription: 'sent as telemetry data to the "
    "broker'); enable.metrics.push=true",
    level=Level.MUST,
    requires=TELEMETRY,
    needs_shown=(Shown.ADMIN_CLIENT, Shown.APP_METRIC),
    kind="client",
)
async def test_app_metric_admin(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    if "admin" not in client.scenarios:
        raise Unsupported(missing_scenario(client, "admin"))
    recording, name = await _app_metric_run(
        check, client, client_target, Scenario.admin(seconds=ADMIN_SECONDS), PUSH_ON
    )
    _expect_app_metric(check, recording, name)


@case(
    "kip714.client.share_consumer.pushes",
    rules=["kip714.client.share_consumer.pushes"],
    title="A share consumer (KIP-932) Gets its subscription and pushes",
    spec=KIP714_CONFIG + "will push metrics if there are any matching subscriptions'); KIP-932",
    level=Level.MUST,
    requires=TELEMETRY,
    needs_shown=(Shown.SHARE_CONSUMER,),
    kind="client",
)
async def test_share_consumer_pushes(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    recording = await run_client(
        check, client, client_target, _share_scenario(check), interval_ms=INTERVAL_MS
    )
    _require_share_group_served(check, recording, client_target)
    traffic = recording.traffic
    check.expect("GetTelemetrySubscriptions requests", ">= 1", len(traffic.gets),
                 ok=bool(traffic.gets))  # fmt: skip
    check.expect("PushTelemetry requests", ">= 1", len(traffic.pushes), ok=bool(traffic.pushes))
    own = sorted(n for n in pushed_metric_names(recording) if ".share." in n)
    check.observe("share-consumer metrics (names with '.share.') in its pushes", own[:40])


def _share_scenario(check: Check) -> Scenario:
    return Scenario.share_consume(TOPIC, group=check.unique("share"), seconds=SHARE_SECONDS)


def _require_share_group_served(check: Check, recording: Recording, target: BrokerTarget) -> None:
    """Unsupported unless the broker served the share group: without a ShareFetch the client
    never had an assignment, and what it did then (a fatal heartbeat error on a broker without
    its ShareGroupHeartbeat version) says nothing of it as a share consumer."""
    frames = {key: _frames(recording, key) for key in (SHARE_GROUP_HEARTBEAT, SHARE_FETCH)}
    check.observe("share-group requests and answers (ShareGroupHeartbeat 76, ShareFetch 78)",
                  frames)  # fmt: skip
    if frames[SHARE_FETCH]["requests"]:
        return
    said = [str(e.data.get("error", "")) for e in recording.run.named("error")]
    sent = frames[SHARE_GROUP_HEARTBEAT]["requests"]
    heartbeats = (
        f"after {sent} ShareGroupHeartbeat requests"
        if sent
        else "the client sent no ShareGroupHeartbeat of a version the broker advertises"
    )
    raise Unsupported(
        f"{target.name} did not serve this client's share group (no ShareFetch: {heartbeats})"
        + (f"; the client said: {said[0][:300]}" if said else "")
    )  # fmt: skip


@case(
    "kip1076.client.app_metric.share_consumer",
    rules=["kip1076.client.app_metric_pushed"],
    title="A share consumer's registered application metric is in its pushes",
    spec="KIP-1076 (ShareConsumer.registerMetricForSubscription: 'sent as telemetry data to the "
    "broker'); KIP-932",
    level=Level.MUST,
    requires=TELEMETRY,
    needs_shown=(Shown.SHARE_CONSUMER, Shown.APP_METRIC),
    kind="client",
)
async def test_app_metric_share_consumer(
    client: ClientDriver, client_target: BrokerTarget, check: Check
) -> None:
    if "share-consume" not in client.scenarios:
        raise Unsupported(missing_scenario(client, "share-consume"))
    recording, name = await _app_metric_run(
        check, client, client_target, _share_scenario(check), {}
    )
    _require_share_group_served(check, recording, client_target)
    _expect_app_metric(check, recording, name)


def _frames(recording: Recording, api_key: int) -> dict[str, int]:
    """How many requests of `api_key` the client sent and how many answers came back."""
    entries = [e for e in recording.traffic.entries if e.api_key == api_key and e.raw]
    sent = sum(1 for e in entries if e.direction == "client->broker")
    return {"requests": sent, "answers": len(entries) - sent}
