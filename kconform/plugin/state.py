"""What the kconform pytest plugin keeps for one session: the targets it started, the results it
has recorded (flushed to the results file as the run goes), and the verdict baselines; and how
one result is written down: its evidence (the wire log) and the text of a failure.

The hooks here create the session's `RunState` and close it: an interrupted session (Ctrl-C,
SIGTERM, `-x`) writes what it has as an interrupted run.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kconform import __version__
from kconform.engine.check import Check
from kconform.engine.results import CaseResult
from kconform.fixtures.runtime import LoopThread
from kconform.fixtures.targets.base import BrokerTarget, Capability, TargetError, TargetUnavailable
from kconform.fixtures.targets.registry import TargetSpec, create_target
from kconform.plugin.coverage import COVERAGE, STARTUP, CoverageSession, coverage_folder
from kconform.plugin.items import case_info, subject_label
from kconform.reports.model import RunResults, layered_baselines

__all__ = ["CHECK", "FLUSH_EVERY", "STATE", "RunState", "evidence", "format_failure"]

FLUSH_EVERY = 2.0  # seconds between results-file rewrites during a run
MAX_LOG_ENTRIES = 200
MAX_RAW_BYTES = 4096


class RunState:
    """What the plugin keeps for one session: targets, results, baselines."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.results = RunResults(kconform_version=__version__, started=time.time())
        path = config.getoption("--kconform-results")
        self.results_path = Path(path) if path else None
        self.baselines: dict[str, Mapping[str, str]] = {}  # expected of each subject, any case
        self.baseline_why: dict[str, Mapping[str, str]] = {}
        paths = [Path(b) for b in config.getoption("--baseline")]
        try:
            layered = layered_baselines(paths, config.getoption("--brokers"))
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        for subject, (verdicts, why) in layered.items():
            self.baselines[subject], self.baseline_why[subject] = verdicts, why
        self.targets: dict[str, BrokerTarget] = {}
        self.withheld = _capabilities(config.getoption("--without") or "")
        self.unavailable: dict[str, str] = {}
        self.failed_must: set[str] = set()
        self.interrupted = False  # set when the session ends interrupted (pytest_sessionfinish)
        self._runtime: LoopThread | None = None
        self._flushed = 0.0
        self.coverage: CoverageSession | None = None
        if config.getoption("--coverage"):
            self.coverage = config.stash[COVERAGE] = CoverageSession(
                coverage_folder(config), summary=config.getoption("--coverage-summary")
            )

    @property
    def runtime(self) -> LoopThread:
        if self._runtime is None:
            self._runtime = LoopThread("kconform-cases")
        return self._runtime

    def target(self, spec: TargetSpec) -> BrokerTarget:
        if spec.label in self.unavailable:
            pytest.skip(f"target {spec.label} unavailable: {self.unavailable[spec.label]}")
        if spec.label not in self.targets:
            target = create_target(spec)
            try:
                if self.coverage is not None:
                    self.coverage.attach(spec.label, target)
                target.start()
            except TargetUnavailable as exc:
                self.unavailable[spec.label] = exc.reason
                pytest.skip(f"target {spec.label} unavailable: {exc.reason}")
            except TargetError as exc:
                self.unavailable[spec.label] = f"failed to start: {exc}"
                pytest.skip(f"target {spec.label} failed to start: {exc}")
            if self.coverage is not None:
                self.coverage.dump(spec.label, STARTUP)
            withheld = self.withheld & target.capabilities
            if withheld:  # as if the target lacked them (precondition self-test, rehearsals)
                target.capabilities = target.capabilities - withheld
            self.targets[spec.label] = target
            info = target.describe()
            if withheld:
                info["withheld_capabilities"] = sorted(withheld)
            self.results.subjects.append(info)
        return self.targets[spec.label]

    def revive(self, target: BrokerTarget) -> str | None:
        """Start an embedded target anew if an earlier case crashed it, and say how it died.

        The case that crashed it has judged the crash already; without a fresh instance every
        later case would end in `error` on a dead target, which says nothing about the subject.
        Targets the harness cannot restart (real brokers, external clusters) are left as found:
        the next case meets the dead target and reports it as a harness error."""
        if not target.revivable:
            return None
        try:
            target.check_alive()
            return None
        except TargetError as exc:
            death = str(exc)
        target.revive()  # a TargetError here ends the case in `error`: it cannot be run
        return death

    def record(self, result: CaseResult) -> None:
        self.results.results.append(result)
        if time.monotonic() - self._flushed >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Rewrite the results file (throttled while running: a whole rewrite per case would
        make long runs quadratic; what a crash could lose is at most FLUSH_EVERY seconds)."""
        self._flushed = time.monotonic()
        if self.results_path is None:
            return
        try:
            self.results.write(self.results_path)
        except OSError as exc:  # the folder went away or read-only mid-run: keep the results
            fallback = Path(tempfile.gettempdir()) / f"kconform-results-{os.getpid()}.json"
            print(
                f"kconform: cannot write {self.results_path} ({exc.strerror or exc}); "
                f"the results so far are kept in {fallback}",
                file=sys.stderr,
                flush=True,
            )
            self.results_path = fallback
            self.results.write(fallback)

    def close(self) -> None:
        if self._runtime is not None:  # an interrupted case unwinds while its targets still run
            self._runtime.cancel_pending()
        if self.coverage is not None:
            self.coverage.finish()  # while the targets run
        for target in self.targets.values():
            target.stop()
        if self.coverage is not None:
            self.coverage.write_reports()
        if self._runtime is not None:
            self._runtime.stop()
        self.results.finished = time.time()
        self.results.interrupted = self.interrupted
        self.flush()


STATE = pytest.StashKey[RunState]()
"""The session's RunState, on the config's stash."""
CHECK = pytest.StashKey[Check]()
"""A case's Check, on its item's stash (set by the `check` fixture, read by the verdict hook)."""


@pytest.hookimpl(trylast=True)  # after the options are checked (kconform.plugin.options)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[STATE] = RunState(config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Note the subjects the selected cases run against, before any runs: an interrupted run's
    reports list a subject whose cases had not started, instead of leaving it out."""
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    planned: dict[str, str] = {}
    cases: dict[str, int] = {}  # case runs selected per subject: "interrupted after 3 of 68"
    for item in session.items:
        info, label = case_info(item), subject_label(item)
        if info is not None and label:
            planned.setdefault(label, info.kind)
            cases[label] = cases.get(label, 0) + 1
    state.results.planned = [
        {"name": name, "kind": kind, "cases": cases[name]} for name, kind in planned.items()
    ]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(STATE, None)
    if state is not None and exitstatus == pytest.ExitCode.INTERRUPTED:
        state.interrupted = True


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()


def _capabilities(text: str) -> frozenset[Capability]:
    """`--without a,b`: capability names, a usage error naming the known ones otherwise."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in {c.value for c in Capability}]
    if unknown:
        known = ", ".join(c.value for c in Capability)
        raise pytest.UsageError(f"--without: unknown capability {unknown[0]!r} (known: {known})")
    return frozenset(Capability(n) for n in names)


def evidence(check: Check | None) -> list[dict[str, Any]]:
    """The case's wire log as results.json keeps it: the newest entries, raw bytes capped."""
    if check is None:
        return []
    entries = check.evidence()[-MAX_LOG_ENTRIES:]
    out = []
    for entry in entries:
        data = entry.to_dict()
        data["raw"] = data["raw"][: 2 * MAX_RAW_BYTES]
        out.append(data)
    return out


def format_failure(result: CaseResult, why: str) -> str:
    """Expected vs observed and the wire exchange, as the terminal shows a failed case."""
    lines = [
        f"{result.case_id} [{result.level}] on {result.subject}: {why}",
        f"  {result.title}",
        f"  spec: {result.spec_ref}",
        f"  rules: {', '.join(result.rules) or '(none recorded)'} (docs/rules.md)",
    ]
    if result.message:
        lines.append(f"  {result.message}")
    for e in result.expectations:
        mark = "ok " if e.ok else "BAD"
        lines.append(f"  {mark} {e.what}: expected {e.expected!r}, observed {e.observed!r}")
    if result.wire_log:
        lines.append("  wire log:")
        for entry in result.wire_log[-30:]:
            note = f"  [{entry['note']}]" if entry.get("note") else ""
            lines.append(f"    {entry['direction']:<15} {entry['summary'][:160]}{note}")
    return "\n".join(lines)
