"""`kconform matrix`: run the suites over many releases, record their baselines, render the matrix.

`kconform matrix run --releases 3.7.0,4.4.0` runs, for each Apache Kafka release, the broker,
volume and fuzz suites on one node, the client suites on that release's Java client, and on
`--cluster` the broker and volume suites on three nodes; `--clients confluent-kafka@2.5.0,...`
certifies each named client driver against the reference. Each run is a pytest process of its
own, its results in `--out/<name>/`; they run side by side, the longest first by their last
recorded cost (`--costs`), as many at once as `-j` and `--memory` allow (kconform.matrix);
`--shard K/N` runs a deterministic part, `kconform matrix merge` joins the parts' folders, and
`kconform matrix diff A B` says what changed between two matrices. With `--write-baselines`
each subject's verdicts become its column of the measured matrix (`docs/matrix.json`) and what
its facts do not derive its exceptions in `baselines/<kind>/<version>.json`
(reports.expectations), keeping the `why` of every entry whose verdict did not change: a new
non-pass has none until someone writes it, and `tests/test_matrix.py` fails until then.
`kconform matrix changed <out>` lists the (case, subject) pairs whose inputs changed since a
stored run. `kconform matrix render` writes `docs/matrix.md` and `docs/matrix.html` from the
measured matrix and the expectations, and the README's release tables.

Both write where they are told, relative to the current folder by default (`./baselines`,
`./docs`, `./README.md`): from a checkout's root (`make matrix`) those are the committed files;
an installed kconform never writes into its own package. Render reads the baselines of the
checkout kconform runs from (and `docs/matrix.json` beside them) unless `--baselines` names
others.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kconform import locations
from kconform.cli.base import Command
from kconform.cli.checks import check_outputs
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_ERRORS, EXIT_OK

if TYPE_CHECKING:
    from kconform.matrix.incremental import Redo
    from kconform.matrix.plan import Run
    from kconform.plugin.scheduling import Shard
    from kconform.reports.model import RunResults

__all__ = ["COMMAND", "readme_tables", "render_pages"]

WRITTEN_BASELINES = Path("baselines")  # where --write-baselines writes, under the current folder
COSTS = Path("benchmarks/matrix-costs.json")  # each run's last wall time, under the current folder
DOCS = Path("docs")
README = Path("README.md")


def summary_kinds() -> tuple[str, ...]:
    """The README's release tables: Apache's broker releases, then its Java client's."""
    return (_apache(), "java")


def _apache() -> str:
    """The kind the matrix runs each release on (its release tables are Apache's)."""
    from kconform.fixtures.targets.kinds.apache import KIND

    return KIND.name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True,
                                    metavar="{run,merge,diff,changed,render}")  # fmt: skip
    run = actions.add_parser("run", help="run the suites on each release; results in --out")
    run.add_argument("--releases", default="", help="Apache Kafka versions, comma separated")
    run.add_argument("--clients", default="",
                     help="client drivers certified against the reference, comma separated "
                     "(kind@version, as --client takes them)")  # fmt: skip
    run.add_argument("--targets", default="",
                     help="other broker targets judged as each release is (broker, volumes and "
                     "fuzz suites, 1 node), comma separated: the registry brokers "
                     "`kconform targets` lists, e.g.")  # fmt: skip
    run.add_argument("--cluster", default="", help="the release also run on 3 nodes")
    run.add_argument("--no-clients", action="store_true", help="skip the Java clients' suites")
    from kconform.plugin.option_table import add_options

    add_options(run, "matrix run")  # --cases, --out
    run.add_argument("--write-baselines", action="store_true",
                     help="record each subject's verdicts in --baselines (whys kept)")  # fmt: skip
    run.add_argument("--baselines", type=Path, default=WRITTEN_BASELINES,
                     help="the folder --write-baselines reads earlier whys from and writes "
                     "<subject>.json into (default ./baselines: the committed folder when run "
                     "from a checkout's root; never the installed package's)")  # fmt: skip
    run.add_argument("--memory", type=int, default=None, metavar="MB",
                     help="memory the runs going may hold together: each JVM node by its -Xmx, "
                     "each client and registry broker by its kind's estimate (default: 4/5 of "
                     "what the system has available)")  # fmt: skip
    run.add_argument("--shard", default="", metavar="K/N",
                     help="run part K of N: the same runs and costs give every machine the "
                     "same parts, of about equal cost; `matrix merge` joins their --out "
                     "folders")  # fmt: skip
    run.add_argument("--all", action="store_true",
                     help="run every case of every subject; without it, a subject whose --out "
                     "folder holds an earlier run runs only the cases whose key changed since "
                     "(`matrix changed`), and not at all when none did")  # fmt: skip
    run.add_argument("--costs", type=Path, default=COSTS,
                     help="each run's last wall time, read to start the longest first and to "
                     "split shards, written after each whole run (not with --cases or --shard; "
                     "default ./benchmarks/matrix-costs.json)")  # fmt: skip
    merge = actions.add_parser("merge", help="join shard result folders into one")
    merge.add_argument("folders", type=Path, nargs="+", help="the shards' --out folders")
    add_options(merge, "matrix merge")  # --out
    diff = actions.add_parser("diff", help="verdicts changed, subjects and cases added or removed")
    diff.add_argument("a", type=Path, help="the earlier matrix: a result or baselines folder")
    diff.add_argument("b", type=Path, help="the later one")
    add_options(diff, "matrix diff")  # --json
    render = actions.add_parser("render", help="docs/matrix.md and .html from the baselines")
    render.add_argument("--baselines", type=Path, default=None,
                        help="the baselines read (default: kconform's own)")  # fmt: skip
    render.add_argument("--matrix", type=Path, default=None,
                        help="the measured matrix read (default: docs/matrix.json beside the "
                        "baselines, as in a checkout)")  # fmt: skip
    add_options(render, "matrix render")  # --out
    render.add_argument("--diff", type=Path, default=None, metavar="FOLDER",
                        help="add a section of what changed from FOLDER (results or "
                        "baselines) to the baselines rendered")  # fmt: skip
    render.add_argument("--readme", type=Path, default=README,
                        help="the file whose release tables are rewritten (default ./README.md; "
                        "skipped, and said, when it does not exist)")  # fmt: skip
    changed = actions.add_parser("changed", help="the (case, subject) pairs of a stored run "
                                 "whose key changed here: what a run must redo")  # fmt: skip
    changed.add_argument("results", type=Path,
                         help="a `matrix run --out` folder (its <subject>/keys.json)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.action == "render":
        baselines = args.baselines or locations.baselines()
        for page in render_pages(baselines, args.out, args.matrix, args.diff):
            print(f"wrote {page}")
        if not args.readme.is_file():
            print(f"no {args.readme} here: release tables not rewritten (--readme names one)")
            return EXIT_OK
        text = args.readme.read_text(encoding="utf-8")
        args.readme.write_text(readme_tables(baselines, text, args.matrix), encoding="utf-8")
        print(f"rewrote the release tables of {args.readme}")
        return EXIT_OK
    if args.action == "changed":
        return _changed(args.results)
    if args.action == "merge":
        return _merge(args)
    if args.action == "diff":
        return _diff(args)
    return _run_releases(args)


def _changed(folder: Path) -> int:
    """Print what a run must redo: one `subject case` line per changed pair, then a count."""
    from kconform.reports.matrix_keys import KEYS, changed

    if not (folder / KEYS).is_file() and not any(folder.glob(f"*/{KEYS}")):
        raise UsageError(f"{folder}: no {KEYS} (a `kconform matrix run --out` folder has one per "
                         "subject)")  # fmt: skip
    pairs = changed(folder)
    for case_id, subject in sorted(pairs, key=lambda p: (p[1], p[0])):
        print(f"{subject} {case_id}")
    print(f"{len(pairs)} (case, subject) pair(s) to run again")
    return EXIT_OK


def render_pages(
    baselines: Path, out: Path, measured: Path | None = None, since: Path | None = None
) -> list[Path]:
    """Write the matrix pages from the measured matrix and the expectations in `baselines`,
    with what changed since the matrix in `since` when given; the paths written."""
    from kconform.reports.matrix import build, render_html, render_markdown
    from kconform.reports.matrix_artifact import matrix_artifact, matrix_columns
    from kconform.reports.matrix_diff import diff, html_section, load_verdicts, markdown_section
    from kconform.rules import RULES
    from kconform.runner import case_catalogue

    try:
        columns = matrix_columns(baselines, measured)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    cases = {c["id"]: c["rules"] for c in case_catalogue()}
    matrix = build(columns, cases, list(RULES))
    out.mkdir(parents=True, exist_ok=True)
    pages = [out / "matrix.md", out / "matrix.html"]
    md = html = ""
    if since is not None:
        change = diff(load_verdicts(since), load_verdicts(measured or matrix_artifact(baselines)))
        md, html = markdown_section(change, str(since)), html_section(change, str(since))
    pages[0].write_text(render_markdown(matrix, md), encoding="utf-8")
    pages[1].write_text(render_html(matrix, html), encoding="utf-8")
    return pages


def readme_tables(baselines: Path, text: str, measured: Path | None = None) -> str:
    """`text` (the README) with its release tables rendered from the baselines again."""
    from kconform.fixtures.targets.registry import target_kinds
    from kconform.reports.bugs import bug_figure
    from kconform.reports.matrix import (
        render_implementations,
        render_release_summary,
        replace_summary,
    )
    from kconform.reports.matrix_artifact import matrix_columns

    try:
        columns = matrix_columns(baselines, measured)
        for kind in summary_kinds():
            text = replace_summary(text, kind, render_release_summary(columns, kind))
        others = [k.name for k in target_kinds() if k.registry_broker]
        text = replace_summary(
            text, "implementations", render_implementations(columns, _apache(), others)
        )
        text = replace_summary(text, "bugs", bug_figure(columns))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return text


def _run_releases(args: argparse.Namespace) -> int:
    from kconform.fixtures.targets.registry import parse_targets
    from kconform.matrix.plan import plan_runs, read_costs
    from kconform.matrix.schedule import available_mb, default_jobs
    from kconform.matrix.shard import parse_shard, pick

    releases = [r.strip() for r in args.releases.split(",") if r.strip()]
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    targets = [t.label for t in parse_targets(args.targets, brokers=1)] if args.targets else []
    if not releases and not clients and not targets:
        raise UsageError("name what to run: --releases, --clients, --targets or several")
    if args.write_baselines:
        check_outputs({"--baselines": args.baselines})
    for release in [*releases, *([args.cluster] if args.cluster else [])]:
        if not re.fullmatch(r"\d+\.\d+\.\d+", release):
            raise UsageError(f"{release!r} is not a release (MAJOR.MINOR.PATCH, e.g. 4.4.0)")
    shard = parse_shard(args.shard) if args.shard else None
    if args.memory is not None and args.memory < 1:
        raise UsageError(f"--memory {args.memory}: give megabytes, at least 1")
    plan = plan_runs(releases, cluster=args.cluster, release_clients=not args.no_clients,
                     targets=targets, clients=clients)  # fmt: skip
    costs = read_costs(args.costs)
    runs = pick(plan, costs, shard) if shard else plan
    jobs = args.jobs or default_jobs()
    memory = args.memory or available_mb()
    part = f"shard {shard}: {len(runs)} of {len(plan)} runs" if shard else f"{len(runs)} runs"
    todo, fresh = _what_changed(args, runs)
    if fresh:
        print(f"{len(fresh)} of {part} up to date in {args.out} (no case's key changed; --all "
              f"runs them): {', '.join(r.name for r in fresh)}")  # fmt: skip
    partial = sum(1 for r in todo if r.cases)
    print(f"{len(todo)} of {part} to run"
          + (f" ({partial} only for the cases that changed)" if partial else "")
          + f", up to {jobs} at once within {memory} MB, the longest first")  # fmt: skip
    return _run_side_by_side(args, plan, todo, fresh, shard, costs, jobs, memory)


def _what_changed(args: argparse.Namespace, runs: list[Run]) -> tuple[list[Redo], list[Run]]:
    """The runs to do, each with the cases that changed (none named: the whole run), and those
    up to date; every run whole with --all."""
    from kconform.matrix.incremental import Redo, plan_redo

    if args.all:
        return [Redo(run) for run in runs], []
    return plan_redo(runs, args.out, args.cases or "")


def _run_side_by_side(args: argparse.Namespace, plan: list[Run], todo: list[Redo],
                      fresh: list[Run], shard: Shard | None, costs: dict[str, float], jobs: int,
                      memory: int) -> int:  # fmt: skip
    """Run them, recording each as it ends: its line, its cost, its baseline, the manifest."""
    from kconform.matrix.incremental import KEPT, absent_cases, asked_cases, merge_kept
    from kconform.matrix.plan import pytest_command, write_costs
    from kconform.matrix.record import record_run
    from kconform.matrix.schedule import Finished, run_all, start
    from kconform.matrix.shard import manifest, write_manifest
    from kconform.reports.matrix_keys import KEYS, write_keys
    from kconform.reports.model import RunResults

    worst = EXIT_OK
    ran: list[str] = [r.name for r in fresh]  # in the folder already, as a run leaves them
    write_manifest(args.out, manifest(plan, args.cases or "", shard, ran))
    runs = [r.run for r in todo]
    only = {r.run.name: ",".join(r.cases) for r in todo if r.cases}  # the cases that changed
    unrecorded = {r.name for r in runs}
    waiting: list[tuple[Run, RunResults]] = []  # to record once the run they build on is

    def record(run: Run, results: RunResults) -> None:
        """Its baseline, as one run after another wrote them: a run building on another's
        baseline (`Run.after`) waits for that one's."""
        if run.after in unrecorded:
            waiting.append((run, results))
            return
        record_run(run.subject, run.name, results, bool(args.cases) or run.name in only,
                args.baselines)  # fmt: skip
        unrecorded.discard(run.name)
        for entry in [w for w in waiting if w[0].after == run.name]:
            waiting.remove(entry)
            record(*entry)

    def launch(run: Run) -> subprocess.Popen[bytes]:
        folder = args.out / run.name
        folder.mkdir(parents=True, exist_ok=True)
        if run.name in only:  # kept for what this run does not redo
            (folder / "results.json").replace(folder / KEPT)
        else:  # an earlier run's is not this one's
            (folder / "results.json").unlink(missing_ok=True)
        cases = only.get(run.name, args.cases or "")
        return start(pytest_command(run, folder, cases), folder / "pytest.log")

    def done(end: Finished) -> None:
        nonlocal worst
        folder = args.out / end.run.name
        results = folder / "results.json"
        took = f"{end.seconds:.0f} s, {end.cpu:.0f} s CPU"
        if not results.is_file():
            print(f"{end.run.name}: no results ({took}, pytest exit {end.code}; "
                  f"see {folder / 'pytest.log'})")  # fmt: skip
            worst = EXIT_ERRORS
            if (folder / KEPT).is_file():  # the earlier results stay what the folder holds
                (folder / KEPT).replace(results)
            failed(end.run)
            return
        counts = RunResults.read(results).counts()  # what this run gave
        run_results = merge_kept(folder)
        kinds = {r.subject: r.subject_kind for r in run_results.results}
        if end.run.name in only:
            asked = only[end.run.name].split(",")
        else:  # a whole run: the keys are its own
            asked = asked_cases(kinds.get(end.run.subject, ""), args.cases or "")
            (folder / KEYS).unlink(missing_ok=True)
        absent = {end.run.subject: absent_cases(run_results, end.run.subject, asked)}
        write_keys(folder, run_results, absent)  # what determines each: `matrix changed`
        print(f"{end.run.name}: {took}, " + ", ".join(f"{v} {k}" for k, v in counts.items() if v),
              flush=True)  # fmt: skip
        if counts.get("error"):
            worst = EXIT_ERRORS
        ran.append(end.run.name)
        write_manifest(args.out, manifest(plan, args.cases or "", shard, ran))
        if not args.cases and not shard and end.run.name not in only:  # a part is no cost
            costs[end.run.name] = end.seconds
            write_costs(args.costs, costs)
        if args.write_baselines:
            record(end.run, run_results)
        else:
            unrecorded.discard(end.run.name)

    def failed(run: Run) -> None:
        """A run that wrote nothing: what waits for it is recorded on its own."""
        unrecorded.discard(run.name)
        for entry in [w for w in waiting if w[0].after == run.name]:
            waiting.remove(entry)
            record(*entry)

    try:
        run_all(runs, costs=costs, jobs=jobs, memory_mb=memory, launch=launch, done=done)
    finally:
        for run, results in list(waiting):  # interrupted before what they build on ended
            record_run(run.subject, run.name, results, bool(args.cases) or run.name in only,
                args.baselines)  # fmt: skip
    return worst


def _merge(args: argparse.Namespace) -> int:
    from kconform.matrix.shard import merge

    missing = merge(args.folders, args.out)
    print(f"merged {len(args.folders)} folders into {args.out}")
    if missing:
        print(f"not in any of them ({len(missing)}): {', '.join(missing)}")
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    from kconform.reports.matrix_diff import diff, load_verdicts, render_json, render_text

    change = diff(load_verdicts(args.a), load_verdicts(args.b))
    sys.stdout.write(render_json(change) if args.json else render_text(change))
    return EXIT_OK


COMMAND = Command("matrix", "run the suites over many releases; render the matrix",
                  add_arguments, run)  # fmt: skip
