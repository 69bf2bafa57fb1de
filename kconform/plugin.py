"""The kconform pytest plugin: options, markers and Hypothesis profiles, registered in one place.

Loaded through the `pytest11` entry point when kconform is installed, and by the repository's
conftest.py for in-repo runs; plain `pytest` and the `kconform` command therefore behave alike.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from kconform.fixtures.targets.registry import TargetSpec, UnknownTarget, parse_targets

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

    group.addoption(
        "--target",
        default="",
        help="broker target(s), comma separated: reference, reference:<mutant>, librdkafka_mock, "
        "external (default: reference, or external when --bootstrap-server is given)",
    )
    group.addoption(
        "--bootstrap-server", default=None, help="host:port[,host:port] of an existing cluster"
    )
    group.addoption("--brokers", type=int, default=3, help="brokers per embedded target")


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
        )
    except UnknownTarget as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line(
        "markers", "differential: compares kconform's codec with another implementation"
    )
    settings.load_profile(config.getoption("--kconform-profile"))
    target_specs(config)  # a bad --target fails here, before any test runs
