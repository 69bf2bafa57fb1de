"""`kconform fuzz`: the fuzz suites against one target for a wall-clock budget.

`kconform fuzz --target reference --budget 10m --seed 7` runs every `fuzz.*` case (request
fuzzing and stateful model-based testing, `suites/fuzz/`) through the same pytest machinery as
`kconform run`, so verdicts, results JSON and reports are the usual ones. The budget is shared
evenly by the fuzz cases collected (`suites.fuzz.budget`); each case then searches until its
share is used instead of stopping at a fixed example count. After the run it prints, per case,
the examples tried, examples per second, and how many distinct response shapes (api, error
code, or closed/hang) the target produced: a fuzzer that sees one shape is not exploring.

`--coverage-guided` (apache:<version> only) runs the broker nodes with JaCoCo's agent on the
chosen classes (docs/coverage.md), reads their probes after every example, keeps an example
that set a probe no earlier one set, and leads most later examples with requests derived from
those kept (AFL's rule on JaCoCo probes; `kconform.engine.fuzz.guided`). `--coverage-unguided`
is the same fuzzer, instrumented and measured the same way, keeping nothing: the baseline.
Either prints the branches reached over time and writes `coverage/guided/reach.json` beside
the report (docs/coverage.md, "Coverage-guided fuzzing").

Findings on real targets join the regression corpus (`suites/fuzz/regressions/`) and are
replayed by every later run; findings on `reference:<mutant>` self-test targets do not.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kconform.cli.base import Command
from kconform.engine.fuzz.budget import (
    BUDGET_ENV,
    DEADLINE_ENV,
    SEED_ENV,
    BudgetError,
    parse_budget,
)
from kconform.engine.fuzz.guided import GUIDED_ENV, REACH_ENV
from kconform.exit_codes import EXIT_USAGE

__all__ = ["COMMAND", "add_arguments", "fuzz_table", "run_fuzz"]

REACH_DIR = "guided"
"""Under the report's coverage folder: each request case's probes, and reach.json."""
CASE_TIMEOUT_MARGIN = 120.0
"""Seconds beyond the whole budget before the plugin gives up on one case: the case's own clock
stops it long before, this only catches a harness that hangs."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `kconform fuzz` options: the shared ones (kconform.plugin.option_table), its own."""
    from kconform.fixtures.targets.registry import jvm_agent_targets
    from kconform.plugin.option_table import add_options

    add_options(parser, "fuzz")
    parser.add_argument(
        "--budget",
        default="60s",
        help="wall-clock time for all fuzz cases: 60s, 10m, 2h (default 60s)",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="Hypothesis seed (reproducible runs)"
    )
    parser.add_argument(
        "--profile",
        choices=("quick", "deep"),
        default="deep",
        help="Hypothesis profile (step counts of the stateful case)",
    )
    guidance = parser.add_mutually_exclusive_group()
    guidance.add_argument(
        "--coverage-guided", dest="guidance", action="store_const", const="guided",
        help=f"{jvm_agent_targets()} only: JaCoCo on the nodes; keep requests that reach new "
        "probes and fuzz from them; print the branches reached over time (docs/coverage.md)",
    )  # fmt: skip
    guidance.add_argument(
        "--coverage-unguided", dest="guidance", action="store_const", const="unguided",
        help="as --coverage-guided, measured the same way, but keeping nothing (the baseline)",
    )  # fmt: skip


@contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    """Set (or unset) environment variables for the in-process pytest run, then restore them."""
    saved = {key: os.environ.get(key) for key in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_fuzz(args: argparse.Namespace) -> int:
    """Run the fuzz cases; returns the exit code (0 clean, 1 findings, 2 errors or bad usage)."""
    import pytest

    from kconform.cli.checks import resolve_targets
    from kconform.engine.results import Expectation
    from kconform.errors import UsageError
    from kconform.fixtures.targets.registry import jvm_agent_targets, target_kind
    from kconform.plugin.progress import Progress
    from kconform.reports.model import RunResults
    from kconform.runner import (
        COVERAGE_DIR,
        RunOptions,
        exit_code,
        output_dir,
        pytest_args,
        render_summary,
        terminate_as_interrupt,
        write_reports,
    )

    guidance = getattr(args, "guidance", None)
    try:
        budget = parse_budget(args.budget)
    except BudgetError as exc:
        print(f"kconform: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    specs = resolve_targets(args.target, args.brokers, args.bootstrap_server, args.sink,
                            one=True)  # fmt: skip
    named = ",".join(s.label for s in specs)
    if guidance is not None and (len(specs) != 1 or not target_kind(specs[0].kind).jvm_agent):
        raise UsageError(
            f"--coverage-{guidance} needs one {jvm_agent_targets()} target (JaCoCo rides on the "
            f"broker JVMs kconform starts); got {named}"
        )
    from kconform.cli.checks import check_bootstrap, check_outputs
    from kconform.cli.selection import check_fuzz_cases
    from kconform.runner import DEFAULT_OUT

    check_fuzz_cases(args.cases)
    check_outputs({"--out": args.out or DEFAULT_OUT})
    if args.bootstrap_server:  # last: it asks the server ("not Kafka", as `run` says)
        check_bootstrap(args.bootstrap_server)
    out = args.out or output_dir(None)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    options = RunOptions(
        targets=specs,
        brokers=args.brokers,
        cases=args.cases,
        out=out,
        verbose=args.verbose,
        suites=["fuzz"],
        coverage=guidance is not None,
    )
    timeout = str(budget + CASE_TIMEOUT_MARGIN)
    argv = [*pytest_args(options, results_path), "--case-timeout", timeout,
            "--kconform-profile", args.profile]  # fmt: skip
    # a seed is always drawn and said, so any finding can be replayed
    seed = str(args.seed if args.seed is not None else random.SystemRandom().randrange(2**32))
    print(
        f"kconform fuzz: {named}, budget {budget:.0f}s shared by the fuzz cases, seed {seed}",
        flush=True,
    )
    started = time.monotonic()
    deadline = str(time.time() + budget)
    environment: dict[str, str | None] = {
        BUDGET_ENV: str(budget),
        DEADLINE_ENV: deadline,
        SEED_ENV: seed,
        GUIDED_ENV: guidance,
        REACH_ENV: str(out / COVERAGE_DIR / REACH_DIR) if guidance else None,
    }
    with _environment(environment), terminate_as_interrupt():
        code = pytest.main(argv, plugins=[Progress(args.verbose)])
    if not results_path.exists():
        print(f"kconform: no results were written (pytest exit {int(code)})", file=sys.stderr)
        return EXIT_USAGE
    results = RunResults.read(results_path)
    replay = _replay_command(args, seed)
    for result in results.results:  # the report's case pages and results.json keep it
        result.expectations.append(Expectation("Hypothesis seed", "(recorded)", int(seed), True))
    results.write(results_path)
    write_reports(results, out)
    print(fuzz_table(results))
    if guidance is not None:
        _print_reach(out / COVERAGE_DIR / REACH_DIR, specs[0].variant)
    print(render_summary(results))
    print(f"report:  {out / 'index.html'}  ({time.monotonic() - started:.1f} s)")
    failed = sorted({r.case_id for r in results.results if r.verdict in ("fail", "error")})
    if failed:
        print(f"replay:  {replay} --cases {','.join(failed)}")
    return exit_code(results, int(code))


def _print_reach(folder: Path, version: str) -> None:
    """The branches the run reached over time; a failure to measure them is said, not fatal
    (the verdicts stand without it)."""
    from kconform.cli.fuzz_reach import reach, reach_table
    from kconform.errors import Unavailable

    try:
        print(reach_table(reach(folder, version)))
    except (Unavailable, OSError, ValueError, KeyError) as exc:  # JaCoCo missing, nothing guided
        print(f"kconform: branches reached not measured: {exc}", file=sys.stderr)


def _replay_command(args: argparse.Namespace, seed: str) -> str:
    """The command that runs this fuzz run again with its seed."""
    from kconform.fixtures.targets.registry import default_targets

    target = args.target or default_targets(bootstrap=args.bootstrap_server, one=True)
    parts = ["kconform", "fuzz", "--target", target, "--budget", args.budget,
             "--seed", seed, "--profile", args.profile]  # fmt: skip
    if args.brokers != 1:
        parts += ["--brokers", str(args.brokers)]
    if getattr(args, "guidance", None):
        parts.append(f"--coverage-{args.guidance}")
    if args.bootstrap_server:
        parts += ["--bootstrap-server", args.bootstrap_server]
    return shlex.join(parts)


def fuzz_table(results: object) -> str:
    """Per case and target: verdict, examples, examples/s, distinct response shapes."""
    from kconform.reports.model import RunResults

    assert isinstance(results, RunResults)
    rows = [
        f"{'case':<42} {'target':<28} {'verdict':<12} {'examples':>8} {'ex/s':>7} {'shapes':>6}"
    ]
    for r in results.results:
        seen = {e.what: e.observed for e in r.expectations}
        rows.append(
            f"{r.case_id:<42} {r.subject:<28} {r.verdict:<12} {seen.get('examples run', '-')!s:>8}"
            f" {seen.get('examples/s', '-')!s:>7} {seen.get('distinct response shapes', '-')!s:>6}"
        )
    return "\n".join(rows)


COMMAND = Command(
    "fuzz",
    "fuzz one target for a time budget: malformed requests, random sessions checked against the "
    "reference model",
    add_arguments,
    run_fuzz,
)
