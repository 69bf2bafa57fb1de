"""Releases assembled from Maven Central's jars: the POM, the layout and the lookup, with a fake
`mvn` on PATH (no network); one test resolves a real release, skipped when Maven cannot."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from kconform.fixtures.targets import kafka_dist, maven_release
from kconform.fixtures.targets.kafka_dist import DistributionUnavailable
from kconform.fixtures.targets.maven_release import Coordinate, ReleaseUnavailable

# The fake reads the POM's <dependency> entries and writes one jar per entry the way
# copy-dependencies names them; kafka_2.13 also "brings" kafka-clients, slf4j-api and (for 4.x)
# log4j-core, as the real POMs do. FAKE_MVN_FAIL makes it fail as offline Maven does;
# FAKE_CLIENTS_VERSION makes kafka-clients say another version than its file name.
FAKE_MVN = r"""
import os, re, sys, time, zipfile
from pathlib import Path
with open(os.environ["FAKE_MVN_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\n")
if os.environ.get("FAKE_MVN_FAIL"):
    print("[ERROR] Failed to execute goal on project kafka: Could not transfer artifact "
          "org.apache.kafka:kafka_2.13:pom: Unknown host")
    sys.exit(1)
args = sys.argv[1:]
pom = Path(args[args.index("-f") + 1]).read_text()
out = Path(next(a.split("=", 1)[1] for a in args if a.startswith("-DoutputDirectory=")))
out.mkdir(parents=True, exist_ok=True)
time.sleep(float(os.environ.get("FAKE_MVN_SLEEP", "0")))
deps = re.findall(r"<artifactId>([^<]+)</artifactId><version>([^<]+)</version>", pom)
for artifact, version in deps:
    jars = {artifact: version}
    if artifact == "kafka_2.13":
        jars.update({"kafka-clients": version, "kafka-server": version, "slf4j-api": "1.7.36"})
        if not version.startswith("3."):
            jars["log4j-core"] = "2.25.5"
    for name, v in jars.items():
        with zipfile.ZipFile(out / f"{name}-{v}.jar", "w") as jar:
            if name == "kafka-clients":
                said = os.environ.get("FAKE_CLIENTS_VERSION", v)
                jar.writestr("kafka/kafka-version.properties", f"commitId=abc\nversion={said}\n")
"""


@pytest.fixture
def mvn_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `mvn` first on PATH, an empty cache, no distributions folder; the call log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mvn"
    fake.write_text(f"#!{sys.executable}\n{FAKE_MVN}")
    fake.chmod(0o755)
    log = tmp_path / "mvn.log"
    log.touch()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_MVN_LOG", str(log))
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("KCONFORM_KAFKA_DISTS", raising=False)
    monkeypatch.delenv("KCONFORM_KAFKA_DOWNLOAD", raising=False)
    monkeypatch.delenv("KCONFORM_KAFKA_MAVEN", raising=False)
    return log


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines()


def test_a_version_found_nowhere_is_assembled_from_maven_once(mvn_log: Path) -> None:
    dist = kafka_dist.resolve("4.4.0")
    assert dist.version == "4.4.0" and "Maven Central" in dist.source
    assert dist.home.name == "kafka_2.13-4.4.0"
    first = calls(mvn_log)
    assert len(first) == 2  # the modules, then the logging backend
    assert all(" -C " in c and "copy-dependencies" in c for c in first)  # checksums strict
    jars = {j.name for j in dist.jars()}
    assert {"kafka_2.13-4.4.0.jar", "kafka-clients-4.4.0.jar"} <= jars
    assert "log4j-slf4j-impl-2.25.5.jar" in jars  # log4j2 at the version the release pulled
    for script in ("kafka-server-start.sh", "kafka-storage.sh", "kafka-run-class.sh"):
        assert dist.script(script).stat().st_mode & 0o100
    assert "log4j2.configurationFile" in dist.script("kafka-run-class.sh").read_text()
    assert (dist.home / "config" / "log4j2.properties").is_file()
    pom = (dist.home.parent / "pom.xml").read_text()
    assert "<artifactId>kafka_2.13</artifactId><version>4.4.0</version>" in pom
    assert kafka_dist.resolve("4.4.0").home == dist.home  # now from the cache
    assert [d.version for d in kafka_dist.available()] == ["4.4.0"]
    assert len(calls(mvn_log)) == 2


def test_a_3x_release_gets_reload4j(mvn_log: Path) -> None:
    dist = kafka_dist.resolve("3.7.0")
    jars = {j.name for j in dist.jars()}
    assert {"slf4j-reload4j-1.7.36.jar", f"reload4j-{maven_release.RELOAD4J}.jar"} <= jars
    assert not any(j.startswith("log4j-") for j in jars)
    assert "-Dlog4j.configuration=" in dist.script("kafka-run-class.sh").read_text()
    assert (dist.home / "config" / "log4j.properties").is_file()


def test_offline_maven_names_every_way_to_provide_the_release(
    mvn_log: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_MVN_FAIL", "1")
    with pytest.raises(DistributionUnavailable) as info:
        kafka_dist.resolve("4.4.0")
    text = str(info.value)
    for way in ("not found", "apache:/path/to/kafka_2.13-4.4.0.tgz", "unpacked folder",
                "KCONFORM_KAFKA_DISTS", "Maven Central", "Unknown host",
                "KCONFORM_KAFKA_DOWNLOAD=1"):  # fmt: skip
        assert way in text, way
    leftovers = [p.name for p in (tmp_path / "cache" / "kafka").iterdir() if p.is_dir()]
    assert leftovers == []  # no half release for the next run to trust


def test_maven_can_be_turned_off(mvn_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCONFORM_KAFKA_MAVEN", "0")
    with pytest.raises(DistributionUnavailable, match="KCONFORM_KAFKA_MAVEN=0"):
        kafka_dist.resolve("4.4.0")
    assert calls(mvn_log) == []
    assert maven_release.status()[0] is False


def test_no_mvn_on_path(mvn_log: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    ok, why = maven_release.status()
    assert not ok and "mvn" in why
    with pytest.raises(ReleaseUnavailable, match="no `mvn` on PATH"):
        maven_release.fetch("4.4.0", tmp_path / "cache")


def test_the_version_is_read_from_the_jar(mvn_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CLIENTS_VERSION", "4.3.1")
    with pytest.raises(DistributionUnavailable, match=r"says it is '4\.3\.1'"):
        kafka_dist.resolve("4.4.0")


def test_concurrent_resolves_of_one_version_share_one_assembly(
    mvn_log: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_MVN_SLEEP", "0.3")
    homes: list[Path] = []
    threads = [
        threading.Thread(target=lambda: homes.append(maven_release.fetch("4.1.0", tmp_path / "c")))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(homes) == 3 and len(set(homes)) == 1
    assert len(calls(mvn_log)) == 2
    assert sorted(p.name for p in (tmp_path / "c").iterdir() if p.is_dir()) == ["maven-4.1.0"]


def test_the_logging_backend_follows_the_resolved_jars(tmp_path: Path) -> None:
    for name in ("slf4j-api-2.0.17.jar", "log4j-core-2.25.1.jar"):
        (tmp_path / name).touch()
    assert maven_release.logging_backend(tmp_path) == [
        Coordinate("org.apache.logging.log4j", "log4j-slf4j2-impl", "2.25.1")
    ]
    (tmp_path / "slf4j-api-2.0.17.jar").unlink()
    with pytest.raises(ReleaseUnavailable, match="no slf4j-api"):
        maven_release.logging_backend(tmp_path)


# --- the real thing -----------------------------------------------------------------------------

REAL_VERSION = "4.4.0"  # the newest release `make test` gates on


def test_a_real_release_from_maven_central_formats_storage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The official jars of one release, and its StorageTool run through the written scripts."""
    if shutil.which("mvn") is None or shutil.which("java") is None:
        pytest.skip("needs `mvn` and `java` on PATH")
    monkeypatch.delenv("KCONFORM_KAFKA_MAVEN", raising=False)
    try:
        home = maven_release.fetch(REAL_VERSION, tmp_path / "cache")
    except ReleaseUnavailable as exc:
        pytest.skip(f"Maven Central cannot be reached through mvn here: {exc}")
    dist = kafka_dist.open_distribution(home)
    assert dist.version == REAL_VERSION
    with zipfile.ZipFile(dist.clients_jar()) as jar:
        said = jar.read("kafka/kafka-version.properties").decode()
    assert f"version={REAL_VERSION}" in said
    done = subprocess.run(
        [str(dist.script("kafka-storage.sh")), "random-uuid"],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "LOG_DIR": str(tmp_path / "logs")},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", done.stdout.strip().splitlines()[-1])
    assert "SLF4J: No SLF4J providers" not in done.stderr  # a logging backend is bound
    assert "SLF4J: Failed to load class" not in done.stderr


def test_the_reason_is_mavens_cause_not_its_advice() -> None:
    """Maven colours its [ERROR] lines even with -B and ends with advice; the cause is wanted."""
    out = (
        "\x1b[1;31m[ERROR]\x1b[m Failed to execute goal on project k: Could not find artifact "
        "org.apache.kafka:kafka_2.13:jar:9.9.9\n[ERROR] \n"
        "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n"
    )
    done = subprocess.CompletedProcess(["mvn"], 1, stdout=out, stderr="")
    assert maven_release._mvn_error(done).startswith("Failed to execute goal on project k")
