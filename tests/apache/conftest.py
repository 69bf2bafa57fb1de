"""Where the tests find Apache Kafka distributions: `../shared/kafka` beside the repository.

Tests that need a real distribution skip with the reason when it (or Java) is missing, the way
the kraft tests skip without Docker. Unpacked distributions and built plugins go to one cache
per test session, so each tarball is unpacked once.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED_KAFKA = Path(__file__).resolve().parents[2].parent / "shared" / "kafka"


def dists_folder() -> Path | None:
    """KCONFORM_KAFKA_DISTS when the user set it, else ../shared/kafka when present."""
    configured = os.environ.get("KCONFORM_KAFKA_DISTS")
    if configured:
        return Path(configured.split(os.pathsep)[0])
    return SHARED_KAFKA if SHARED_KAFKA.is_dir() else None


def real_kafka_skip_reason(version: str) -> str | None:
    folder = dists_folder()
    if folder is None:
        return f"no Apache Kafka distributions ({SHARED_KAFKA} absent, KCONFORM_KAFKA_DISTS unset)"
    if not any(folder.glob(f"kafka_*-{version}*")):
        return f"no Apache Kafka {version} in {folder}"
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"no `{tool}` on PATH"
    return None


@pytest.fixture
def real_kafka(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The distributions folder, named by KCONFORM_KAFKA_DISTS for the code under test."""
    folder = dists_folder()
    if folder is None:
        pytest.skip(real_kafka_skip_reason("any") or "no distributions")
    monkeypatch.setenv("KCONFORM_KAFKA_DISTS", str(folder))
    yield folder
