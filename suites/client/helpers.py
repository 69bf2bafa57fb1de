"""What the client suites share: run a client against the reference target and read its traffic.

A client case runs the driver under test as a subprocess against the session's reference target
(`client_target`) with a unique `client.id`; its subscription matches that id only, its proxy
rules fire for that id only, and both are removed when the case ends. The case then judges the
`Recording`: the driver's own events and the client's wire traffic (`traffic.Traffic`).

A case whose client did not do what the case needs (no request under the client.id it was given,
no push, no Terminating push) stops as not-applicable through `check.precondition`, saying what
was missing; `error` stays for the harness's own trouble. For a client whose traffic carries
another client id, the message names the ids the proxy saw instead (`require_own_traffic`).

Several cases judge the same kind of run (a producer with an "all metrics" subscription: KIP-511
identity, cadence, every payload rule). `shared_run` records such a run once per driver and
session and lets each case judge it; a case selected alone (`--cases`) records it itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import getpass
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from kconform.engine.check import Check
from kconform.fixtures.clients import ClientDriver, ClientRun, Scenario
from kconform.fixtures.clients.contract import ClientEvent
from kconform.fixtures.clients.driver import DriverFault
from kconform.fixtures.proxy.injections import Injection
from kconform.fixtures.targets.base import BrokerTarget, Capability, Subscription, TargetError
from kconform.fixtures.wirelog import WireLog
from kconform.suites.client.scripted import ScriptedTelemetry
from kconform.suites.client.traffic import (
    EVIDENCE_KEYS,
    Traffic,
    collect,
    evidence,
    first_request_at,
)

TELEMETRY = (Capability.TELEMETRY,)
TOPIC = "kconform-client-suite"
RUN_MARGIN = 30.0  # seconds a driver may take beyond its scenario before it is stopped
FAULTS_IN_A_ROW = 2  # driver faults in a row after which a driver's remaining cases are skipped
POLL = 0.05  # seconds between looks for the client's first request, and the lag probe's wait
SETTLE = 0.3  # seconds for the proxy to log the last frames and closes after the client exits
LINGER = 1.0  # seconds a window ended early by `until` still runs, for the answers to be logged

_topics: set[tuple[int, str]] = set()
_shared: dict[tuple[int, str, str], Recording] = {}
_faults: dict[str, list[str]] = {}  # driver name -> its latest faults in a row


@dataclass
class Recording:
    """One client run: who ran, what it printed, what it sent, and under which subscription."""

    client_id: str
    run: ClientRun
    traffic: Traffic
    push_interval_ms: int | None = None
    requested_metrics: Sequence[str] = ()
    delta_temporality: bool = True
    recorded_by: str = ""
    # the most the harness's own POLL-long waits overran while the client ran (seconds): the
    # machine's load, which delays the client and the proxy's timestamps alike
    harness_lag: float = 0.0
    derived: dict[str, Any] = field(default_factory=dict)  # analyses cases share (payloads)

    @property
    def events(self) -> list[ClientEvent]:
        return list(self.run.events)

    def event_time(self, name: str) -> float | None:
        """When the driver printed its first `name` event (monotonic), if it did."""
        found = self.run.named(name)
        return self.run.monotonic(found[0]) if found else None

    def private_values(self) -> list[str]:
        """Strings a payload must not carry: this host's name, the client's pid, the user."""
        values = [socket.gethostname(), str(self.run.pid)]
        with contextlib.suppress(KeyError, OSError):
            values.append(getpass.getuser())
        return [v for v in values if len(v) >= 3]


def for_client(client_id: str, api_key: int | None = None, **actions: Any) -> Injection:
    """A proxy injection that fires only on requests carrying `client_id` (other cases' traffic and
    the harness's own admin connection are left alone)."""
    extra = actions.pop("predicate", None)

    def mine(request: Any) -> bool:
        return request.header.client_id == client_id and (extra is None or extra(request))

    return Injection(api_key=api_key, predicate=mine, **actions)


async def ensure_topic(target: BrokerTarget, name: str = TOPIC) -> str:
    key = (id(target), name)
    if key not in _topics:
        try:
            await asyncio.to_thread(target.create_topic, name, 3)
        except TargetError as exc:
            if "ALREADY_EXISTS" not in str(exc):
                raise
        _topics.add(key)
    return name


def produce(seconds: float, rate: float = 20.0) -> Scenario:
    return Scenario.produce(TOPIC, rate=rate, seconds=seconds)


async def run_client(
    check: Check,
    client: ClientDriver,
    target: BrokerTarget,
    scenario: Scenario,
    *,
    metrics: Sequence[str] | None = ("*",),
    interval_ms: int = 500,
    config: Mapping[str, str] | None = None,
    injections: Callable[[str], Sequence[Injection]] = lambda _: (),
    scripted: ScriptedTelemetry | None = None,
    crash_is_evidence: bool = False,
    until: Callable[[], bool] | None = None,
    shown: Sequence[int] = EVIDENCE_KEYS,
) -> Recording:
    """Run `client` on `scenario` with its own subscription (`metrics` None: none at all) and
    proxy injections (`injections(client_id)`), or a `scripted` telemetry broker; return its
    recording. `crash_is_evidence`: a client that dies of a signal it raised itself (an abort,
    a segfault) is what the case judges, not a driver fault (`client_crash`). `until`: the
    window ends LINGER s after it first holds (a long bound waited out only when needed)."""
    skip_after_faults(client)
    client_id = check.unique("kc")
    if scenario.topic is not None:
        await ensure_topic(target, scenario.topic)
    if metrics is not None and scripted is None:
        name = check.unique("sub")
        subscription = Subscription(name, tuple(metrics), interval_ms, {"client_id": client_id})
        await asyncio.to_thread(target.set_subscription, subscription)
        check.defer(lambda: target.delete_subscription(name))
    admit = getattr(target, "admit_kip511_names", None)  # the reference: ruling 9
    if admit is not None:
        check.defer(admit(client_id))
    installed = [*injections(client_id), *([scripted.injection(client_id)] if scripted else [])]
    proxy = target.proxy  # type: ignore[attr-defined]
    for injection in installed:
        proxy.injections.add(injection)
        check.defer(functools.partial(proxy.injections.remove, injection))
    log: WireLog = target.wire_log  # type: ignore[attr-defined]
    mark = log.mark()
    settings = {"client.id": client_id, **(config or {})}
    # the driver's own end is only a backstop: the window is held here, from the first request
    longer = replace(scenario, seconds=scenario.seconds + client.start_timeout)
    run = await client.start(target.bootstrap, settings, longer)
    check.defer(run.terminate)
    opened = time.monotonic()
    try:
        lag = await _hold_window(
            run, log, mark, client_id, scenario.seconds, client.start_timeout, until
        )
        held = time.monotonic() - opened
        await run.wait(RUN_MARGIN)
    finally:
        await run.stop()
        for injection in installed:
            proxy.injections.remove(injection)
    if not (crash_is_evidence and client_crash(run)):
        _judge_driver(client, run)
    await asyncio.sleep(SETTLE)
    check.waited += min(scenario.seconds, held)  # a window `until` ended early: its length
    traffic = collect(target.wire_log.since(mark), client_id)  # type: ignore[attr-defined]
    recording = Recording(client_id, run, traffic, recorded_by=check.info.id, harness_lag=lag)
    if scripted is not None:
        recording.push_interval_ms = scripted.push_interval_ms
        recording.requested_metrics = tuple(scripted.requested_metrics)
        recording.delta_temporality = scripted.delta_temporality
    elif metrics is not None:
        recording.push_interval_ms, recording.requested_metrics = interval_ms, tuple(metrics)
    _describe_run(check, recording, shown)
    require_own_traffic(check, recording)
    return recording


async def run_while(
    check: Check,
    client: ClientDriver,
    target: BrokerTarget,
    director: Coroutine[Any, Any, None],
    seconds: float,
    **kwargs: Any,
) -> Recording:
    """`run_client` producing for `seconds` while `director` (a task) changes what the broker
    does: it is cancelled and awaited once the client has run, whatever happened."""
    task = asyncio.create_task(director)
    try:
        return await run_client(
            check, client, target, Scenario.produce(TOPIC, rate=10.0, seconds=seconds), **kwargs
        )
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def skip_after_faults(client: ClientDriver) -> None:
    """Skip the case when the driver broke its contract in the last FAULTS_IN_A_ROW cases: each
    further case would only wait out its window to the same end."""
    faults = _faults.get(client.name, [])
    if len(faults) >= FAULTS_IN_A_ROW:
        pytest.skip(
            f"the driver {client.name} broke its contract in {len(faults)} cases in a row, "
            f"so its remaining cases are skipped; the last: {faults[-1]}"
        )


CRASH_SIGNALS = frozenset({signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL,
                           signal.SIGFPE})  # fmt: skip
"""What a library's own failure kills its process with (an assert, a bad memory access)."""


def client_crash(run: ClientRun) -> str | None:
    """How the client's process died of its own failure, or None: a signal of CRASH_SIGNALS
    after it started, never one the harness sent."""
    code = run.returncode
    if code is None or code >= 0 or -code not in CRASH_SIGNALS or not run.named("started"):
        return None
    tail = run.stderr_tail(300).strip()
    return f"killed by {signal.Signals(-code).name}" + (f"; stderr: {tail!r}" if tail else "")


def _judge_driver(client: ClientDriver, run: ClientRun) -> None:
    """A driver that broke its contract ends the case in `error` (DriverFault) with its stderr
    tail; the fault is counted towards skipping its remaining cases."""
    fault = run.fault()
    if fault is None:
        _faults.pop(client.name, None)
        return
    _faults.setdefault(client.name, []).append(fault)
    raise DriverFault(fault)


async def _hold_window(
    run: ClientRun,
    log: WireLog,
    mark: int,
    client_id: str,
    seconds: float,
    allowance: float,
    until: Callable[[], bool] | None = None,
) -> float:
    """Let the client run `seconds` from its first request, then ask it to close (SIGTERM: the
    driver closes its client as at the end of its scenario). A client that is slow to start
    (a JVM beside other work on two cores) still gets its whole window to show what a case
    judges; one that sends nothing within `allowance` (`--client-timeout`) is closed then.

    Returns the harness's own lag: the most a POLL-long wait overran while the client ran. It is
    what the machine's load did to a thread that only sleeps, the uncertainty of every time the
    proxy recorded, and timing cases allow it on the late side (`Recording.harness_lag`)."""
    deadline = time.monotonic() + allowance
    began: float | None = None
    lag = 0.0
    while time.monotonic() < deadline:
        asked = time.monotonic()
        if await run.exited_within(min(POLL, deadline - asked)):
            return lag
        lag = max(lag, time.monotonic() - asked - POLL)
        if began is None:
            entries = log.since(mark)
            mark += len(entries)
            began = first_request_at(entries, client_id)
            if began is not None:
                deadline = began + seconds
        elif until is not None and until():
            deadline, until = min(deadline, time.monotonic() + LINGER), None
    await run.close_window()
    return lag


def lag_text(recording: Recording) -> str:
    """What a timing expectation's name adds when its late side allows the harness's lag."""
    lag_ms = recording.harness_lag * 1000
    return f" (late side + {lag_ms:.0f} ms: the harness's own lag meanwhile)" if lag_ms >= 1 else ""


def require_own_traffic(check: Check, recording: Recording) -> None:
    """Stop the case as not-applicable when no request carried the client.id the client was
    given: its traffic cannot be told from other clients', and a case judging the absence of
    something (no telemetry when opted out) would pass on nothing. Says which client ids the
    proxy saw instead, so a client that ignores `client.id` is recognised as such."""
    traffic, run = recording.traffic, recording.run
    if traffic.exchanges:
        return
    if traffic.others:
        observed = (
            f"none; client ids seen on the proxy while it ran: {traffic.seen_instead()} "
            "(does the client apply the client.id config it is given?)"
        )
    else:
        observed = (
            f"none; no request reached the proxy while it ran (exit status {run.returncode}, "
            f"stderr tail {run.stderr_tail(300)!r})"
        )
    check.precondition(
        "requests carrying the client.id the client was given (how the case finds its traffic)",
        f"at least one request with client.id {recording.client_id!r}",
        observed,
        ok=False,
    )


def _describe_run(check: Check, recording: Recording, shown: Sequence[int] = EVIDENCE_KEYS) -> None:
    run, traffic = recording.run, recording.traffic
    for entry in evidence(traffic, shown)[-150:]:
        check.wire_log.append(entry)
    errors = [dict(e.data) for e in run.named("error")][:5]
    check.observe(
        "client run",
        {
            "client_id": recording.client_id,
            "recorded_by": recording.recorded_by,
            "returncode": run.returncode,
            "timed_out": run.timed_out,
            "events": {
                name: len(run.named(name)) for name in sorted({e.event for e in run.events})
            },
            "errors": errors,
            "connections": len(traffic.connections()),
            "gets": len(traffic.gets),
            "pushes": len(traffic.pushes),
            "harness_lag_ms": round(recording.harness_lag * 1000, 1),
        },
    )
    if run.timed_out:
        check.note(
            f"the client did not finish its scenario in time and was stopped "
            f"(stderr tail: {run.stderr_tail(300)!r})"
        )
    if traffic.truncated:
        check.note(f"{traffic.truncated} further requests were counted but not decoded")


async def shared_run(
    check: Check,
    client: ClientDriver,
    target: BrokerTarget,
    recipe: str,
    record: Callable[[], Awaitable[Recording]],
) -> Recording:
    """The session's recording of `recipe` for this driver, recording it on first use."""
    check.info.require_shares(recipe, f"the {recipe!r} run")
    key = (id(target), client.name, recipe)
    recording = _shared.get(key)
    if recording is None:
        recording = await record()
        if recording.run.returncode is None or recording.run.timed_out:
            return recording  # not kept: a broken run is not evidence for other cases
        _shared[key] = recording
    else:
        _describe_run(check, recording)
    return recording


# --- recipes several cases judge ----------------------------------------------------------------

BASELINE_INTERVAL_MS = 500


async def baseline_run(check: Check, client: ClientDriver, target: BrokerTarget) -> Recording:
    """A producer, 5 s at 20 msg/s, subscribed to all metrics ("*") every 500 ms."""
    return await shared_run(
        check,
        client,
        target,
        "baseline",
        lambda: run_client(check, client, target, produce(5.0), interval_ms=BASELINE_INTERVAL_MS),
    )


def require_telemetry(check: Check, recording: Recording, pushes: int = 1) -> None:
    """Stop the case as not-applicable when the client did not push as often as the case needs
    (what it judges is not there; whether the client had to push is other cases' business)."""
    found = len(recording.traffic.pushes)
    if found < pushes:
        stderr = recording.run.stderr_tail(300).strip()
        if stderr:
            check.note(f"the client's stderr ends: {stderr!r}")
        check.precondition(
            "PushTelemetry requests the client sent",
            f">= {pushes}",
            f"{found} (and {len(recording.traffic.gets)} GetTelemetrySubscriptions)",
            ok=False,
        )
