"""What the real-release coverage tests need: the release, `mvn` and JaCoCo's jars."""

from __future__ import annotations

import shutil

import pytest

from kconform.fixtures.coverage import jacoco
from kconform.fixtures.targets.kafka_dist import cache_root
from tests.apache.conftest import real_kafka_skip_reason


def require_release_and_jacoco(version: str) -> None:
    """Skip, saying why, unless `version` can run here with JaCoCo's agent."""
    reason = real_kafka_skip_reason(version)
    if reason is None and shutil.which("mvn") is None:
        reason = "no `mvn` on PATH for JaCoCo's jars"
    if reason:
        pytest.skip(reason)
    try:
        jacoco.resolve_tools(cache_root())
    except jacoco.CoverageUnavailable as exc:
        pytest.skip(str(exc))
