"""The main job: run the suites through pytest in-process, then write the reports.

`kconform run` and plain `pytest` share everything (the plugin computes verdicts and writes the
results JSON); this module only chooses the arguments, shows progress, and turns the results
into reports and an exit code: 0 everything as expected (or matching baselines), 1 conformance
failures, 2 harness errors, bad usage, an interrupted run, or a run that judged nothing (every
result unsupported, not applicable or skipped, or no result at all: never a silent success).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kconform import locations
from kconform.exit_codes import EXIT_ERRORS, EXIT_FAILURES, EXIT_OK
from kconform.plugin.progress import Progress
from kconform.plugin.workers import (
    claims_folder,
    count_groups,
    run_workers,
    shard_results_path,
)
from kconform.reports.common import not_judged
from kconform.reports.model import RunResults, merge_runs

if TYPE_CHECKING:
    from kconform.fixtures.clients.kind import ClientSpec
    from kconform.fixtures.targets.kind import TargetSpec
    from kconform.reports.certificate import Certificate

SUITES_DIR = locations.suites()
BASELINES_DIR = locations.baselines()
DEFAULT_OUT = Path("reports") / "out"
VOLUMES_DIR = "volumes"
COVERAGE_DIR = "coverage"
"""The report folder's subfolder for --coverage (`coverage/<target>/coverage.json` each)."""
"""The report folder's subfolder for the volume runs (`volumes/<target>/`), from every worker."""


def _default_targets() -> tuple[TargetSpec, ...]:
    from kconform.fixtures.targets.registry import default_targets, parse_targets

    return tuple(parse_targets(default_targets()))


@dataclass
class RunOptions:
    """What a run is about, parsed (kconform.cli); `pytest_args` writes it as the plugin's
    options, the one place it turns back into text."""

    targets: tuple[TargetSpec, ...] = field(default_factory=_default_targets)
    brokers: int | None = None  # None: each target kind's default
    cases: str = ""
    level: str = "all"
    baselines: list[Path] = field(default_factory=list)
    use_default_baselines: bool = True
    out: Path | None = None
    junit: Path | None = None
    json: Path | None = None
    keyword: str | None = None
    exitfirst: bool = False
    verbose: bool = False
    clients: tuple[ClientSpec, ...] | None = None  # client drivers (None: every installed one)
    suites: list[str] = field(default_factory=lambda: ["broker", "client", "volumes"])
    jobs: int = 1  # worker processes (kconform.plugin.workers); 1 runs in this process
    client_timeout: float | None = None  # seconds to a client's first request (None: 30)
    coverage: bool = False  # --coverage: JaCoCo on apache nodes, a section in the report
    certify: bool = False  # `kconform certify`: the certificate decides the headline and exit


def default_baselines(subjects: Iterable[str]) -> list[Path]:
    """Committed expectations (`baselines/<kind>/<version>.json`) for the subjects (labels) being
    run."""
    from kconform.fixtures.targets.registry import find_kind

    names = set(subjects)
    found = []
    # kinds a distribution named by path stands for: any release of them
    named_by_path: set[str] = set()
    for name in names:
        kind = find_kind(name)
        variant = name.partition(":")[2]
        by_path = variant and not re.fullmatch(r"\d+\.\d+\.\d+", variant)
        if kind and kind.variant_may_be_path and by_path:
            named_by_path.add(kind.name)
    from kconform.reports.expectations import expectation_files

    for path in expectation_files(BASELINES_DIR):  # matched by the subject they name
        try:
            subject = json.loads(path.read_text(encoding="utf-8")).get("subject", path.stem)
        except (OSError, ValueError, AttributeError):
            subject = path.stem
        kind_part, colon, _ = str(subject).partition(":")
        if subject in names or (colon and kind_part in named_by_path):
            found.append(path)  # a path-named distribution reports its release as subject
    return found


def stale_entries(path: Path, known: set[str]) -> list[str]:
    """The case ids a baseline lists that no installed suite declares (renamed or removed); the
    soak's SLO ids (its `soak` section) are the soak's, not a suite's."""
    from kconform.reports.model import read_baseline

    listed = {c for c in read_baseline(path).verdicts if not c.startswith("soak.")}
    return sorted(listed - known)


def baseline_warnings(paths: list[Path], subjects: set[str]) -> list[str]:
    """What a run would silently ignore in its baselines: a subject that is not in the run,
    and entries naming cases that do not exist (`kconform baseline --prune` removes those)."""
    from kconform.reports.model import read_baseline

    known = {c["id"] for c in case_catalogue()}
    warnings = []
    for path in paths:
        baseline = read_baseline(path)
        if baseline.subject not in subjects:
            ran = ", ".join(sorted(subjects))
            warnings.append(
                f"baseline {path} is for {baseline.subject!r}, which is not in this run "
                f"({ran}): it applies to nothing"
            )
        stale = stale_entries(path, known)
        if stale:
            shown = ", ".join(stale[:3]) + ("…" if len(stale) > 3 else "")
            warnings.append(
                f"baseline {path} names {len(stale)} case(s) that do not exist ({shown}); "
                f"`kconform baseline --prune {path}` removes them"
            )
    return warnings


def client_names(clients: Sequence[ClientSpec] | None) -> list[str]:
    """The labels `--client`'s subjects run as (`java@4.4.0` runs as `java:4.4.0`, the name
    its baseline carries); every installed driver's for None."""
    from kconform.fixtures.clients.registry import installed_clients

    return list(dict.fromkeys(spec.label for spec in (
        installed_clients() if clients is None else clients)))  # fmt: skip


def output_dir(base: Path | None) -> Path:
    """A new report folder named after the time; runs started in the same second (CI jobs side
    by side) each get their own, since creating it is what claims the name."""
    root = base or DEFAULT_OUT
    root.mkdir(parents=True, exist_ok=True)
    stamp, suffix = time.strftime("%Y%m%d-%H%M%S"), 0
    while True:
        out = root / (f"{stamp}-{suffix}" if suffix else stamp)
        try:
            out.mkdir()
        except FileExistsError:
            suffix += 1
            continue
        return out


def _update_latest(out: Path) -> None:
    latest = out.parent / "latest"
    try:
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(out.name, target_is_directory=True)
    except OSError:
        pass  # a filesystem without symlinks keeps the dated folder only


def pytest_args(options: RunOptions, results_path: Path, report: Path | None = None) -> list[str]:
    """pytest's arguments for a run. `--assert=plain`: verdicts come from `check.expect`, never
    from an assert's text, and rewriting kconform's modules on import cost each process (each
    worker of `-j N`) 1.5 s of CPU where bytecode is not cached (PYTHONDONTWRITEBYTECODE).
    `report`: the report folder, whose `volumes/` gets the volume runs wherever the results go
    (a worker's are in a folder of its own)."""
    paths = [str(SUITES_DIR / suite) for suite in options.suites]
    args = [
        *paths, "-c", os.devnull, "--rootdir", str(SUITES_DIR), "--import-mode=importlib",
        "-p", "no:cacheprovider", "-p", "no:terminal", "--assert=plain",
        "--kconform-results", str(results_path),
        "--target", ",".join(t.label for t in options.targets), "--level", options.level,
    ]  # fmt: skip
    if report is not None:
        args += ["--kconform-volumes", str(report / VOLUMES_DIR)]
    if options.brokers is not None:
        args += ["--brokers", str(options.brokers)]
    bootstrap = next((t.bootstrap for t in options.targets if t.bootstrap), None)
    if bootstrap:
        args += ["--bootstrap-server", bootstrap]
    sink = next((t.sink for t in options.targets if t.sink), None)
    if sink:
        args += ["--sink", sink]
    if options.clients is not None:
        args += ["--client", ",".join(c.label for c in options.clients)]
    if options.cases:
        args += ["--cases", options.cases]
    if options.client_timeout is not None:
        args += ["--client-timeout", str(options.client_timeout)]
    if options.coverage:
        args.append("--coverage")
        if report is not None:
            args += ["--kconform-coverage", str(report / COVERAGE_DIR)]
    for baseline in run_baselines(options):
        args += ["--baseline", str(baseline)]
    if options.keyword:
        args += ["-k", options.keyword]
    if options.exitfirst:
        args.append("-x")
    return args


def run_baselines(options: RunOptions) -> list[Path]:
    """The baselines a run compares with: those given, then the committed ones of its subjects
    (unless --no-default-baselines)."""
    baselines = list(options.baselines)
    if options.use_default_baselines:
        subjects = [t.label for t in options.targets]
        if "client" in options.suites:
            subjects += client_names(options.clients)
        baselines += [b for b in default_baselines(subjects) if b not in baselines]
    return baselines


def run(options: RunOptions) -> int:
    """Run the suites, write the reports; returns the exit code."""
    out = options.out or output_dir(None)  # --out is exactly the report folder
    out.mkdir(parents=True, exist_ok=True)
    results_path = options.json or (out / "results.json")
    started = time.time()
    with terminate_as_interrupt():
        if options.jobs > 1:
            options.jobs = _cap_jobs(options, out)
        if options.jobs > 1:
            code = _run_sharded(options, results_path, out)
        else:
            args = pytest_args(options, results_path, out)
            code = pytest.main(args, plugins=[Progress(options.verbose)])
    if not results_path.exists():
        print(f"kconform: no results were written (pytest exit {int(code)})", file=sys.stderr)
        return EXIT_ERRORS
    results = RunResults.read(results_path)
    certificates = _certify(options, results, int(code))
    lead = ""
    if certificates is not None:
        from kconform.reports.certificate_files import render_section

        lead = render_section(certificates)
    try:
        write_reports(results, out, junit=options.junit, previous=_previous_run(out), lead=lead)
        if certificates is not None:
            from kconform.reports.certificate_files import write_certificates

            write_certificates(certificates, out)
    except OSError as exc:  # the checks before the run held; the place changed since
        print(f"kconform: the report could not be written ({exc}); the results are in "
              f"{results_path}", file=sys.stderr)  # fmt: skip
        return EXIT_ERRORS
    if options.out is None:
        _update_latest(out)
    print(render_summary(results, overall=certificates is None))
    print(f"results: {results_path}")
    print(f"report:  {out / 'index.html'}  ({time.time() - started:.1f} s)")
    reason = None if results.interrupted else not_judged(results)
    if reason:
        print(f"kconform: {reason}", file=sys.stderr, flush=True)
    if certificates is not None:
        from kconform.reports.certificate import exit_code as certificate_exit
        from kconform.reports.certificate import render_text

        print(f"certificate: {out / 'certificate.json'}\n")
        print(render_text(certificates), flush=True)
        return certificate_exit(certificates)
    return exit_code(results, int(code))


def _certify(
    options: RunOptions, results: RunResults, pytest_code: int
) -> list[Certificate] | None:
    """`kconform certify`'s certificates (reports.certificate), None for any other run. A run
    pytest ended as interrupted or broken is certified as interrupted: never a success."""
    if not options.certify:
        return None
    from kconform.reports.certificate import certify

    if pytest_code in HARNESS_EXITS:
        results.interrupted = True
    return certify(results, run_baselines(options))


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI job cancelled, `timeout`) ends the run as Ctrl-C does: the results so far
    are written as an interrupted run, with their report, instead of the process vanishing."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (kconform.run called from a test's thread)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _cap_jobs(options: RunOptions, out: Path) -> int:
    """-j no larger than the case groups selected (a worker more would only start its targets
    and find nothing to claim), saying so when it lowers it."""
    with tempfile.TemporaryDirectory(prefix=".kconform-collect-", dir=out) as folder:
        groups = count_groups(pytest_args(options, Path(folder) / "results.json"), Path(folder))
    if groups is None or groups >= options.jobs:
        return options.jobs
    count = max(groups, 1)
    print(f"kconform: -j {options.jobs} lowered to {count}: the selection has {groups} case "
          f"group{'s' if groups != 1 else ''} to share out", flush=True)  # fmt: skip
    return count


def _run_sharded(options: RunOptions, results_path: Path, report: Path) -> int:
    """The cases split over `options.jobs` workers (kconform.plugin.workers), their results
    merged into `results_path`; pytest's exit code for the whole (the worst of the workers').
    The workers' files go in the report folder, named after the results file: not beside a
    `--json` placed elsewhere, which would then hold a folder nobody asked for."""
    count = options.jobs
    anchor = report / results_path.name
    paths = [shard_results_path(anchor, i) for i in range(1, count + 1)]
    for path in paths:
        path.unlink(missing_ok=True)
    claims = claims_folder(anchor)
    shutil.rmtree(claims, ignore_errors=True)
    claims.mkdir(parents=True)
    shared = ["--kconform-claims", str(claims)]
    earlier = _earlier_results(results_path)
    if earlier is not None:
        shared += ["--kconform-durations", str(earlier)]
    worker_args = [[*pytest_args(options, path, report), *shared] for path in paths]
    print(f"kconform: {count} workers", flush=True)
    try:
        codes = run_workers(worker_args, verbose=options.verbose)
    except KeyboardInterrupt:
        codes = [int(pytest.ExitCode.INTERRUPTED)]
    runs = []
    for index, path in enumerate(paths, start=1):
        try:
            runs.append(RunResults.read(path))
        except ValueError as exc:  # a worker that died early: the others' results still count
            print(f"kconform: worker {index} left no results ({exc})", file=sys.stderr)
            codes.append(int(pytest.ExitCode.INTERNAL_ERROR))
    if runs:
        merge_runs(runs).write(results_path)
    shutil.rmtree(claims, ignore_errors=True)  # coordination only: nothing a reader needs
    return worst_exit(codes)


def worst_exit(codes: list[int]) -> int:
    """pytest's exit code for several workers: interruption and harness trouble first, then
    failures; "no tests collected" only when no worker had any."""
    for code in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR,
                 pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.TESTS_FAILED):  # fmt: skip
        if int(code) in codes:
            return int(code)
    if codes and all(c == pytest.ExitCode.NO_TESTS_COLLECTED for c in codes):
        return int(pytest.ExitCode.NO_TESTS_COLLECTED)
    return max((c for c in codes if c != pytest.ExitCode.NO_TESTS_COLLECTED), default=0)


def write_reports(
    results: RunResults,
    out: Path,
    *,
    junit: Path | None = None,
    previous: RunResults | None = None,
    lead: str = "",
) -> None:
    """JUnit and the HTML report; `lead` opens the index (a certify run's certificate)."""
    from kconform.reports.html import write_html
    from kconform.reports.junit import write_junit

    write_junit(results, junit or (out / "junit.xml"))
    sections = [*_volume_sections(out), *_coverage_sections(out)]
    write_html(results, out, previous=previous, extra_sections=sections, lead=lead)


def _coverage_sections(out: Path) -> list[str]:
    """The --coverage section, and a source page per target beside index.html."""
    import json

    from kconform.reports.html_coverage import (
        page_name,
        render_coverage_page,
        render_coverage_section,
    )

    models = []
    for path in sorted((out / COVERAGE_DIR).glob("*/coverage.json")):
        try:
            model = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            print(f"kconform: coverage {path} not shown: {exc}", file=sys.stderr)
            continue
        (out / page_name(model)).write_text(render_coverage_page(model), "utf-8")
        models.append(model)
    return [render_coverage_section(models)] if models else []


def _volume_sections(out: Path) -> list[str]:
    """The volume comparisons the run wrote beside its results, as report sections."""
    import json

    from kconform.reports.volumes_section import render_volumes_section

    sections = []
    for summary in sorted((out / VOLUMES_DIR).glob("*/volumes-summary.json")):
        try:
            sections.append(render_volumes_section(json.loads(summary.read_text("utf-8"))))
        except (OSError, ValueError) as exc:
            print(f"kconform: volume summary {summary} not shown: {exc}", file=sys.stderr)
    return sections


def _earlier_results(results_path: Path) -> Path | None:
    """The results of the run before this one, whose case durations order the groups for the
    workers: the same folder's (a repeated `--out`) or the one `latest` points at."""
    for candidate in (results_path, results_path.parent.parent / "latest" / "results.json"):
        if candidate.is_file():
            return candidate
    return None


def _previous_run(out: Path) -> RunResults | None:
    """The run `latest` pointed at before this one, for the "changed since" view."""
    latest = out.parent / "latest" / "results.json"
    try:
        if latest.resolve().parent != out.resolve():
            return RunResults.read(latest)
    except (OSError, ValueError):
        pass
    return None


def render_summary(results: RunResults, *, overall: bool = True) -> str:
    from kconform.reports.summary import summary_table

    return str(summary_table(results, overall=overall))


HARNESS_EXITS = (
    pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR,
)  # fmt: skip
"""pytest's exit codes that mean the run did not complete (or never started)."""


def exit_code(results: RunResults, pytest_code: int) -> int:
    """2 for harness trouble (errors not expected by a baseline, interruption, usage) and for a
    run that judged nothing or left a subject wholly unjudged, 1 for conformance failures, 0 when
    every verdict is as it should be."""
    if results.interrupted or pytest_code in HARNESS_EXITS:
        return EXIT_ERRORS
    if not_judged(results):
        return EXIT_ERRORS  # nothing (or some subject not) tested: never a success
    from kconform.reports.common import fails_run

    unexpected = [r for r in results.results if fails_run(r)]
    if any(r.verdict == "error" for r in unexpected):
        return EXIT_ERRORS
    return EXIT_FAILURES if unexpected else EXIT_OK


def case_catalogue() -> list[dict[str, Any]]:
    """Every case the installed suites declare (imports the suite modules)."""
    import importlib
    import pkgutil

    from kconform.engine.model import CASES

    for info in pkgutil.walk_packages([str(SUITES_DIR)], "kconform.suites."):
        if info.name.rsplit(".", 1)[-1].startswith("test_"):
            importlib.import_module(info.name)
    return [
        {"id": c.id, "level": str(c.level), "kind": c.kind, "kip": c.kip, "spec": c.spec_ref,
         "title": c.title, "requires": sorted(c.requires), "rules": list(c.rules)}
        for c in sorted(CASES.values(), key=lambda c: c.id)
    ]  # fmt: skip
