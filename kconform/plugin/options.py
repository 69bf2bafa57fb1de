"""The kconform pytest plugin's options and markers, and the Hypothesis budgets they choose.

`--target`, `--client`, `--cases`, `--baseline` and the rest: what plain `pytest` and the
`kconform` command (which passes them on, kconform.runner) both accept, declared once in
kconform.plugin.option_table; the `--kconform-*` ones here are the runner's own plumbing.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from kconform.fixtures.clients.kind import ClientSpec
from kconform.fixtures.clients.registry import parse_clients
from kconform.fixtures.targets.registry import (
    TargetSpec,
    UnknownTarget,
    default_targets,
    parse_targets,
)
from kconform.plugin.option_table import add_pytest_options

__all__ = [
    "HYPOTHESIS_PROFILE_ENV",
    "check_coverage_targets",
    "client_specs",
    "target_specs",
]

HYPOTHESIS_PROFILE_ENV = "KCONFORM_HYPOTHESIS_PROFILE"

# quick: the `make test` budget; deep: `tox -e fuzz` and nightly runs.
settings.register_profile(
    "quick", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "deep", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kconform")
    group.addoption(
        "--kconform-profile",
        default=os.environ.get(HYPOTHESIS_PROFILE_ENV, "quick"),
        choices=("quick", "deep"),
        help="Hypothesis budget: quick (make test) or deep (tox -e fuzz). "
        f"Default from ${HYPOTHESIS_PROFILE_ENV}, else quick.",
    )
    add_pytest_options(group.addoption)
    group.addoption("--kconform-results", default=None, help="write the run's results JSON here")
    group.addoption(
        "--kconform-volumes", default=None,
        help="folder for the volume runs (<target>/ each; the report reads their summaries "
        "there); default: `volumes` beside --kconform-results",
    )  # fmt: skip
    group.addoption(
        "--stop-target-on-fail", action="store_true",
        help="after a target fails a MUST case, skip its remaining cases (mutation self-test)",
    )  # fmt: skip
    group.addoption(
        "--coverage-summary", action="store_true",
        help="with --coverage: only the run's counters and missed branches (one jacococli "
        "report per target; no per-case attribution, no source text), what the gate reads "
        "(python -m kconform.reports.coverage_gate; docs/coverage.md)",
    )  # fmt: skip
    group.addoption(
        "--kconform-coverage", default=None,
        help="folder for --coverage's dumps and coverage.json (default: coverage/ beside "
        "--kconform-results)",
    )  # fmt: skip
    group.addoption(
        "--kconform-shard", default=None,
        help="i/N: run only worker i's fixed share of the cases (a run split over machines)",
    )  # fmt: skip
    group.addoption(
        "--kconform-groups", default=None,
        help="write the number of case groups selected (what -j can split) to this file; "
        "with --collect-only, before a run chooses its number of workers",
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


TARGET_SPECS = pytest.StashKey[list[TargetSpec]]()
CLIENT_SPECS = pytest.StashKey[list[ClientSpec]]()


def target_specs(config: pytest.Config) -> list[TargetSpec]:
    """The targets this run is about, from --target/--bootstrap-server/--brokers/--sink:
    parsed once per run (the first call), then the same values for every test module."""
    if TARGET_SPECS not in config.stash:
        bootstrap = config.getoption("--bootstrap-server")
        text = config.getoption("--target") or default_targets(bootstrap=bootstrap, one=True)
        try:
            config.stash[TARGET_SPECS] = parse_targets(
                text,
                brokers=config.getoption("--brokers"),
                bootstrap=bootstrap,
                sink=config.getoption("--sink"),
            )
        except UnknownTarget as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[TARGET_SPECS]


def client_specs(config: pytest.Config) -> list[ClientSpec]:
    """The client drivers (--client; every installed one without it), parsed once per run and
    only when a client case is collected (finding the installed ones asks each kind)."""
    if CLIENT_SPECS not in config.stash:
        try:
            config.stash[CLIENT_SPECS] = parse_clients(config.getoption("--client") or "")
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[CLIENT_SPECS]


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
    specs = target_specs(config)  # a bad --target fails here, before any test runs
    if config.getoption("--coverage"):
        named = client_specs(config) if config.getoption("--client") else []
        check_coverage_targets(specs, named)
    elif config.getoption("--coverage-summary"):
        raise pytest.UsageError("--coverage-summary goes with --coverage")


def check_coverage_targets(specs: list[TargetSpec], clients: list[ClientSpec]) -> None:
    """--coverage needs JVMs the harness starts: apache targets or Java clients (the kinds say
    so); `clients`: those --client names, which must all be such JVMs."""
    from kconform.fixtures.coverage.subjects import coverage_problem

    problem = coverage_problem([(s.label, s.kind) for s in specs], clients)
    if problem:
        raise pytest.UsageError(problem)
