"""`--coverage`: JaCoCo on the broker nodes and Java clients, dumped after every case (issue 32).

The plugin's part: with `--coverage`, each target whose kind can carry a Java agent (its kind's
`jvm_agent`, a `jvm_agent.AgentHost`) gets JaCoCo's agent on its nodes before it starts
(`fixtures/coverage`), and each Java client driver gets it on every JVM it starts (one per run:
`client_agent`). The counters are dumped and reset at these moments, each dump into a file of
its own under the coverage folder (`coverage/` beside the results unless `--kconform-coverage`
says where): right after the target started (`startup`), when a case's setup begins
(`between`: what the broker did on its own since the last case), and when its teardown ends
(the case itself, its cleanups included). At the end of the session `jacococli report` turns
all the dumps into the run's XML and each case's dumps into its own, and `coverage.json` keeps
the chosen classes' counters, lines and which cases reached each line for the report
(`reports/html`).

Without `--coverage` none of this runs: no agent, no dump, no folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kconform.fixtures.coverage import jacoco, wire
from kconform.fixtures.coverage.accounted import BROKER, Accounting
from kconform.fixtures.coverage.agent import CoverageAgent
from kconform.fixtures.coverage.client_accounted import CLIENT
from kconform.fixtures.coverage.client_agent import ClientRunsAgent
from kconform.fixtures.coverage.client_selection import CLIENT_CLASSES
from kconform.fixtures.coverage.client_selection import SOURCE_ARTIFACTS as CLIENT_ARTIFACTS
from kconform.fixtures.coverage.selection import BROKER_CLASSES, Chosen
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.targets.jvm_agent import AgentHost
from kconform.fixtures.targets.kafka_dist import cache_root
from kconform.plugin.items import case_info, subject_label
from kconform.reports.common import slug
from kconform.reports.coverage import Report, account, attribute, build_model, parse_xml

__all__ = ["COVERAGE", "COVERAGE_JSON", "STARTUP", "CoverageSession", "coverage_folder"]

COVERAGE_JSON = "coverage.json"
STARTUP, BETWEEN = "(startup)", "(between cases)"
SHARED_RUNS = (
    "A case judging a client run an earlier case recorded (its result's recorded_by) started "
    "no JVM: that run's lines are the recording case's."
)


Release = tuple[str, list[Path]]
"""A measured subject's release and its jars holding the chosen classes."""


@dataclass
class Measured:
    """One subject under JaCoCo: its agent, what counts, and where its classes come from."""

    agent: CoverageAgent | ClientRunsAgent
    chosen: tuple[Chosen, ...]
    artifacts: tuple[str, ...]  # the release's artifacts holding them (and their -sources)
    release: Callable[[], Release | None]  # asked at report time: the subject has started
    accounting: Accounting  # the reviewed list of its missed branches, and its floors
    note: str = ""  # said under the subject's figures


class CoverageSession:
    """The agents of this session's targets and clients, and the order of their dumps."""

    def __init__(self, folder: Path, *, summary: bool = False) -> None:
        self.folder = folder
        self.summary = summary  # --coverage-summary: the run's report only (what a gate needs)
        self.tools: jacoco.JacocoTools | None = None
        self.agents: dict[str, Measured] = {}
        self.dumps: dict[str, list[tuple[str, str]]] = {}  # label -> [(stem, case)]
        self.started = time.monotonic()

    def _tools(self) -> jacoco.JacocoTools:
        if self.tools is None:
            self.tools = jacoco.resolve_tools(cache_root())
        return self.tools

    def attach(self, label: str, target: BrokerTarget) -> None:
        """Before `target.start()`: its nodes will run the agent (TargetUnavailable-free:
        a kind without agents was refused at configure time)."""
        if not isinstance(target, AgentHost):
            return
        agent = CoverageAgent(self._tools(), slug(label))
        target.jvm_agent = agent
        self.agents[label] = Measured(agent, BROKER_CLASSES, jacoco.SOURCE_ARTIFACTS,
                                      lambda: _broker_release(target), BROKER)  # fmt: skip
        self.dumps[label] = []

    def attach_client(self, label: str, driver: object) -> None:
        """Before the driver's first run: each JVM it starts will run the agent (a driver that
        is not a JVM was refused at configure time and is left alone here)."""
        from kconform.fixtures.clients.java import JavaDriver

        if not isinstance(driver, JavaDriver) or label in self.agents:
            return
        agent = ClientRunsAgent(self._tools(), slug(label), self.folder / slug(label) / "pending")
        driver.jvm_agent = agent.run_option
        self.agents[label] = Measured(agent, CLIENT_CLASSES, CLIENT_ARTIFACTS,
                                      lambda: _client_release(driver), CLIENT,
                                      SHARED_RUNS)  # fmt: skip
        self.dumps[label] = []

    def dump(self, label: str, case: str) -> None:
        """Every node of `label` dumped and reset (every JVM a client ran since the last dump
        gathered) into one file named after `case`."""
        if label not in self.agents:
            return
        agent = self.agents[label].agent
        order = self.dumps[label]
        stem = f"{len(order):05d}"
        if agent.write_dump(self.folder / slug(label) / "exec", stem):
            order.append((stem, case))

    def dump_all(self, case: str, *, ran_on: str = "") -> None:
        for label in self.agents:
            self.dump(label, case if label == ran_on else BETWEEN)

    def finish(self) -> None:
        """The last dump, while the targets still run (they are stopped after this)."""
        self.dump_all(BETWEEN)

    def write_reports(self) -> None:
        """One XML for the run and one per case, then coverage.json; errors are printed, the
        run's verdicts do not depend on them."""
        for label, measured in self.agents.items():
            try:
                self._write(label, measured)
            except (jacoco.CoverageUnavailable, OSError, ValueError) as exc:
                print(f"kconform: coverage of {label} not written: {exc}", file=sys.stderr)

    def _write(self, label: str, measured: Measured) -> None:
        assert self.tools is not None
        folder = self.folder / slug(label)
        release = measured.release()
        if release is None or not self.dumps[label]:
            return
        version, jars = release
        agent, chosen = measured.agent, measured.chosen
        classes = jacoco.release_classes(
            [j for j in jars if j.is_file()],
            cache_root() / "jacoco" / "classes" / _digest(jars, chosen),
            chosen,
        )
        by_stem = {stem: sorted((folder / "exec").glob(f"*/{stem}.exec"))
                   for stem, _ in self.dumps[label]}  # fmt: skip
        run_xml = folder / "coverage.xml"
        every = [f for files in by_stem.values() for f in files]
        jacoco.report(self.tools, every, classes, run_xml, name=f"kconform {label}")
        run = parse_xml(run_xml)
        if self.summary:  # no JVM per case, no -sources lookup: seconds instead of minutes
            per_case: list[tuple[str, Report]] = []
            sources: dict[str, str | None] = {c.sourcefile: None for c in run.classes.values()}
            missing: dict[str, Path | None] = {}
        else:
            per_case = self._case_reports(label, by_stem, classes, folder)
            sources = _sources(version, run, measured.artifacts)
            missing = jacoco.resolve_sources(version, cache_root(), measured.artifacts)
        model = build_model(run, attribute(per_case), sources=sources, chosen=chosen)
        cases = [case for _, case in self.dumps[label]]
        model.update(
            target=label,
            release=version,
            jacoco=self.tools.version,
            units=agent.units,
            cases=sorted(set(cases)),
            lost=agent.lost,
            notes=[measured.note] if measured.note else [],
            sources_missing=sorted(a for a, jar in missing.items() if jar is None),
            chosen=[{"name": c.name, "methods": list(c.methods), "why": c.why}
                    for c in chosen],
        )  # fmt: skip
        accounting = measured.accounting
        model.update(summary=self.summary, missed=account(model, version, accounting),
                     accounting=accounting.name, accounted_in=accounting.source)  # fmt: skip
        (folder / COVERAGE_JSON).write_text(json.dumps(model, indent=1), "utf-8")

    def _case_reports(
        self, label: str, by_stem: dict[str, list[Path]], classes: Path, folder: Path
    ) -> list[tuple[str, Report]]:
        """Each case's report (its dumps merged); identical probe sets share one JaCoCo run."""
        assert self.tools is not None
        stems_of: dict[str, list[str]] = {}
        for stem, case in self.dumps[label]:
            stems_of.setdefault(case, []).append(stem)
        scratch = folder / "cases"
        scratch.mkdir(exist_ok=True)
        done: dict[str, Report] = {}
        out = []
        for case, stems in stems_of.items():
            files = [f for s in stems for f in by_stem[s]]
            key = _probe_key(files)
            if key not in done:
                xml = scratch / f"{key}.xml"
                jacoco.report(self.tools, files, classes, xml, name=case)
                done[key] = parse_xml(xml)
                xml.unlink()
            out.append((case, done[key]))
        shutil.rmtree(scratch, ignore_errors=True)
        return out


def _broker_release(target: AgentHost) -> Release | None:
    return target.release_jars(jacoco.SOURCE_ARTIFACTS)


def _client_release(driver: Any) -> Release | None:
    """The Java client's version and kafka-clients jar: its distribution's, else the one on
    `$KCONFORM_JAVA_CLASSPATH`."""
    version = str(driver.version)
    if driver.libs is not None:
        return version, [driver.libs / f"kafka-clients-{version}.jar"]
    for entry in str(driver.classpath).split(":"):
        folder = Path(entry.removesuffix("*") or ".")
        found = sorted(folder.glob(f"kafka-clients-{version}.jar")) if folder.is_dir() else []
        if found or Path(entry).name == f"kafka-clients-{version}.jar":
            return version, found or [Path(entry)]
    return None


def _digest(paths: list[Path], chosen: tuple[Chosen, ...]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(f"{p.name}:{p.stat().st_size if p.is_file() else 0}".encode())
    h.update(repr(chosen).encode())
    return h.hexdigest()[:16]


def _probe_key(files: list[Path]) -> str:
    """What the probes of these dumps say, merged, as a hash (session ids and times left out)."""
    hit: dict[str, set[int]] = {}
    for f in files:
        for cls in wire.split_blocks(f.read_bytes()).classes:
            hit.setdefault(f"{cls.class_id}:{cls.name}", set()).update(
                i for i, p in enumerate(cls.probes) if p
            )
    text = ";".join(f"{k}={sorted(v)}" for k, v in sorted(hit.items()) if v)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _sources(version: str, run: Report, artifacts: tuple[str, ...]) -> dict[str, str | None]:
    """sourcefile -> text from the release's `-sources` jars (None where there are none)."""
    import zipfile

    jars = [j for j in jacoco.resolve_sources(version, cache_root(), artifacts).values()
            if j is not None]  # fmt: skip
    found: dict[str, str | None] = {c.sourcefile: None for c in run.classes.values()}
    for jar in jars:
        with zipfile.ZipFile(jar) as archive:
            names = set(archive.namelist())
            for sourcefile in found:
                if found[sourcefile] is None and sourcefile in names:
                    found[sourcefile] = archive.read(sourcefile).decode("utf-8", "replace")
    return found


# --- hooks ---------------------------------------------------------------------------------------


COVERAGE = pytest.StashKey[CoverageSession]()
"""The session's CoverageSession, on the config's stash (only with --coverage)."""


def coverage_folder(config: pytest.Config) -> Path:
    """--kconform-coverage, else `coverage/` beside the results file (or in the temp dir)."""
    chosen = config.getoption("--kconform-coverage")
    if chosen:
        return Path(chosen)
    results = config.getoption("--kconform-results")
    import tempfile

    return (
        Path(results).parent if results else Path(tempfile.mkdtemp(prefix="kconform-"))
    ) / "coverage"


def session_of(config: pytest.Config) -> CoverageSession | None:
    return config.stash.get(COVERAGE, None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    session = session_of(item.config)
    if session is not None:
        session.dump_all(BETWEEN)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Any:
    yield
    session = session_of(item.config)
    info = case_info(item)
    if session is not None and info is not None:
        session.dump_all(info.id, ran_on=subject_label(item))
