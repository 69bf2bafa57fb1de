"""Where the tests find Apache Kafka: the tarballs KCONFORM_KAFKA_DISTS names, else (as `make
test` does) the official jars on Maven Central, through `mvn`, into the user's cache.

Tests that need a real distribution skip with the reason when it (or Java) is missing, the way
the kraft tests skip without Docker. Unpacked distributions and built plugins go to one cache
per test session, so each tarball is unpacked once.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kconform.fixtures.targets import maven_release


def dists_folder() -> Path | None:
    """The first KCONFORM_KAFKA_DISTS folder, when the user set it."""
    configured = os.environ.get("KCONFORM_KAFKA_DISTS")
    if configured:
        return Path(configured.split(os.pathsep)[0])
    return None


def real_kafka_skip_reason(version: str) -> str | None:
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"no `{tool}` on PATH"
    folder = dists_folder()
    if folder is not None and any(folder.glob(f"kafka_*-{version}*")):
        return None
    usable, why = maven_release.status()
    if not usable:
        where = f"in {folder}" if folder is not None else "(KCONFORM_KAFKA_DISTS unset)"
        return f"no Apache Kafka {version} {where}, and {why}"
    return None
