"""What `kconform driver check` does: run an author's driver briefly through each scenario
against the embedded reference broker and say, in plain words with the fix, where it breaks the
driver contract (`fixtures/clients/__init__.py`, its schema in `fixtures/clients/contract-schema/`).

It checks what a certify run needs before it can judge anything, in seconds instead of a whole
suite's minutes: `--describe` is the contract's object; every event line is valid; `idle`
connects (7 of the 10 KIP-511 cases run on it, and a lazily-connecting client that sends
nothing leaves them with nothing to judge); `produce` delivers; SIGTERM brings `closing` within
the contract's bound and a clean exit; each run ends with `closed` and exit status 0. The
optional scenarios run only when `--describe` lists them: `admin` must print `described`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from kconform.fixtures.clients.command import CommandDriver, describe_answer
from kconform.fixtures.clients.contract import Scenario
from kconform.fixtures.clients.contract_schema import describe_schema, events_schema
from kconform.fixtures.clients.driver import CLOSE_NOTICE, ClientRun
from kconform.fixtures.targets.reference import ReferenceTarget

__all__ = ["IDLE_SECONDS", "Finding", "check_driver", "describe_problems"]

IDLE_SECONDS = 6.0  # long enough for a JVM's start, short enough to stay a quick check
CONSUME_SECONDS = 5.0
EXIT_BOUND = 15.0  # seconds after SIGTERM, or after the scenario's end, to exit
CLIENT_ID = "kconform-driver-check"
SILENT = (
    "your driver printed nothing on stdout: print the contract's events, one JSON object per "
    'line, starting with {"event": "started", ...}'
)
NO_STARTED = (
    "your driver printed no `started` event: print it once the client is created, "
    '{"event": "started", "t": ..., "client": ..., "version": ...}'
)
IDLE_HOW = (
    "a lazily-connecting client must connect during idle, e.g. by fetching metadata "
    "(docs/drivers/README.md#what-idle-needs)"
)


@dataclass
class Finding:
    """What one step (describe, idle, produce, consume) found: problems to fix, facts seen."""

    step: str
    problems: list[str] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    silent: bool = False  # it printed no contract event at all
    ran: bool = True


def describe_problems(answer: Any) -> list[str]:
    """Where a parsed `--describe` object breaks describe.schema.json, in plain words."""
    validator = jsonschema.Draft202012Validator(describe_schema())
    return [_plain(error) for error in validator.iter_errors(answer)]


def _plain(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def check_describe(driver: CommandDriver, timeout: float) -> tuple[Finding, str | None]:
    """The `--describe` step; the second value is a usage error (not one JSON object)."""
    found = Finding("describe")
    last, answer = describe_answer(driver, timeout)
    if last is None:
        found.problems.append(
            f"`--describe` printed nothing or failed within {timeout:g} s: print one JSON object "
            '{"implementation", "version", "capabilities"}; without it kconform assumes your '
            "client implements KIP-714 and judges its telemetry cases"
        )
        return found, None
    if answer is None:
        return found, (
            f"{driver.path}: its --describe exited 0 but its last line is not one JSON object "
            f"(it printed {last[:120]!r}); see fixtures/clients/contract-schema/"
            "describe.schema.json"
        )
    found.problems += [f"`--describe`: {p}" for p in describe_problems(answer)]
    capabilities = answer.get("capabilities", [])
    found.seen.append(f"{answer.get('implementation')} {answer.get('version')}, capabilities: "
                      f"{', '.join(map(str, capabilities)) or 'none'}")  # fmt: skip
    return found, None


def _event_problems(run: ClientRun, step: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(events_schema())
    problems: list[str] = []
    for event in run.events:
        line = event.to_dict()
        if event.t == 0.0:
            problems.append(f"its `{event.event}` event has no numeric `t` (seconds since the "
                            "epoch, as a float)")  # fmt: skip
            line["t"] = 1.0
        problems += [f"its `{event.event}` event: {_plain(e)}" for e in validator.iter_errors(line)]
    for other in run.other_output:
        if other.lstrip().startswith("{"):
            problems.append(f"a stdout line that is not a JSON event object: {other[:100]!r}")
    if not run.events and run.other_output:
        problems.append(f"your driver printed no contract event; its stdout began "
                        f"{run.other_output[0][:100]!r}: print one JSON object per line "
                        "(fixtures/clients/contract-schema/events.schema.json)")  # fmt: skip
    elif not run.events:
        problems.append(SILENT)
    elif not run.named("started"):
        problems.append(NO_STARTED)
    return problems[:12]


def _ending_problems(run: ClientRun, step: str, asked_to_stop: bool) -> list[str]:
    problems: list[str] = []
    why = "after SIGTERM" if asked_to_stop else "at the end of its scenario"
    if run.ignored_sigterm:
        problems.append(f"no `closing` event nor exit within {CLOSE_NOTICE:g} s of SIGTERM: "
                        "handle SIGTERM by ending the scenario and closing the client")  # fmt: skip
    elif run.returncode is None or run.timed_out:
        problems.append(f"it did not exit within {EXIT_BOUND:g} s {why}: close the client and "
                        "exit 0")  # fmt: skip
    elif run.returncode != 0 and asked_to_stop and run.named("closed"):
        pass  # the harness's own rule: a closed client may exit as its runtime does on SIGTERM
    elif run.returncode != 0:
        problems.append(f"it exited with status {run.returncode} {why}: a clean close exits 0"
                        + (" (it died of the signal: install a SIGTERM handler)"
                           if run.returncode < 0 else ""))  # fmt: skip
    if run.named("started") and not run.named("closing") and not run.ignored_sigterm:
        problems.append(f"no `closing` event {why}: print it right before the client's close()")
    if run.named("started") and not run.named("closed"):
        problems.append(f"no `closed` event {why}: print it after the client's close() returned")
    if problems and (tail := run.stderr_tail(300).strip()):
        problems.append(f"its stderr ended with: {tail[-300:]!r}")
    return problems


async def _first_request(
    target: ReferenceTarget, mark: int, run: ClientRun, within: float
) -> float:
    """Seconds from the run's start to the driver's first request; -1 when none came."""
    wire = target.wire_log
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        sent = [e for e in wire.since(mark) if e.direction == "client->broker"]
        if sent:
            return float(max(sent[0].monotonic - run.started, 0.0))
        if run.returncode is not None:
            break
        await asyncio.sleep(0.05)
    return -1.0


async def _idle(driver: CommandDriver, target: ReferenceTarget, config: dict[str, str]) -> Finding:
    found = Finding("idle")
    wire = target.wire_log
    mark = wire.mark()
    run = await driver.start(target.bootstrap, config, Scenario.idle(seconds=IDLE_SECONDS))
    first = await _first_request(target, mark, run, IDLE_SECONDS + 1)
    await run.wait(EXIT_BOUND + IDLE_SECONDS)
    found.problems += _event_problems(run, "idle")
    closing = run.named("closing")
    if first >= 0 and closing and run.started + first > run.monotonic(closing[0]):
        found.problems.append(f"its first request came only as it closed: {IDLE_HOW}")
    elif first < 0 and run.events:  # a driver that printed nothing has that to fix first
        found.problems.append(f"no request within {IDLE_SECONDS:g} s of its start: {IDLE_HOW}")
    elif first >= 0:
        found.seen.append(f"first request {first:.1f} s after start")
    found.problems += _ending_problems(run, "idle", asked_to_stop=False)
    found.silent = not run.events
    return found


async def _produce(
    driver: CommandDriver, target: ReferenceTarget, config: dict[str, str], topic: str, bound: float
) -> Finding:
    found = Finding("produce")
    scenario = Scenario.produce(topic, rate=5, seconds=60)
    run = await driver.start(target.bootstrap, config, scenario)
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline and not run.named("delivered"):
        if await run.exited_within(0.1):
            break
    if run.returncode is None:
        asked = time.monotonic()
        await run.close_window(CLOSE_NOTICE)
        closing = run.named("closing")
        if closing:
            found.seen.append(f"closing {max(run.monotonic(closing[0]) - asked, 0):.1f} s after "
                              "SIGTERM")  # fmt: skip
        await run.wait(EXIT_BOUND)
    else:
        found.problems.append(f"it exited (status {run.returncode}) before SIGTERM, long before "
                              "its 60 s scenario ended")  # fmt: skip
        await run.wait(1)
    found.problems += _event_problems(run, "produce")
    delivered = len(run.named("delivered"))
    if delivered:
        found.seen.append(f"{delivered} delivered")
    elif run.events:
        found.problems.append(f"no `delivered` event within {bound:g} s: print one per record "
                              "the broker acknowledged (topic, partition, offset)")  # fmt: skip
    found.problems += _ending_problems(run, "produce", asked_to_stop=run.sigterm_sent)
    return found


async def _consume(
    driver: CommandDriver, target: ReferenceTarget, config: dict[str, str], topic: str
) -> Finding:
    found = Finding("consume")
    scenario = Scenario.consume(topic, group="kconform-driver-check", seconds=CONSUME_SECONDS)
    run = await driver.start(target.bootstrap, config, scenario)
    await run.wait(CONSUME_SECONDS + EXIT_BOUND)
    found.problems += _event_problems(run, "consume")
    consumed = len(run.named("consumed"))
    none = f"none consumed in its {CONSUME_SECONDS:g} s: no fault, a group join may take longer"
    found.seen.append(f"{consumed} consumed" if consumed else none)
    found.problems += _ending_problems(run, "consume", asked_to_stop=False)
    return found


async def _optional(
    driver: CommandDriver, target: ReferenceTarget, config: dict[str, str], scenario: Scenario
) -> Finding:
    """A scenario the driver lists beyond the three every driver has (`admin`: `described`)."""
    found = Finding(scenario.kind)
    run = await driver.start(target.bootstrap, config, scenario)
    await run.wait(scenario.seconds + EXIT_BOUND)
    found.problems += _event_problems(run, scenario.kind)
    if scenario.kind == "admin":
        described = len(run.named("described"))
        if described:
            found.seen.append(f"{described} described")
        elif run.events:
            found.problems.append(
                "no `described` event: print one each time the Admin client "
                'described the cluster, {"event": "described", "nodes": N}'
            )
    else:
        found.seen.append(f"{len(run.named('consumed'))} consumed")
    found.problems += _ending_problems(run, scenario.kind, asked_to_stop=False)
    return found


async def _scenarios(driver: CommandDriver, target: ReferenceTarget, bound: float) -> list[Finding]:
    config = {"client.id": CLIENT_ID}
    topic = "kconform-driver-check"
    target.create_topic(topic)
    idle = await _idle(driver, target, config)
    if idle.silent:  # the others would only say the same: fix the events first
        skipped = "not run: the driver printed no contract event in idle"
        return [
            idle,
            *(Finding(step, seen=[skipped], ran=False) for step in ("produce", "consume")),
        ]
    found = [
        idle,
        await _produce(driver, target, config, topic, bound),
        await _consume(driver, target, config, topic),
    ]
    if "admin" in driver.scenarios:
        found.append(await _optional(driver, target, config, Scenario.admin(seconds=3.0)))
    if "share-consume" in driver.scenarios:
        share = Scenario.share_consume(topic, group="kconform-driver-check-share",
                                       seconds=CONSUME_SECONDS)  # fmt: skip
        found.append(await _optional(driver, target, config, share))
    return found


def check_driver(driver: CommandDriver, target: ReferenceTarget, bound: float) -> list[Finding]:
    """Each scenario once on `target` (started); `bound`: seconds to its first delivery."""
    return asyncio.run(_scenarios(driver, target, bound))
