"""The kconform pytest plugin's fixtures: the targets and clients a case runs against
(parametrized over `--target` and `--client`), the event loop async cases run on, and the
case's `check`; and running an `async def` case on that loop within its time bound.

A case whose subject lacks a capability it `requires` ends in setup as `unsupported`
(kconform.plugin.verdicts.skip_unjudged), without running.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from kconform.engine.check import Check
from kconform.errors import Inconclusive, Unsupported
from kconform.fixtures.runtime import LoopThread, LoopTimeout
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.targets.registry import DEFAULT_BROKERS
from kconform.plugin.items import case_info
from kconform.plugin.options import client_specs, target_specs
from kconform.plugin.state import CHECK, STATE, RunState
from kconform.plugin.verdicts import skip_unjudged

__all__ = ["check", "client", "client_target", "runtime", "target"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "client" in metafunc.fixturenames:
        clients = client_specs(metafunc.config)
        metafunc.parametrize("client", clients, ids=[c.label for c in clients], indirect=True,
                             scope="session")  # fmt: skip
    if "target" in metafunc.fixturenames:
        specs = target_specs(metafunc.config)
        metafunc.parametrize(
            "target", specs, ids=[s.label for s in specs], indirect=True, scope="session"
        )


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> BrokerTarget:
    """The broker target of this parametrization (started once per session)."""
    state: RunState = request.config.stash[STATE]
    return state.target(request.param)


@pytest.fixture(scope="session")
def client(request: pytest.FixtureRequest) -> Any:
    """The client driver under test of this parametrization (see fixtures/clients)."""
    from kconform.fixtures.clients.registry import create_driver

    driver = create_driver(request.param)
    timeout = request.config.getoption("--client-timeout")
    if timeout is not None:  # first: a `command:` driver's --describe is bounded by it too
        driver.start_timeout = timeout
    reason = driver.unavailable_reason()
    if reason:
        pytest.skip(f"client {request.param.label} unavailable: {reason}")
    state: RunState = request.config.stash[STATE]
    if state.coverage is not None:  # --coverage: JaCoCo on each JVM the driver starts
        state.coverage.attach_client(request.param.label, driver)
    description = driver.describe()
    if description not in state.results.subjects:
        state.results.subjects.append(description)
    return driver


@pytest.fixture(scope="session")
def client_target(request: pytest.FixtureRequest) -> BrokerTarget:
    """The target client cases run against (its kind's `hosts_client_cases`): its proxy
    records and injects."""
    from kconform.fixtures.targets.registry import TargetSpec, client_cases_target

    state: RunState = request.config.stash[STATE]
    brokers = request.config.getoption("--brokers") or DEFAULT_BROKERS
    return state.target(TargetSpec(client_cases_target(), brokers=brokers))


@pytest.fixture(scope="session")
def runtime(request: pytest.FixtureRequest) -> LoopThread:
    """The event loop async cases run on."""
    state: RunState = request.config.stash[STATE]
    return state.runtime


@pytest.fixture
def check(request: pytest.FixtureRequest, runtime: LoopThread) -> Iterator[Check]:
    info = case_info(request.node)
    if info is None:
        raise pytest.UsageError(f"{request.node.nodeid} uses `check` but is not an @case")
    target: BrokerTarget | None = None
    death: str | None = None
    if "target" in request.fixturenames:
        target = request.getfixturevalue("target")
        state: RunState = request.config.stash[STATE]
        if request.config.getoption("--stop-target-on-fail") and target.name in state.failed_must:
            pytest.skip(f"{target.name} already failed a MUST case (--stop-target-on-fail)")
        missing = sorted(info.requires - target.capabilities)
        if missing:
            skip_unjudged(request.node, Unsupported(f"{target.name} lacks {', '.join(missing)}"))
        death = state.revive(target)
    if "client" in request.fixturenames:
        driver = request.getfixturevalue("client")
        target = request.getfixturevalue("client_target")
        missing = sorted(info.requires - driver.capabilities)
        if missing:
            skip_unjudged(request.node, Unsupported(f"{driver.name} lacks {', '.join(missing)}"))
    recorder = Check(info, target)
    if death is not None and target is not None:
        recorder.note(f"{target.name} was started anew for this case; an earlier case had "
                      f"crashed it: {death}")  # fmt: skip
    if "client" in request.fixturenames:
        recorder.subject = request.getfixturevalue("client")
    request.node.stash[CHECK] = recorder
    yield recorder
    for cleanup in reversed(recorder.cleanups):
        try:
            outcome = cleanup()
            if inspect.isawaitable(outcome):
                runtime.run(_awaited(outcome), timeout=30)
        except Exception as exc:  # a failed cleanup is evidence, not a crash
            recorder.note(f"cleanup failed: {type(exc).__name__}: {exc}")
    runtime.run(recorder.close(), timeout=30)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run `async def` cases on the session's loop, bounded by --case-timeout (or a longer
    `kconform_timeout` mark)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    state: RunState = pyfuncitem.config.stash[STATE]
    names = pyfuncitem._fixtureinfo.argnames
    coroutine = pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names})
    timeout = pyfuncitem.config.getoption("--case-timeout")
    longer = pyfuncitem.get_closest_marker("kconform_timeout")
    if longer is not None:
        timeout = max(timeout, float(longer.args[0]))
    try:
        state.runtime.run(coroutine, timeout=timeout)
    except LoopTimeout as stuck:
        raise Inconclusive(
            f"case did not finish within {timeout:.0f}s; then: {stuck.snapshot}"
        ) from None
    return True
