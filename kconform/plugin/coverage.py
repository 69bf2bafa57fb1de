"""`--coverage`: JaCoCo on the broker nodes, dumped after every case (issue 32).

The plugin's part: with `--coverage`, each target whose kind can carry a Java agent (the
`apache` kind) gets JaCoCo's agent on its nodes before it starts (`fixtures/coverage`). The
counters are dumped and reset at these moments, each dump into a file of its own under the
coverage folder (`coverage/` beside the results unless `--kconform-coverage` says where):
right after the target started (`startup`), when a case's setup begins (`between`: what the
broker did on its own since the last case), and when its teardown ends (the case itself,
its cleanups included). At the end of the session `jacococli report` turns all the dumps
into the run's XML and each case's dumps into its own, and `coverage.json` keeps the chosen
classes' counters, lines and which cases reached each line for the report (`reports/html`).

Without `--coverage` none of this runs: no agent, no dump, no folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kconform.fixtures.coverage import jacoco, wire
from kconform.fixtures.coverage.agent import CoverageAgent
from kconform.fixtures.coverage.selection import BROKER_CLASSES
from kconform.fixtures.targets.apache import ApacheTarget
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.targets.kafka_dist import cache_root
from kconform.plugin.items import case_info, subject_label
from kconform.reports.common import slug
from kconform.reports.coverage import Report, account, attribute, build_model, parse_xml

__all__ = ["COVERAGE", "COVERAGE_JSON", "STARTUP", "CoverageSession", "coverage_folder"]

COVERAGE_JSON = "coverage.json"
STARTUP, BETWEEN = "(startup)", "(between cases)"


class CoverageSession:
    """The agents of this session's targets and the order of their dumps."""

    def __init__(self, folder: Path, *, summary: bool = False) -> None:
        self.folder = folder
        self.summary = summary  # --coverage-summary: the run's report only (what a gate needs)
        self.tools: jacoco.JacocoTools | None = None
        self.agents: dict[str, tuple[CoverageAgent, ApacheTarget]] = {}
        self.dumps: dict[str, list[tuple[str, str]]] = {}  # label -> [(stem, case)]
        self.started = time.monotonic()

    def attach(self, label: str, target: BrokerTarget) -> None:
        """Before `target.start()`: its nodes will run the agent (TargetUnavailable-free:
        a kind without agents was refused at configure time)."""
        if not isinstance(target, ApacheTarget):
            return
        if self.tools is None:
            self.tools = jacoco.resolve_tools(cache_root())
        agent = CoverageAgent(self.tools, slug(label))
        target.jvm_agent = agent
        self.agents[label] = (agent, target)
        self.dumps[label] = []

    def dump(self, label: str, case: str) -> None:
        """Every node of `label` dumped and reset into one file named after `case`."""
        if label not in self.agents:
            return
        agent, _ = self.agents[label]
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
        for label, (agent, target) in self.agents.items():
            try:
                self._write(label, agent, target)
            except (jacoco.CoverageUnavailable, OSError, ValueError) as exc:
                print(f"kconform: coverage of {label} not written: {exc}", file=sys.stderr)

    def _write(self, label: str, agent: CoverageAgent, target: ApacheTarget) -> None:
        assert self.tools is not None
        folder = self.folder / slug(label)
        dist = target.distribution
        if dist is None or not self.dumps[label]:
            return
        version = dist.version
        jars = [dist.libs / f"{a}-{version}.jar" for a in jacoco.SOURCE_ARTIFACTS]
        classes = jacoco.release_classes(
            [j for j in jars if j.is_file()], cache_root() / "jacoco" / "classes" / _digest(jars)
        )
        by_stem = {stem: sorted((folder / "exec").glob(f"node-*/{stem}.exec"))
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
            sources = _sources(version, run)
            missing = jacoco.resolve_sources(version, cache_root())
        model = build_model(run, attribute(per_case), sources=sources)
        cases = [case for _, case in self.dumps[label]]
        model.update(
            target=label,
            release=version,
            jacoco=self.tools.version,
            nodes=len(agent.ports),
            cases=sorted(set(cases)),
            lost=agent.lost,
            sources_missing=sorted(a for a, jar in missing.items() if jar is None),
            chosen=[{"name": c.name, "methods": list(c.methods), "why": c.why}
                    for c in BROKER_CLASSES],
        )  # fmt: skip
        model.update(summary=self.summary, missed=account(model, version))
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


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(f"{p.name}:{p.stat().st_size if p.is_file() else 0}".encode())
    h.update(repr(BROKER_CLASSES).encode())
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


def _sources(version: str, run: Report) -> dict[str, str | None]:
    """sourcefile -> text from the release's `-sources` jars (None where there are none)."""
    import zipfile

    jars = [j for j in jacoco.resolve_sources(version, cache_root()).values() if j is not None]
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
