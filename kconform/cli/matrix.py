"""`kconform matrix`: run the suites over many releases, record their baselines, render the matrix.

`kconform matrix run --releases 3.7.0,4.4.0` runs, for each Apache Kafka release, the broker,
volume and fuzz suites on one node, the client suites on that release's Java client, and on
`--cluster` the broker and volume suites on three nodes; `--clients confluent-kafka@2.5.0,...`
certifies each named client driver against the reference. Each run is a pytest process of its
own, its results in `--out`. With `--write-baselines` each subject's verdicts become its column
of the measured matrix (`docs/matrix.json`) and what its facts do not derive its exceptions in
`baselines/<kind>/<version>.json` (reports.expectations), keeping the `why` of every entry
whose verdict did not change: a new non-pass has none until someone writes it, and
`tests/test_matrix.py` fails until then. `kconform matrix render` writes `docs/matrix.md` and
`docs/matrix.html` from the measured matrix and the expectations, and the README's release
tables.

Both write where they are told, relative to the current folder by default (`./baselines`,
`./docs`, `./README.md`): from a checkout's root (`make matrix`) those are the committed files;
an installed kconform never writes into its own package. Render reads the baselines of the
checkout kconform runs from (and `docs/matrix.json` beside them) unless `--baselines` names
others.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from kconform import locations
from kconform.cli.base import Command
from kconform.cli.checks import check_outputs
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_ERRORS, EXIT_OK

if TYPE_CHECKING:
    from kconform.reports.model import RunResults

__all__ = ["COMMAND", "pytest_run", "readme_tables", "render_pages"]

WRITTEN_BASELINES = Path("baselines")  # where --write-baselines writes, under the current folder
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
                                    metavar="{run,render,changed}")  # fmt: skip
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
    render = actions.add_parser("render", help="docs/matrix.md and .html from the baselines")
    render.add_argument("--baselines", type=Path, default=None,
                        help="the baselines read (default: kconform's own)")  # fmt: skip
    render.add_argument("--matrix", type=Path, default=None,
                        help="the measured matrix read (default: docs/matrix.json beside the "
                        "baselines, as in a checkout)")  # fmt: skip
    add_options(render, "matrix render")  # --out
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
        for page in render_pages(baselines, args.out, args.matrix):
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


def render_pages(baselines: Path, out: Path, measured: Path | None = None) -> list[Path]:
    """Write the matrix pages from every baseline in `baselines`; the paths written."""
    from kconform.reports.matrix import build, render_html, render_markdown
    from kconform.reports.matrix_artifact import matrix_columns
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
    pages[0].write_text(render_markdown(matrix), encoding="utf-8")
    pages[1].write_text(render_html(matrix), encoding="utf-8")
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


def _runs(release: str, cluster: str, clients: bool) -> list[tuple[str, str, list[str]]]:
    """(subject, folder name, suites and flags) of each run one release gets."""
    from kconform.fixtures.targets.registry import client_cases_target

    target = f"{_apache()}:{release}"
    runs = [
        (
            target,
            target.replace(":", "-"),
            ["broker", "volumes", "fuzz", "--target", target, "--brokers", "1"],
        )
    ]
    if clients:
        runs.append(
            (
                f"java:{release}",
                f"java-{release}",
                ["client", "--target", client_cases_target(), "--client", f"java:{release}"],
            )
        )
    if release == cluster:
        runs.append(
            (
                target,
                target.replace(":", "-") + "-3brokers",
                ["broker", "volumes", "--target", target, "--brokers", "3"],
            )
        )
    return runs  # fmt: skip


def _run_releases(args: argparse.Namespace) -> int:
    from kconform.fixtures.targets.registry import client_cases_target, parse_targets
    from kconform.reports.matrix_keys import write_keys
    from kconform.reports.model import RunResults
    from kconform.runner import SUITES_DIR

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
    worst = EXIT_OK
    runs = [r for release in releases for r in _runs(release, args.cluster, not args.no_clients)]
    runs += [(t, t.replace(":", "-"), ["broker", "volumes", "fuzz", "--target", t,
              "--brokers", "1"]) for t in targets]  # fmt: skip
    host = client_cases_target()
    runs += [(c, c.replace(":", "-"), ["client", "--target", host, "--client", c])
             for c in clients]  # fmt: skip
    for subject, name, spec in runs:
        folder = args.out / name
        folder.mkdir(parents=True, exist_ok=True)
        results = folder / "results.json"
        suites = [str(SUITES_DIR / s) for s in spec if s in ("broker", "volumes", "fuzz",
                                                             "client")]  # fmt: skip
        flags = [s for s in spec if s not in ("broker", "volumes", "fuzz", "client")]
        command = [sys.executable, "-m", "pytest", *suites, "-c", os.devnull, "--rootdir",
                   str(SUITES_DIR), "--import-mode=importlib", "-p", "no:cacheprovider",
                   "-q", "--assert=plain", "--kconform-results", str(results),
                   "--kconform-volumes", str(folder / "volumes"), *flags,
                   *(["--cases", args.cases] if args.cases else [])]  # fmt: skip
        started = time.monotonic()
        code = pytest_run(command, folder / "pytest.log")
        took = time.monotonic() - started
        if not results.is_file():
            print(f"{name}: no results ({took:.0f} s, pytest exit {code}; "
                  f"see {folder / 'pytest.log'})")  # fmt: skip
            worst = EXIT_ERRORS
            continue
        counts = RunResults.read(results).counts()
        write_keys(folder, RunResults.read(results))  # what determines each result: `changed`
        print(f"{name}: {took:.0f} s, " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
        if counts.get("error"):
            worst = EXIT_ERRORS
        if args.write_baselines:
            _record(subject, name, RunResults.read(results), bool(args.cases),
                    args.baselines)  # fmt: skip
    return worst


def pytest_run(command: list[str], log: Path) -> int:
    """One run of the suites, its output in `log`; pytest's exit code."""
    with log.open("w", encoding="utf-8") as out:
        return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False).returncode


def _record(subject: str, name: str, run: RunResults, keep_unrun: bool, folder: Path) -> None:
    """Record a run: its verdicts as the subject's column of the measured matrix (`docs/matrix.json`
    beside `folder`), and what its facts do not derive as exceptions in
    `<folder>/<kind>/<version>.json` (a 3-node run: what differs from the 1-node expectation, in
    that file's `brokers` section), saying which expectations changed (their whys need a look)."""
    from kconform.reports.expectations import WHYS, prune_whys, subject_path
    from kconform.reports.matrix_artifact import matrix_artifact, record_column
    from kconform.reports.model import (
        bundles_of,
        capabilities_of,
        layered_baselines,
        write_baseline,
    )

    variant = name[len(subject.replace(":", "-")) + 1 :] if name != subject else ""
    brokers = int(variant.removesuffix("brokers")) if variant.endswith("brokers") else 1
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / WHYS).is_file():
        (folder / WHYS).write_text("{}\n", encoding="utf-8")
    target = subject_path(folder, subject)
    before = layered_baselines([target], brokers) if target.is_file() else {}
    expected_before, _ = before.get(subject, ({}, {}))
    mine = [r for r in run.results if r.subject == subject]
    write_baseline(target, subject, run.results, keep_unrun=keep_unrun,
                   bundles=bundles_of(run, subject), brokers=brokers,
                   capabilities=capabilities_of(run, subject))  # fmt: skip
    record_column(matrix_artifact(folder), subject, variant,
                  {r.case_id: r.verdict for r in mine}, keep_unrun=keep_unrun)  # fmt: skip
    prune_whys(folder)
    expected, why = layered_baselines([target], brokers)[subject]
    for r in sorted(mine, key=lambda r: r.case_id):
        was = expected_before.get(r.case_id, "pass")
        if was != expected[r.case_id]:
            print(f"  {target}: {r.case_id} {was} -> {expected[r.case_id]} (check its why)")
        if expected[r.case_id] != "pass" and not why.get(r.case_id):
            print(f"  {target}: {r.case_id} is {expected[r.case_id]} with no why yet")


COMMAND = Command("matrix", "run the suites over many releases; render the matrix",
                  add_arguments, run)  # fmt: skip
