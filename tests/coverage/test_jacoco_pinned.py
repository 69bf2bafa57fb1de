"""JaCoCo's jars are the committed bytes: checked after download and on each cache hit, with a
fake `mvn` on PATH (no network)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from kconform.fixtures.coverage import jacoco

# `mvn dependency:copy -Dartifact=g:a:v:jar:classifier -DoutputDirectory=d` writes
# d/a-v-classifier.jar holding $FAKE_JAR_BYTES
FAKE_MVN = r"""
import os, sys
from pathlib import Path
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("-D") and "=" in a)
group, artifact, version, _, classifier = args["artifact"].split(":")
with open(os.environ["FAKE_MVN_LOG"], "a") as log:
    log.write(artifact + "\n")
out = Path(args["outputDirectory"]) / f"{artifact}-{version}-{classifier}.jar"
out.write_bytes(os.environ["FAKE_JAR_BYTES"].encode())
"""


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `mvn` first on PATH, and committed digests for the bytes it writes; its call log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mvn").write_text(f"#!{sys.executable}\n{FAKE_MVN}")
    (bin_dir / "mvn").chmod(0o755)
    log = tmp_path / "mvn.log"
    log.touch()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_MVN_LOG", str(log))
    monkeypatch.setenv("FAKE_JAR_BYTES", "jacoco")
    monkeypatch.delenv("KCONFORM_KAFKA_MAVEN", raising=False)
    digest = hashlib.sha256(b"jacoco").hexdigest()
    monkeypatch.setattr(jacoco, "SHA256", dict.fromkeys(jacoco.SHA256, digest))
    return log


def test_the_committed_digests_cover_the_pinned_version() -> None:
    v = jacoco.JACOCO_VERSION
    names = {f"{a}-{v}-{c}.jar" for _, a, c in (jacoco.AGENT, jacoco.CLI)}
    assert names == set(jacoco.SHA256) and all(len(d) == 64 for d in jacoco.SHA256.values())


def test_jars_with_the_committed_bytes_are_used_and_kept(fake: Path, tmp_path: Path) -> None:
    tools = jacoco.resolve_tools(tmp_path / "cache")
    assert tools.agent.read_bytes() == b"jacoco" and tools.cli.is_file()
    assert jacoco.resolve_tools(tmp_path / "cache") == tools
    assert len(fake.read_text().splitlines()) == 2  # fetched once


def test_a_download_with_other_bytes_is_refused_and_removed(
    fake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_JAR_BYTES", "something else")
    with pytest.raises(jacoco.CoverageUnavailable) as info:
        jacoco.resolve_tools(tmp_path / "cache")
    want = hashlib.sha256(b"jacoco").hexdigest()
    got = hashlib.sha256(b"something else").hexdigest()
    assert f"expected sha256={want}, found sha256={got}" in str(info.value)
    assert list((tmp_path / "cache" / "jacoco" / jacoco.JACOCO_VERSION).glob("*.jar")) == []


def test_a_cached_jar_changed_since_is_fetched_again(fake: Path, tmp_path: Path) -> None:
    tools = jacoco.resolve_tools(tmp_path / "cache")
    tools.cli.write_bytes(b"tampered")
    assert jacoco.resolve_tools(tmp_path / "cache").cli.read_bytes() == b"jacoco"
    assert fake.read_text().splitlines()[-1] == jacoco.CLI[1]  # only the changed one again


def test_a_version_without_committed_digests_is_not_used(fake: Path, tmp_path: Path) -> None:
    with pytest.raises(jacoco.CoverageUnavailable, match="no committed SHA-256"):
        jacoco.resolve_tools(tmp_path / "cache", version="0.8.99")
