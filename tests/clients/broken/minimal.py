"""A minimal KIP-511/KIP-714 client speaking the driver contract, with switchable defects.

Built on kconform's own codec and `KafkaConnection`: one connection to the first bootstrap
broker carries ApiVersions, GetTelemetrySubscriptions and PushTelemetry. It is telemetry-only:
`produce` and `consume` scenarios only set how long it runs. With every `Behaviour` flag off it
follows the KIPs (it is the suites' "well-behaved" control); each script beside this file turns
on exactly one defect, so the test can prove the case meant for that rule catches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import socket
import sys
import time
import uuid

from minimal_behaviour import Behaviour

from kconform.codecs.compression import compress
from kconform.codecs.messages import (
    ApiVersionsRequest,
    GetTelemetrySubscriptionsRequest,
    MetadataRequest,
    PushTelemetryRequest,
)
from kconform.codecs.otlp import build_metrics_data, counter, gauge
from kconform.codecs.wire import ZERO_UUID
from kconform.fixtures.clients.contract import EventWriter, parse_command_line
from kconform.fixtures.connection import ConnectionClosed, KafkaConnection, RequestTimeout

__all__ = ["Behaviour", "main"]


def _first_close() -> bool:
    """Whether no earlier run under this harness process closed (a marker file per parent)."""
    marker = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"kc-closed-{os.getppid()}")
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return False
    return True


MAX_API_VERSIONS = 4
SUPPORTED_COMPRESSION = (4, 3, 1, 2)  # zstd, lz4, gzip, snappy
DEFAULT_INTERVAL_MS = 300_000
RECONNECT_BACKOFF = 0.1  # seconds before it reconnects after losing its connection
UNSUPPORTED_VERSION, INVALID_REQUEST, INVALID_RECORD = 35, 42, 87
UNKNOWN_SUBSCRIPTION_ID, UNSUPPORTED_COMPRESSION_TYPE, TELEMETRY_TOO_LARGE = 117, 76, 118


class Client:
    def __init__(self, behaviour: Behaviour, config: dict[str, str], out: EventWriter) -> None:
        self.b, self.config, self.out = behaviour, config, out
        self.conn: KafkaConnection | None = None
        self.instance_id = ZERO_UUID
        self.subscription: object | None = None  # the last successful Get response
        self.previous: object | None = None  # the one before it
        self.started_ns = time.time_ns()
        self.last_push_ns = self.started_ns
        self.connections = 0
        self.bootstrap = ""
        self.pushing = False  # a non-Terminating push awaits its answer
        self.apis: set[int] = set()  # the API keys its current connection advertised
        self.given_up = False  # gives_up_when_unadvertised: its telemetry ended for good
        self.probe_wait = 0.0  # then: seconds between its reconnections (its last interval)
        self.resets = 0  # connections reset at their ApiVersions
        self.first_address = ""  # where its first connection went
        self.brokers: list[str] = []  # where the last Metadata answer says the brokers are

    async def reconnect(self) -> None:
        """A connection to where Metadata last said the brokers are (the bootstrap list before
        any answer), the first that answers; then Metadata again, as clients refresh it after
        losing a connection. Raises the last failure when none answers."""
        failure: Exception = ConnectionClosed("no broker address answered")
        for address in dict.fromkeys([*self.brokers, *self.bootstrap.split(",")]):
            try:
                await self.connect(self.bootstrap, address=address)
                break
            except (ConnectionClosed, OSError) as exc:
                failure = exc
        else:
            raise failure
        assert self.conn is not None
        answer = (await self.conn.request(MetadataRequest(topics=[]), 9)).body
        nodes = sorted(answer.brokers, key=lambda b: b.node_id)
        self.brokers = [f"{b.host}:{b.port}" for b in nodes]
        if self.b.stale_address and self.first_address not in self.brokers:
            await asyncio.sleep(self.interval())  # its next push is due: where it first went
            await self.conn.close()
            await self.connect(self.bootstrap, address=self.first_address)

    async def connect(
        self, bootstrap: str, version: int = MAX_API_VERSIONS, address: str = ""
    ) -> bool:
        self.bootstrap = bootstrap
        version = 0 if self.b.apiversions_v0_only else version
        address = address or bootstrap.split(",")[0]
        self.first_address = self.first_address or address
        host, port = address.rsplit(":", 1)
        self.conn = await KafkaConnection.open(
            host,
            int(port),
            client_id=self.b.own_client_id or self.config.get("client.id", "minimal"),
            timeout=int(self.config.get("request.timeout.ms", "30000")) / 1000,
        )
        self.connections += 1
        tries = 0
        while True:
            tries += 1
            request = ApiVersionsRequest(
                client_software_name=self.b.software_name,
                client_software_version=self.b.software_version,
            )
            try:
                response = (await self.conn.request(request, version)).body
            except (ConnectionClosed, OSError):  # reset at ApiVersions: a new connection, once
                if self.resets:
                    raise
                self.resets += 1
                await self.conn.close()
                version = 0 if self.b.v0_after_reset else version
                await asyncio.sleep(self.b.reset_reconnect_delay)
                return await self.connect(bootstrap, version, address)
            if response.error_code == UNSUPPORTED_VERSION and tries < 40:
                if self.b.downgrade_loop:
                    await asyncio.sleep(0.05)  # ignores the advertised versions: tries again
                    continue
                own = [k for k in response.api_keys if k.api_key == 18]
                hint = own[0].max_version if own else 0
                if self.b.trusts_advertised_version:
                    version = min(hint, MAX_API_VERSIONS)
                else:  # only a lower version can be answered (ruling 15); else v0
                    version = hint if 0 <= hint < version else 0
                continue
            if response.error_code != 0 and not (
                self.b.ignores_apiversions_error and response.api_keys
            ):
                self.out.emit(
                    "error",
                    error=f"ApiVersions error {response.error_code}",
                    code=str(response.error_code),
                    fatal=True,
                )
                await self.conn.close()
                return False
            self.apis = {k.api_key for k in response.api_keys}
            return True

    def payload(self, requested: list[str], delta: bool) -> bytes:
        now = time.time_ns()
        p = self.b.metric_prefix
        start = self.last_push_ns if delta else self.started_ns
        total = 0 if delta and self.last_push_ns != self.started_ns else self.connections
        points = [
            gauge(f"{p}producer.connection.creation.rate", 0.1, time_unix_nano=now),
            counter(
                f"{p}producer.connection.creation.total",
                total,
                delta=delta,
                time_unix_nano=now,
                start_time_unix_nano=start,
            ),
            *(
                gauge(
                    f"{p}producer.node.request.latency.{kind}",
                    value,
                    time_unix_nano=now,
                    attributes={"node_id": str(node)},
                )
                for node in range(1, self.b.nodes + 1)
                for kind, value in (("avg", self.average(1.5)), ("max", 3.0))
            ),
            gauge(f"{p}producer.produce.throttle.time.avg", 0.0, time_unix_nano=now),
            gauge(f"{p}producer.produce.throttle.time.max", 0.0, time_unix_nano=now),
            gauge(f"{p}producer.record.queue.time.avg", 0.5, time_unix_nano=now),
            gauge(f"{p}producer.record.queue.time.max", 1.0, time_unix_nano=now),
        ]
        if self.b.non_monotonic_sum:
            from dataclasses import replace

            points = [replace(x, monotonic=False) if x.kind == "sum" else x for x in points]
        if self.b.per_prefix_matches and requested != ["*"]:  # librdkafka 2.5.0-2.10.0 did so
            wanted = [x for prefix in requested for x in points if x.name.startswith(prefix)]
        else:
            wanted = [
                x
                for x in points
                if requested == ["*"] or any(self.matches(x.name, prefix) for prefix in requested)
            ]
        if not wanted and self.b.aborts_when_unmatched:  # librdkafka 2.5.0, #4833
            os.abort()
        resource = {"host.name": socket.gethostname()} if self.b.hostname_attribute else {}
        self.last_push_ns = now
        return build_metrics_data(wanted, resource_attributes=resource)

    def average(self, mean: float) -> float:
        return 2 * mean / (self.interval() * 1000) if self.b.avg_over_window else mean

    def matches(self, name: str, prefix: str) -> bool:
        if self.b.type_blind_match:  # "org.apache.kafka.consumer.x" as "org.apache.kafka.x"
            name, prefix = (re.sub(r"^(org\.apache\.kafka\.)(producer|consumer)\.", r"\1", t)
                            for t in (name, prefix))  # fmt: skip
        return name.startswith(prefix)

    def payload_metrics(self) -> int:
        """How many metrics its subscription matches (the payload's metric count)."""
        sub = self.subscription
        if sub is None:
            return 0
        requested = list(sub.requested_metrics)
        names = ("producer.connection.creation.rate", "producer.node.request.latency.avg")
        return sum(
            requested == ["*"] or any((self.b.metric_prefix + n).startswith(p) for p in requested)
            for n in names
        )

    async def get(self) -> object:
        assert self.conn is not None
        body = GetTelemetrySubscriptionsRequest(client_instance_id=self.instance_id)
        response = (await self.conn.request(body, 0)).body
        if response.error_code == 0:
            nulled = ZERO_UUID == response.client_instance_id != self.instance_id
            if self.b.stops_at_null_id and nulled:
                await asyncio.Event().wait()  # stuck until close; the last subscription stays
            if self.instance_id == ZERO_UUID and response.client_instance_id != ZERO_UUID:
                self.instance_id = response.client_instance_id
            self.previous, self.subscription = self.subscription, response
        return response

    async def push(self, terminating: bool = False) -> object:
        assert self.conn is not None and self.subscription is not None
        sub = self.subscription
        data = self.payload(list(sub.requested_metrics), bool(sub.delta_temporality))
        kind = next((t for t in sub.accepted_compression_types if t in SUPPORTED_COMPRESSION), 0)
        kind = kind if len(data) > 1000 else 0
        metrics: bytes | None = compress(data, kind)
        if self.b.null_when_unmatched and not self.payload_metrics():  # librdkafka <= 2.10.0
            metrics = None
        if metrics is not None and len(metrics) > sub.telemetry_max_bytes:  # send what fits
            kind, metrics = 0, b""
        body = PushTelemetryRequest(
            client_instance_id=self.instance_id,
            subscription_id=sub.subscription_id,
            terminating=terminating,
            compression_type=kind,
            metrics=metrics,
        )
        self.pushing = not terminating
        try:
            return (await self.conn.request(body, 0, strict=metrics is not None)).body
        finally:
            self.pushing = False

    def interval(self) -> float:
        ms = getattr(self.subscription, "push_interval_ms", 0) or 0
        return (ms if ms > 0 else DEFAULT_INTERVAL_MS) / 1000

    async def telemetry(self) -> None:
        """The KIP-714 client state machine, until cancelled or told to stop; a lost connection
        is reconnected and telemetry starts again with a Get (ruling 17), once a connection
        advertises 71/72 again (KIP-714 Receiving broker behavior)."""
        if not self.b.sends_telemetry:  # no KIP-714 at all: it idles until cancelled
            await asyncio.Event().wait()
        while True:
            if self.given_up or not ({71, 72} <= self.apis or self.b.remembers_advertisement):
                if self.b.gives_up_when_unadvertised and not self.given_up:
                    self.out.emit("error", error="telemetry stopped: 71/72 not advertised",
                                  code="UNSUPPORTED_VERSION", fatal=False)  # fmt: skip
                    self.probe_wait, self.given_up = self.interval(), True
                    self.subscription = None
                # then asks again on a new connection (one that gave up still reconnects, as a
                # producing client does, and ignores what the new one lists)
                await asyncio.sleep(self.probe_wait if self.given_up else self.interval())
                if self.conn is not None:
                    await self.conn.close()
                with contextlib.suppress(ConnectionClosed, OSError):
                    await self.reconnect()
                continue
            try:
                await self.subscribed()
                return
            except (ConnectionClosed, RequestTimeout) as exc:
                if isinstance(exc, RequestTimeout) and self.conn is not None:
                    await self.conn.close()  # as Kafka clients do on a request timeout
                if self.b.gives_up_on_transport_failure:  # Java 3.7.0-4.1.0, KAFKA-19747
                    self.out.emit("error", error=f"telemetry stopped: {exc}",
                                  code=type(exc).__name__, fatal=False)  # fmt: skip
                    self.subscription = None
                    return
            await asyncio.sleep(RECONNECT_BACKOFF)
            try:
                await self.reconnect()
            except (ConnectionClosed, OSError) as exc:  # the broker is not back yet: try again
                if self.b.gives_up_when_refused:
                    self.out.emit("error", error=f"telemetry stopped: reconnect failed: {exc}",
                                  code=type(exc).__name__, fatal=False)  # fmt: skip
                    self.subscription = None
                    return

    async def subscribed(self) -> None:
        """Get, then push each interval, as the last Get's answer says."""
        while True:
            response = await self.get()
            if response.error_code != 0 or not list(response.requested_metrics):
                ms = response.push_interval_ms if response.error_code == 0 else 0
                self.subscription = None if response.error_code == 0 else self.subscription
                await asyncio.sleep(ms / 1000 if ms > 0 else self.interval())
                continue
            delay = 0.0 if self.b.zero_first_push_delay else random.uniform(0.5, 1.5)
            await asyncio.sleep(delay * self.interval())
            while True:
                if self.b.silent_when_unmatched and not self.payload_metrics():
                    await asyncio.sleep(self.interval())
                    continue
                answer = await self.push()
                wait = max(self.interval(), answer.throttle_time_ms / 1000)
                if answer.error_code == 0 or (
                    answer.error_code == UNKNOWN_SUBSCRIPTION_ID
                    and self.b.ignores_unknown_subscription
                ):
                    await asyncio.sleep(wait)
                    continue
                break
            if answer.error_code in (INVALID_REQUEST, INVALID_RECORD):
                self.out.emit(
                    "error",
                    error=f"telemetry stopped: error {answer.error_code}",
                    code=str(answer.error_code),
                    fatal=False,
                )
                self.subscription = None
                return
            if answer.error_code not in (UNKNOWN_SUBSCRIPTION_ID, UNSUPPORTED_COMPRESSION_TYPE):
                await asyncio.sleep(self.interval())

    async def terminate(self, push_in_flight: bool = False) -> None:
        if self.subscription is None or self.b.no_terminating_push:
            return
        if push_in_flight and self.b.no_terminating_push_in_flight:
            return
        if self.b.terminating_push_first_close_only and not _first_close():
            return
        if self.b.terminates_under_previous_subscription and self.previous is not None:
            self.subscription = self.previous
        for _ in range(2 if self.b.two_terminating_pushes else 1):
            try:
                answer = await self.push(terminating=True)
            except (ConnectionClosed, RequestTimeout, OSError):
                return  # its connection is gone (a moved broker's old address): abandon it
            if answer.error_code != 0:
                return  # abandon the final push (KIP-714 Client termination allows it)


async def run(argv: list[str], behaviour: Behaviour) -> int:
    invocation = parse_command_line(argv)
    out = EventWriter()
    if invocation.describe:
        print(
            json.dumps(
                {
                    "implementation": "kconform minimal test client",
                    "version": "1.0.0",
                    "capabilities": ["telemetry"] if behaviour.claims_telemetry else [],
                }
            )
        )
        return 0
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
    if behaviour.sigterm == "handle":
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    elif behaviour.sigterm == "ignore":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out.emit("started", client="kconform-minimal", version="1.0.0", id=str(uuid.uuid4()))
    started = time.monotonic()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), behaviour.start_delay)
    client = Client(behaviour, invocation.config, out)
    # SIGTERM while it connects (a reconnection it waits to make) still closes it cleanly
    connecting = asyncio.create_task(client.connect(invocation.bootstrap))
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({connecting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if not connecting.done():
        connecting.cancel()
        await asyncio.gather(connecting, return_exceptions=True)
        out.emit("closing")
        if client.conn is not None:
            await client.conn.close()
        out.emit("closed", seconds=round(time.monotonic() - started, 3), close_seconds=0.0)
        return 0
    try:
        if not connecting.result():
            return 1
    except ConnectionClosed as exc:
        out.emit("error", error=str(exc), code="ConnectionClosed", fatal=True)
        return 1
    enabled = invocation.config.get("enable.metrics.push", "true").lower() != "false"
    task = None
    if enabled and {71, 72} <= client.apis:
        task = asyncio.create_task(client.telemetry())
    with contextlib.suppress(TimeoutError):
        # the scenario's time runs from the start, as in the Java driver (its JVM start aside)
        left = started + invocation.scenario.seconds - time.monotonic()
        await asyncio.wait_for(stop.wait(), left)
    out.emit("closing")
    closing = time.monotonic()
    if task is not None:
        push_in_flight = client.pushing  # before the cancel ends the wait for its answer
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.terminate(push_in_flight)
    assert client.conn is not None
    await client.conn.close()
    now = time.monotonic()
    out.emit("closed", seconds=round(now - started, 3), close_seconds=round(now - closing, 3))
    return 0


def main(behaviour: Behaviour) -> int:
    return asyncio.run(run(sys.argv[1:], behaviour))


if __name__ == "__main__":
    sys.exit(main(Behaviour()))
