"""The kconform pytest plugin: options, markers, fixtures, and the hooks that make verdicts.

Loaded through the `pytest11` entry point when kconform is installed, and by the repository's
conftest.py for in-repo runs; plain `pytest` and the `kconform` command therefore behave alike.
Conformance cases (`@case`, `kconform.engine.model`) get a `check` and, for broker cases, a
`target` parametrized over `--target`; after each case its verdict is computed, recorded in the
results file (rewritten after every case, so nothing found is lost), and mapped to a pytest
outcome: a run fails on fail/error verdicts, or with `--baseline` on any verdict that differs.
"""

from __future__ import annotations

import asyncio
import fnmatch
import inspect
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from kconform.engine.check import (
    CaseAbort,
    Check,
    HarnessDefect,
    Inconclusive,
    PreconditionUnmet,
    Unsupported,
)
from kconform.engine.model import CaseInfo, Level, Verdict, matches_level, verdict_for
from kconform.engine.results import CaseResult
from kconform.fixtures.runtime import LoopThread, LoopTimeout
from kconform.fixtures.targets.base import (
    BrokerTarget,
    TargetError,
)
from kconform.fixtures.targets.registry import (
    DEFAULT_BROKERS,
    TargetSpec,
    UnknownTarget,
    parse_targets,
)
from kconform.run_state import RunState, evidence, format_failure

HYPOTHESIS_PROFILE_ENV = "KCONFORM_HYPOTHESIS_PROFILE"
UNSUPPORTED_PREFIX = "unsupported: "

# quick: the `make test` budget; deep: `tox -e fuzz` and nightly runs.
settings.register_profile(
    "quick", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "deep", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

_CHECK = pytest.StashKey[Check]()
_CLAIM_ORDER = pytest.StashKey[list[tuple[str, list[pytest.Item]]]]()
_STATE = pytest.StashKey[RunState]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kconform")
    group.addoption(
        "--kconform-profile",
        default=os.environ.get(HYPOTHESIS_PROFILE_ENV, "quick"),
        choices=("quick", "deep"),
        help="Hypothesis budget: quick (make test) or deep (tox -e fuzz). "
        f"Default from ${HYPOTHESIS_PROFILE_ENV}, else quick.",
    )
    group.addoption(
        "--target",
        default="",
        help="broker target(s), comma separated: reference, reference:<mutant>, librdkafka_mock, "
        "external, kraft[:<version>] (default: reference, or external with --bootstrap-server)",
    )
    group.addoption(
        "--bootstrap-server", default=None, help="host:port[,host:port] of an existing cluster"
    )
    group.addoption(
        "--sink", default=None,
        help="http://host:port[,...] of the kconform sink plugin on each of the external "
        "cluster's brokers (fixtures/plugin): the telemetry_sink cases are judged there too",
    )  # fmt: skip
    group.addoption(
        "--brokers", type=int, default=None,
        help="nodes per target (default: 3 for the embedded targets, 1 for apache and kraft)",
    )  # fmt: skip
    group.addoption(
        "--without", default="",
        help="capabilities to withhold from every target, comma separated (e.g. telemetry_sink): "
        "its cases run as on a target that lacks them",
    )  # fmt: skip
    group.addoption(
        "--client", default="",
        help="client driver(s) for client cases, comma separated (default: every installed driver)",
    )  # fmt: skip
    group.addoption("--kconform-results", default=None, help="write the run's results JSON here")
    group.addoption(
        "--kconform-volumes", default=None,
        help="folder for the volume runs (<target>/ each; the report reads their summaries "
        "there); default: `volumes` beside --kconform-results",
    )  # fmt: skip
    group.addoption(
        "--baseline", action="append", default=[],
        help="verdict baseline JSON ({subject, verdicts}); a run then fails only on differences",
    )  # fmt: skip
    group.addoption(
        "--cases", default="", help="case ids to run: prefixes or wildcards, comma separated"
    )
    group.addoption("--level", default="all", choices=("must", "should", "all"))
    group.addoption(
        "--stop-target-on-fail", action="store_true",
        help="after a target fails a MUST case, skip its remaining cases (mutation self-test)",
    )  # fmt: skip
    group.addoption("--case-timeout", type=float, default=120.0, help="seconds per case")
    group.addoption(
        "--kconform-shard", default=None,
        help="i/N: run only worker i's fixed share of the cases (a run split over machines)",
    )  # fmt: skip
    group.addoption(
        "--kconform-claims", default=None,
        help="folder shared by the workers of one run (`kconform run -j N`): each claims the "
        "next group of cases when it is free",
    )  # fmt: skip
    group.addoption(
        "--kconform-durations", default=None,
        help="results JSON of an earlier run: with --kconform-claims, its case durations put "
        "the longest groups first",
    )  # fmt: skip


def target_specs(config: pytest.Config) -> list[TargetSpec]:
    """The targets this run is about, from --target/--bootstrap-server/--brokers."""
    text = config.getoption("--target") or (
        "" if config.getoption("--bootstrap-server") else "reference"
    )
    try:
        return parse_targets(
            text,
            brokers=config.getoption("--brokers"),
            bootstrap=config.getoption("--bootstrap-server"),
            sink=config.getoption("--sink"),
        )
    except UnknownTarget as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    # here, not in the conftests of the folders using it: a test importing their modules from
    # elsewhere (tests/rules reads every suite) meets the mark without those conftests
    config.addinivalue_line("markers", "spark: needs PySpark and Java 17 (tox -e spark)")
    config.addinivalue_line(
        "markers", "differential: compares kconform's codec with another implementation"
    )
    config.addinivalue_line("markers", "kconform_case(info): a conformance case (see @case)")
    config.addinivalue_line(
        "markers", "kconform_disruptive: may kill a fragile target; runs after its other cases"
    )
    config.addinivalue_line(
        "markers",
        "kconform_timeout(seconds): a longer bound than --case-timeout, for cases whose first "
        "one does work they all share (a Spark session, a produced workload)",
    )
    settings.load_profile(config.getoption("--kconform-profile"))
    target_specs(config)  # a bad --target fails here, before any test runs
    config.stash[_STATE] = RunState(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close(interrupted=bool(getattr(config, "_kconform_interrupted", False)))


def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """Ctrl-C: the results so far are written as an interrupted run (in unconfigure)."""


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        session.config._kconform_interrupted = True  # type: ignore[attr-defined]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "client" in metafunc.fixturenames:
        from kconform.fixtures.clients.registry import parse_clients

        try:
            clients = parse_clients(metafunc.config.getoption("--client"))
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        metafunc.parametrize("client", clients, ids=[c.label for c in clients], indirect=True,
                             scope="session")  # fmt: skip
    if "target" in metafunc.fixturenames:
        specs = target_specs(metafunc.config)
        metafunc.parametrize(
            "target", specs, ids=[s.label for s in specs], indirect=True, scope="session"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _disruptive_last(items)
    _select_cases(config, items)
    _select_shard(config, items)


def _select_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --kconform-claims, order the groups for claiming (every case stays collected; the
    run loop claims); with --kconform-shard i/N, keep worker i's groups (kconform.shards)."""
    from kconform.shards import parse_shard, share

    if config.getoption("--kconform-claims"):
        _order_for_claims(config, items)
        return
    text = config.getoption("--kconform-shard")
    if not text:
        return
    try:
        shard = parse_shard(text)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    mine = share([_shard_group(item) for item in items], shard)
    drop = [item for item, keep in zip(items, mine, strict=True) if not keep]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item, keep in zip(items, mine, strict=True) if keep]


def _order_for_claims(config: pytest.Config, items: list[pytest.Item]) -> None:
    from kconform.shards import Group, claim_order

    positions: dict[str, int] = {}
    members: dict[str, list[pytest.Item]] = {}
    phases: dict[str, tuple[int, bool]] = {}
    for item in items:  # already per subject, disruptive cases last (_disruptive_last)
        key = _shard_group(item)
        position = positions.setdefault(_subject(item), len(positions))
        disruptive = item.get_closest_marker("kconform_disruptive") is not None
        phases.setdefault(key, (position, disruptive))
        members.setdefault(key, []).append(item)
    groups = [Group(k, phases[k], tuple(i.nodeid for i in v)) for k, v in members.items()]
    ordered = claim_order(groups, _durations(config.getoption("--kconform-durations")))
    items[:] = [item for group in ordered for item in members[group.key]]
    config.stash[_CLAIM_ORDER] = [(group.key, members[group.key]) for group in ordered]


def _durations(path: str | None) -> dict[str, float]:
    """{nodeid: seconds} from an earlier run's results; nothing when there is none or it does not
    read (it only orders the work, so a bad file costs balance, never a verdict)."""
    if not path:
        return {}
    try:
        results = json.loads(Path(path).read_text(encoding="utf-8"))["results"]
        return {
            str(r["nodeid"]): float(r["duration"])
            for r in results
            if r.get("nodeid") and isinstance(r.get("duration"), int | float)
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """With --kconform-claims: run each group this worker claims, as it becomes free."""
    order = session.config.stash.get(_CLAIM_ORDER, None)
    if order is None:
        return None
    from kconform.shards import try_claim

    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    if session.config.option.collectonly:
        return True
    folder = Path(session.config.getoption("--kconform-claims"))
    chains: dict[str, Sequence[object]] = {i.nodeid: i.listchain() for i in session.items}
    for key, members in order:
        if not try_claim(folder, key):
            continue
        for index, item in enumerate(members):
            if index + 1 < len(members):
                nextitem: pytest.Item | None = members[index + 1]
            else:
                nextitem = _least_related(item, session.items, chains)
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
    return True


def _least_related(
    item: pytest.Item, items: list[pytest.Item], chains: dict[str, Sequence[object]]
) -> pytest.Item | None:
    """The item sharing the fewest collectors with `item`, as pytest's `nextitem` after a group:
    the worker does not know which group it will claim next, and tearing down to what every item
    shares keeps the session's targets up without leaving a module set up that the next group's
    item does not belong to (pytest would refuse it)."""
    mine = chains[item.nodeid]

    def shared(other: pytest.Item) -> int:
        count = 0
        for a, b in zip(mine, chains[other.nodeid], strict=False):
            if a is not b:
                break
            count += 1
        return count

    others = [other for other in items if other is not item]
    return min(others, key=shared) if others else None


def _shard_group(item: pytest.Item) -> str:
    """What must run in one worker: cases that judge one recorded run (`case(shares=)`: a
    client recipe, a target's volume run) stay together per subject and recording, so it is
    recorded once; any other case stands alone (each worker has its own target, so a disruptive
    case only ends its own worker's)."""
    info = _info(item)
    if info is not None and info.shares is not None:
        return f"{info.shares}::{_subject(item)}"
    return item.nodeid


def _select_cases(config: pytest.Config, items: list[pytest.Item]) -> None:
    patterns = [p.strip() for p in config.getoption("--cases").split(",") if p.strip()]
    level = config.getoption("--level")
    if not patterns and level == "all":
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        info = _info(item)
        if info is None:
            (drop if patterns else keep).append(item)
            continue
        wanted = not patterns or any(
            fnmatch.fnmatch(info.id, p) or info.id.startswith(p.rstrip("*")) for p in patterns
        )
        (keep if wanted and matches_level(info, level) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _disruptive_last(items: list[pytest.Item]) -> None:
    """Per target, cases marked `kconform_disruptive` (they may kill a fragile target, as the
    security suite kills the librdkafka mock) run after every other case, in their own order."""
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(_subject(item), index)
    items.sort(key=lambda item: (
        first_seen[_subject(item)], item.get_closest_marker("kconform_disruptive") is not None
    ))  # fmt: skip


def case_info(item: pytest.Item) -> CaseInfo | None:
    """The conformance case an item runs (None for a harness test): for plugins that select
    cases, such as the mutation self-test's."""
    return _info(item)


def subject_label(item: pytest.Item) -> str:
    """The target or client label an item runs against ("" for harness tests)."""
    return _subject(item)


def _subject(item: pytest.Item) -> str:
    """The target or client label an item runs against ("" for harness tests)."""
    spec = getattr(item, "callspec", None)
    for name in ("target", "client"):
        if spec is not None and name in spec.params:
            return str(spec.params[name].label)
    return ""


def _info(item: pytest.Item) -> CaseInfo | None:
    marker = item.get_closest_marker("kconform_case")
    return marker.args[0] if marker is not None else None


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> BrokerTarget:
    """The broker target of this parametrization (started once per session)."""
    state: RunState = request.config.stash[_STATE]
    return state.target(request.param)


@pytest.fixture(scope="session")
def client(request: pytest.FixtureRequest) -> Any:
    """The client driver under test of this parametrization (see fixtures/clients)."""
    from kconform.fixtures.clients.registry import create_driver

    driver = create_driver(request.param)
    reason = driver.unavailable_reason()
    if reason:
        pytest.skip(f"client {request.param.label} unavailable: {reason}")
    state: RunState = request.config.stash[_STATE]
    description = driver.describe()
    if description not in state.results.subjects:
        state.results.subjects.append(description)
    return driver


@pytest.fixture(scope="session")
def client_target(request: pytest.FixtureRequest) -> BrokerTarget:
    """The reference target client cases run against: its proxy records and injects."""
    from kconform.fixtures.targets.registry import TargetSpec

    state: RunState = request.config.stash[_STATE]
    brokers = request.config.getoption("--brokers") or DEFAULT_BROKERS
    return state.target(TargetSpec("reference", brokers=brokers))


@pytest.fixture(scope="session")
def runtime(request: pytest.FixtureRequest) -> LoopThread:
    """The event loop async cases run on."""
    state: RunState = request.config.stash[_STATE]
    return state.runtime


@pytest.fixture
def check(request: pytest.FixtureRequest, runtime: LoopThread) -> Iterator[Check]:
    info = _info(request.node)
    if info is None:
        raise pytest.UsageError(f"{request.node.nodeid} uses `check` but is not an @case")
    target: BrokerTarget | None = None
    death: str | None = None
    if "target" in request.fixturenames:
        target = request.getfixturevalue("target")
        state: RunState = request.config.stash[_STATE]
        if request.config.getoption("--stop-target-on-fail") and target.name in state.failed_must:
            pytest.skip(f"{target.name} already failed a MUST case (--stop-target-on-fail)")
        missing = sorted(info.requires - target.capabilities)
        if missing:
            pytest.skip(f"{UNSUPPORTED_PREFIX}{target.name} lacks {', '.join(missing)}")
        death = state.revive(target)
    if "client" in request.fixturenames:
        driver = request.getfixturevalue("client")
        target = request.getfixturevalue("client_target")
        missing = sorted(info.requires - driver.capabilities)
        if missing:
            pytest.skip(f"{UNSUPPORTED_PREFIX}{driver.name} lacks {', '.join(missing)}")
    recorder = Check(info, target)
    if death is not None and target is not None:
        recorder.note(f"{target.name} was started anew for this case; an earlier case had "
                      f"crashed it: {death}")  # fmt: skip
    if "client" in request.fixturenames:
        recorder.subject = request.getfixturevalue("client")
    request.node.stash[_CHECK] = recorder
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
    state: RunState = pyfuncitem.config.stash[_STATE]
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


HARNESS_ERRORS: tuple[type[BaseException], ...] = (
    Inconclusive, TargetError, ConnectionError, TimeoutError, asyncio.TimeoutError,
    HarnessDefect,
)  # fmt: skip


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    info = _info(item)
    if info is None:
        return report
    if report.when == "setup" and report.skipped:
        _finish(item, info, report, _skip_verdict(report), _skip_message(report))
    elif report.when == "call":
        verdict, message = _call_verdict(item, info, call)
        _finish(item, info, report, verdict, message)
    return report


def _skip_verdict(report: pytest.TestReport) -> Verdict:
    return Verdict.UNSUPPORTED if UNSUPPORTED_PREFIX in _skip_message(report) else Verdict.SKIPPED


def _skip_message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)


def _call_verdict(
    item: pytest.Item, info: CaseInfo, call: pytest.CallInfo[None]
) -> tuple[Verdict, str]:
    from kconform.codecs.wire import DecodeError

    check = item.stash.get(_CHECK, None)
    excinfo = call.excinfo
    if excinfo is None:
        return verdict_for(info.level, violated=bool(check and check.violated)), ""
    error = excinfo.value
    if isinstance(error, Unsupported):
        return Verdict.UNSUPPORTED, str(error)
    if isinstance(error, PreconditionUnmet):
        if check is not None and check.violated:  # a deviation seen before it still counts
            return verdict_for(info.level, violated=True), ""
        return Verdict.NOT_APPLICABLE, ""  # the note the check recorded says what was not met
    if isinstance(error, CaseAbort | AssertionError):
        return verdict_for(info.level, violated=True), str(error)
    if isinstance(error, pytest.skip.Exception):
        return Verdict.SKIPPED, str(error)
    if isinstance(error, (*HARNESS_ERRORS, DecodeError)):
        return Verdict.ERROR, f"{type(error).__name__}: {error}"
    return Verdict.ERROR, f"harness error: {type(error).__name__}: {error}"


def _finish(
    item: pytest.Item, info: CaseInfo, report: pytest.TestReport, verdict: Verdict, message: str
) -> None:
    state: RunState = item.config.stash[_STATE]
    check = item.stash.get(_CHECK, None)
    target: Any = check.target if check else _param_target(item, state)
    if check is not None and check.subject is not None:
        target = check.subject  # client cases: the client is what is judged
    subject = target.name if target is not None else _param_label(item)
    if check is not None and check.notes:
        message = "; ".join(filter(None, [message, *check.notes]))
    baseline = state.baselines.get(subject, {}).get(info.id)
    result = CaseResult(
        case_id=info.id, title=info.title, spec_ref=info.spec_ref, level=str(info.level),
        kip=info.kip, subject=subject, subject_kind=info.kind,
        implementation=target.implementation if target else "",
        version=target.version if target else "",
        verdict=str(verdict), message=message,
        expectations=list(check.expectations) if check else [],
        wire_log=evidence(check), started=check.started if check else time.time(),
        duration=report.duration, waited=check.waited if check else 0.0, baseline=baseline,
        baseline_why=state.baseline_why.get(subject, {}).get(info.id),
        nodeid=item.nodeid, rules=list(info.rules),
    )  # fmt: skip
    state.record(result)
    if verdict is Verdict.FAIL and info.level is Level.MUST:
        state.failed_must.add(subject)
    _set_outcome(report, result)


def _param_target(item: pytest.Item, state: RunState) -> BrokerTarget | None:
    spec = getattr(item, "callspec", None)
    label = spec.params.get("target").label if spec and "target" in spec.params else None
    return state.targets.get(label) if label else None


def _param_label(item: pytest.Item) -> str:
    spec = getattr(item, "callspec", None)
    for name in ("client", "target"):
        if spec and name in spec.params:
            return str(spec.params[name].label)
    return "harness"


def _set_outcome(report: pytest.TestReport, result: CaseResult) -> None:
    """Pass/fail as CI should see it: baseline differences, or fail/error without a baseline."""
    from kconform.reports.common import fails_run, failure_reason

    if fails_run(result):
        report.outcome = "failed"
        report.longrepr = format_failure(result, failure_reason(result))
    elif report.when == "call" and report.failed:
        report.outcome = "passed"  # an expected violation (baseline, non-strict, informational)
        report.longrepr = None
    report.user_properties.append(("kconform_verdict", result.verdict))
