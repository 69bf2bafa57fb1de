"""Hypothesis inside a case: the thread it runs on, the limits it keeps, what it reports.

Cases are `async def` and run on the plugin's loop thread, where the connections, the wire log
and the cleanup live. Hypothesis is synchronous and re-runs the test function many times while
it searches and shrinks. So the case hands Hypothesis to a worker thread
(`asyncio.to_thread`) and awaits it; the test function, on that thread, submits each
example's I/O back to the case's loop (`asyncio.run_coroutine_threadsafe`) and blocks on the
result. The loop stays free to run the I/O, all I/O stays on one loop, and Hypothesis needs to
know nothing about asyncio. (The alternative, a private event loop per example inside the case,
would strand connections on loops that the case's cleanup cannot reach.)

Hypothesis has no wall-clock budget of its own, so `FuzzSession.guard` raises `BudgetSpent` (a
BaseException, which Hypothesis neither shrinks nor reports) once the case's time is up, its
shrink allowance after a first failure is used, the case was cancelled, or the target is gone.
Findings are recorded by the session as they happen, shortest first, so the report never
depends on how Hypothesis' own run ended.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.errors import FlakyFailure

from kconform.engine.check import Check
from kconform.engine.fuzz.budget import Limits
from kconform.engine.fuzz.corpus import corpus_root, database, is_selftest, save_trace
from kconform.errors import HarnessDefect, Inconclusive, SubjectViolation
from kconform.fixtures.targets.base import BrokerAddress, BrokerTarget, TargetError
from kconform.fixtures.wirelog import WireEntry, WireLog

T = TypeVar("T")
IO_MARGIN = 5.0  # seconds the bridge waits beyond the I/O's own timeout before giving up
MAX_SHAPES_SHOWN = 40
DEATH_WAIT = 2.0
"""Seconds `Arena.death` gives a target that stopped answering to show it exited."""


class BudgetSpent(BaseException):
    """Ends Hypothesis' run: time is up, the case was cancelled, or the target is gone."""


class DefectEscape(BaseException):
    """Carries a `HarnessDefect` out of an example: Hypothesis takes any Exception for a
    finding and would shrink it, so the defect travels as a BaseException until `run` has it."""

    def __init__(self, defect: HarnessDefect) -> None:
        super().__init__(str(defect))
        self.defect = defect


def _escape(message: str) -> DefectEscape:
    return DefectEscape(HarnessDefect(message))


@dataclass
class Finding:
    """One failing example: a one-line summary, the readable report, its evidence."""

    summary: str
    report: str
    size: int  # shorter is better: payload bytes or steps
    replay: dict[str, Any] | None = None
    evidence: list[WireEntry] = field(default_factory=list)


class FuzzSession:
    """One fuzz case's Hypothesis run (see the module docstring)."""

    def __init__(self, check: Check, limits: Limits) -> None:
        assert check.target is not None
        self.check = check
        self.limits = limits
        self.loop = asyncio.get_running_loop()
        self.target_name = check.target.name
        self.case_id = check.info.id
        self.root = corpus_root(self.target_name)
        self.stop = threading.Event()
        self.started = time.monotonic()
        self.first_failure_at: float | None = None
        self.first_failure_example = 0
        self.examples = 0
        self.shapes: Counter[tuple[str, ...]] = Counter()
        self.best: Finding | None = None
        self._best_rank = (False, 0)
        self.failures = 0
        self.ended_by = ""
        self.log = WireLog(max_entries=2000)
        self._mark = 0

    # --- on the Hypothesis thread ------------------------------------------------------------

    def io(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run `coroutine` on the case's loop and wait for it (from the Hypothesis thread)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout + IO_MARGIN)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise _escape(f"the case loop did not finish I/O within {timeout:.0f}s") from None

    def guard(self) -> None:
        """Stop the search when time is up (see the module docstring)."""
        if self.stop.is_set():
            raise BudgetSpent("the case was cancelled")
        now = time.monotonic()
        if self.first_failure_at is not None:
            if now > self.first_failure_at + self.limits.shrink_seconds:
                raise BudgetSpent(f"shrink allowance ({self.limits.shrink_seconds:.0f}s) used")
        elif now > self.started + self.limits.seconds:
            raise BudgetSpent(f"time budget ({self.limits.seconds:.0f}s) used")
        elif not self.limits.timed and self.examples >= self.limits.max_examples:
            # a pipelined example holds many requests: the profile's count is of requests
            raise BudgetSpent(f"example budget ({self.limits.max_examples} requests) used")

    def begin_example(self, requests: int = 1) -> None:
        """An example starts; it counts as `requests` examples (a pipelined batch, `stream`)."""
        self.guard()
        self.examples += requests
        self._mark = self.log.mark()

    def count(self, shape: tuple[str, ...]) -> None:
        self.shapes[shape] += 1

    def found(self, finding: Finding, *, on_record: bool = False) -> None:
        """Record a failing example; the shortest one is the one reported, and one no known
        deviation explains before any that one does. `on_record` (a known deviation's finding
        in a coverage run): the search goes on to its budget rather than shrinking."""
        self.failures += 1
        finding.evidence = self.log.since(self._mark)
        if not self.first_failure_example:
            self.first_failure_example = self.examples
        if self.first_failure_at is None and not on_record:
            self.first_failure_at = time.monotonic()
        rank = (on_record, finding.size)
        if self.best is None or rank <= self._best_rank:
            self.best, self._best_rank = finding, rank

    def settings(self, steps: int = 0) -> settings:
        """Explicit settings: the case's example count, its own database, no deadline."""
        return settings(
            max_examples=self.limits.max_examples,
            deadline=None,
            database=database(self.root, self.case_id, self.target_name),
            suppress_health_check=list(HealthCheck),
            stateful_step_count=max(1, steps),
            report_multiple_bugs=False,
            print_blob=False,
            verbosity=Verbosity.quiet,
            phases=tuple(Phase),
        )

    # --- on the case's loop ------------------------------------------------------------------

    async def run(self, test: Callable[[], None]) -> None:
        """Run a Hypothesis test (a @given function or a state machine) on a worker thread."""

        def body() -> str | HarnessDefect:
            try:
                test()
            except BudgetSpent as spent:
                return f"stopped: {spent}"
            except DefectEscape as escaped:
                return escaped.defect
            except Exception as exc:  # Hypothesis re-raising the (shrunk) failure, or Flaky
                # Stopping a state machine mid-example makes Hypothesis see "inconsistent data
                # generation" and raise that instead: what we raised is in the context chain.
                cause = _ours(exc)
                if isinstance(cause, BudgetSpent):
                    return f"stopped: {cause}"
                if isinstance(cause, DefectEscape):
                    return cause.defect
                if isinstance(exc, FlakyFailure) and self.best is not None:
                    # A real target's answer can depend on timing: replayed, the failing
                    # example passed (or failed elsewhere). What it did the first time stands.
                    return (
                        "the failing example did not fail the same way when Hypothesis replayed "
                        "it (the target's answers depend on timing); its first failure is "
                        "reported"
                    )
                first = str(exc).strip().splitlines()[:1]
                return f"hypothesis reported {type(exc).__name__}: {''.join(first)[:200]}"
            return "finished: the example budget was used"

        try:
            ended = await asyncio.to_thread(body)
        except asyncio.CancelledError:
            self.stop.set()  # the worker thread stops at its next guard
            raise
        if isinstance(ended, HarnessDefect):
            raise Inconclusive(f"harness failure inside an example: {ended}") from ended
        self.ended_by = ended
        if ended.startswith("hypothesis reported") and self.best is None:
            raise Inconclusive(f"{ended}, but no example recorded a failure")

    def conclude(self, rule: str, expected: str) -> None:
        """Record statistics, and the finding (or the clean run) as the case's expectation."""
        check = self.check
        elapsed = max(time.monotonic() - self.started, 1e-6)
        check.observe("examples run", self.examples)
        check.observe("examples/s", round(self.examples / elapsed, 1))
        check.observe("distinct response shapes", len(self.shapes))
        shapes = [" ".join(s) for s, _ in self.shapes.most_common(MAX_SHAPES_SHOWN)]
        check.observe("response shapes (most frequent first)", shapes)
        check.note(f"Hypothesis search ({elapsed:.1f}s): {self.ended_by}")
        if self.examples == 0:
            raise Inconclusive(f"no example ran ({self.ended_by})")
        if self.best is None:
            check.expect(rule, expected, f"held for all {self.examples} examples", ok=True)
            return
        best = self.best
        check.observe("example that first failed", self.first_failure_example)
        check.expect(rule, expected, best.summary, ok=False)
        check.note(best.report)
        path = save_trace(self.root, self.case_id, self.target_name, best.report, best.replay)
        where = "self-test corpus (not committed)" if is_selftest(self.target_name) else "corpus"
        check.note(f"{self.failures} failing example(s); shortest saved to the {where}: {path}")
        for entry in best.evidence:
            check.wire_log.append(entry)


R = TypeVar("R")


def guarded(step: Callable[..., R]) -> Callable[..., R]:
    """An example (or state machine rule) whose unexpected exceptions are the harness's.

    A finding is a SubjectViolation or an AssertionError; BudgetSpent and DefectEscape pass
    through. Anything else becomes a HarnessDefect in a DefectEscape: Hypothesis would take it
    for a finding, shrink it, and the verdict would blame the target for the harness's own
    failure."""

    @functools.wraps(step)
    def run(*args: Any, **kwargs: Any) -> R:
        try:
            return step(*args, **kwargs)
        except (SubjectViolation, AssertionError, BudgetSpent, DefectEscape):
            raise
        except Exception as exc:
            raise _escape(f"{step.__name__}: {type(exc).__name__}: {exc}") from exc

    return run


def _ours(error: BaseException) -> BaseException | None:
    """The BudgetSpent or DefectEscape `error` was raised while handling, if any."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, BudgetSpent | DefectEscape):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class Arena:
    """The target examples run against.

    At first the case's own target. If it dies (or stops answering), shrinking goes on against
    fresh private instances of the same implementation, started and stopped here, so the input
    reported is the shrunk one; the case's own target stays dead until the next case's set-up
    starts it anew (embedded targets, `RunState.revive`), or, when it hangs rather than dies,
    `close` starts it anew so the cases after this one do not meet a hung process. Targets the
    harness cannot start anew (external clusters) end the search.
    """

    def __init__(self, target: BrokerTarget) -> None:
        self.shared = target
        self.current = target
        self.private: BrokerTarget | None = None
        self.spent: str | None = None
        self.shared_spent: str | None = None
        self.respawns = 0

    def broker(self) -> BrokerAddress:
        if self.spent is not None:
            self._respawn()
        return self.current.brokers[0]

    def died(self, reason: str) -> None:
        self.spent = reason
        if self.current is self.shared:
            self.shared_spent = reason

    def death(self, within: float = DEATH_WAIT) -> str | None:
        """Why the current target is gone, if its process says so within `within` seconds (a
        process that closed its sockets while aborting may not have exited yet)."""
        give_up = time.monotonic() + within
        while True:
            try:
                self.current.check_alive()
            except TargetError as exc:
                return str(exc)
            if time.monotonic() >= give_up:
                return None
            time.sleep(0.05)

    def _respawn(self) -> None:
        fresh = fresh_instance(self.shared)
        if fresh is None:
            raise BudgetSpent(f"{self.shared.name} is gone and cannot be restarted: {self.spent}")
        self.close()
        try:
            fresh.start()
        except TargetError as exc:
            raise _escape(f"cannot start a fresh {self.shared.name}: {exc}") from exc
        self.private = self.current = fresh
        self.spent = None
        self.respawns += 1

    def close(self) -> str | None:
        """Stop the private instance; start the case's own target anew if it hung (what to
        note on the case, if so). A dead one is left to the next case's set-up."""
        if self.private is not None:
            self.private.stop()
            self.private = None
        self.current = self.shared
        if self.shared_spent is None or not self.shared.revivable:
            return None
        try:
            self.shared.check_alive()
        except TargetError:
            return None
        self.shared.revive()
        return f"{self.shared.name} stopped answering ({self.shared_spent[:200]}); started anew"


def fuzz_cases(request: pytest.FixtureRequest) -> tuple[int, int]:
    """How many fuzz case runs the session holds, and how many are left (this one included):
    a --budget is shared among them."""
    items = request.session.items
    fuzz = [
        i
        for i in items
        if (m := i.get_closest_marker("kconform_case")) and m.args[0].id.startswith("fuzz.")
    ]
    left = fuzz[fuzz.index(request.node) :] if request.node in fuzz else fuzz
    return max(1, len(fuzz)), max(1, len(left))


def fresh_instance(target: BrokerTarget) -> BrokerTarget | None:
    """A new, unstarted, one-broker instance of `target`'s implementation, where its kind
    declares that cheap (`fuzz_respawns`); its name is its target entry, variant included."""
    from kconform.fixtures.targets.registry import (
        UnknownTarget,
        create_target,
        find_kind,
        parse_targets,
    )

    kind = find_kind(target.name)
    if kind is None or not kind.fuzz_respawns:
        return None
    try:
        (spec,) = parse_targets(target.name, brokers=1)
    except UnknownTarget:
        return None
    return create_target(spec)
