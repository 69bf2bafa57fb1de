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

from kconform.fixtures import lockfiles
from kconform.fixtures.targets import kafka_dist, maven_release, release_lock
from kconform.fixtures.targets.kafka_dist import DistributionUnavailable
from kconform.fixtures.targets.maven_release import Coordinate, ReleaseUnavailable

# The fake reads the POM's <dependency> entries and writes one jar per entry the way
# copy-dependencies names them (same bytes every run); kafka_2.13 also "brings" kafka-clients,
# kafka-server, slf4j-api and (for 4.x) log4j-core, as the real POMs do, unless the POM excludes
# its dependencies (a locked release). `dependency:list` writes the coordinates to -DoutputFile.
# FAKE_MVN_FAIL makes it fail as offline Maven does; FAKE_CLIENTS_VERSION makes kafka-clients
# say another version than its file name; FAKE_CHANGED / FAKE_DROPPED / FAKE_EXTRA: a jar with
# other bytes, a jar not written, one more jar (what a moved artifact or resolver would do).
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
deps = re.findall(r"<groupId>([^<]+)</groupId><artifactId>([^<]+)</artifactId>"
                  r"<version>([^<]+)</version>(<exclusions>)?", pom)
jars = {}
for group, artifact, version, alone in deps:
    jars[artifact] = (group, version)
    if artifact == "kafka_2.13" and not alone:
        jars.update({"kafka-clients": ("org.apache.kafka", version),
                     "kafka-server": ("org.apache.kafka", version),
                     "slf4j-api": ("org.slf4j", "1.7.36")})
        if not version.startswith("3."):
            jars["log4j-core"] = ("org.apache.logging.log4j", "2.25.5")
extra = os.environ.get("FAKE_EXTRA")
if extra:
    jars[extra] = ("com.example", "1.0")
listing = []
for name, (group, v) in jars.items():
    jar_name = f"{name}-{v}.jar"
    listing.append(f"   {group}:{name}:jar:{v}:runtime -- module {name}")
    if jar_name == os.environ.get("FAKE_DROPPED"):
        continue
    with zipfile.ZipFile(out / jar_name, "w") as jar:
        entry = zipfile.ZipInfo("META-INF/MANIFEST.MF", date_time=(2024, 1, 1, 0, 0, 0))
        changed = jar_name == os.environ.get("FAKE_CHANGED")
        jar.writestr(entry, f"Implementation-Title: {name}{' (rebuilt)' if changed else ''}\n")
        if name == "kafka-clients":
            said = os.environ.get("FAKE_CLIENTS_VERSION", v)
            entry = zipfile.ZipInfo("kafka/kafka-version.properties", (2024, 1, 1, 0, 0, 0))
            jar.writestr(entry, f"commitId=abc\nversion={said}\n")
listed = [a.split("=", 1)[1] for a in args if a.startswith("-DoutputFile=")]
if listed:
    Path(listed[0]).write_text("\nThe following files have been resolved:\n"
                               + "\n".join(sorted(listing)) + "\n")
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
    monkeypatch.setenv(lockfiles.SEARCH_ENV, str(tmp_path / "locks"))  # searched first, written
    return log


def lock(version: str, log: Path) -> Path:
    """The release locked from a fresh (fake) resolve, as `clients lock java@<v>` does; the call
    log emptied so a test counts only its own resolves."""
    folder = maven_release.write_lock(version)
    log.write_text("")
    return folder


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines()


def test_a_version_found_nowhere_is_assembled_from_maven_once(mvn_log: Path) -> None:
    folder = lock("4.4.0", mvn_log)
    dist = kafka_dist.resolve("4.4.0")
    assert dist.version == "4.4.0" and "Maven Central" in dist.source
    assert dist.home.name == "kafka_2.13-4.4.0"
    assert dist.lock == lockfiles.digest(folder) and dist.lock.startswith("sha256:")
    first = calls(mvn_log)
    assert len(first) == 1  # every locked jar named, nothing left for Maven to pick
    assert all(" -C " in c and "copy-dependencies" in c for c in first)  # checksums strict
    jars = {j.name for j in dist.jars()}
    assert {"kafka_2.13-4.4.0.jar", "kafka-clients-4.4.0.jar"} <= jars
    assert "log4j-slf4j-impl-2.25.5.jar" in jars  # log4j2 at the version the release pulled
    for script in ("kafka-server-start.sh", "kafka-storage.sh", "kafka-run-class.sh"):
        assert dist.script(script).stat().st_mode & 0o100
    assert "log4j2.configurationFile" in dist.script("kafka-run-class.sh").read_text()
    assert (dist.home / "config" / "log4j2.properties").is_file()
    pom = (dist.home.parent / "pom.xml").read_text()
    assert "<artifactId>kafka_2.13</artifactId><version>4.4.0</version><exclusions>" in pom
    assert "<artifactId>log4j-slf4j-impl</artifactId>" in pom  # the backend is in the lock
    again = kafka_dist.resolve("4.4.0")  # now from the cache
    assert again.home == dist.home and again.lock == dist.lock
    assert [d.version for d in kafka_dist.available()] == ["4.4.0"]
    assert len(calls(mvn_log)) == 1


def test_a_3x_release_gets_reload4j(mvn_log: Path) -> None:
    lock("3.7.0", mvn_log)
    dist = kafka_dist.resolve("3.7.0")
    jars = {j.name for j in dist.jars()}
    assert {"slf4j-reload4j-1.7.36.jar", f"reload4j-{maven_release.RELOAD4J}.jar"} <= jars
    assert not any(j.startswith("log4j-") for j in jars)
    assert "-Dlog4j.configuration=" in dist.script("kafka-run-class.sh").read_text()
    assert (dist.home / "config" / "log4j.properties").is_file()


def test_offline_maven_names_every_way_to_provide_the_release(
    mvn_log: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    lock("4.4.0", mvn_log)
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
    lock("4.4.0", mvn_log)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    ok, why = maven_release.status()
    assert not ok and "mvn" in why
    with pytest.raises(ReleaseUnavailable, match="no `mvn` on PATH"):
        maven_release.fetch("4.4.0", tmp_path / "cache")


def test_the_version_is_read_from_the_jar(mvn_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock("4.4.0", mvn_log)
    monkeypatch.setenv("FAKE_CLIENTS_VERSION", "4.3.1")
    with pytest.raises(DistributionUnavailable, match=r"says it is '4\.3\.1'"):
        kafka_dist.resolve("4.4.0")


def test_concurrent_resolves_of_one_version_share_one_assembly(
    mvn_log: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    lock("4.1.0", mvn_log)
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
    assert len(calls(mvn_log)) == 1
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


# --- the lock: a release is exactly the jars its committed lock names ---------------------------


def lock_lines(folder: Path) -> dict[str, str]:
    """jar file name -> its lock line."""
    entries = release_lock.load(folder)
    return {e.coordinate.jar: e.line() for e in entries}


@pytest.mark.parametrize(
    ("knob", "jar", "said"),
    [
        ("FAKE_CHANGED", "kafka-server-4.4.0.jar", "expected sha256={want}, found sha256="),
        ("FAKE_DROPPED", "kafka-server-4.4.0.jar", "missing (expected sha256={want})"),
        ("FAKE_EXTRA", "surprise", "surprise-1.0.jar: not in the lock (found sha256="),
    ],
)
def test_jars_other_than_the_locks_refuse_the_release(
    mvn_log: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, knob: str, jar: str, said: str
) -> None:
    folder = lock("4.4.0", mvn_log)
    want = lock_lines(folder).get(jar, "sha256=").split("sha256=")[1]
    monkeypatch.setenv(knob, jar)
    with pytest.raises(ReleaseUnavailable) as info:
        maven_release.fetch("4.4.0", tmp_path / "cache")
    text = str(info.value)
    assert said.format(want=want) in text, text
    assert str(folder / release_lock.LOCK_FILE) in text
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.is_dir()] == []  # nothing kept
    with pytest.raises(DistributionUnavailable, match=re.escape(said.format(want=want))):
        kafka_dist.resolve("4.4.0")  # what `apache:4.4.0` says


def test_apache_and_java_subjects_from_maven_report_the_locks_digest(
    mvn_log: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kconform.fixtures.clients.java import JavaDriver
    from kconform.fixtures.targets.apache import ApacheTarget

    digest = lockfiles.digest(lock("4.4.0", mvn_log))
    built = kafka_dist.PluginBuild(tmp_path / "sink.jar", "Reporter", exporter=False)
    monkeypatch.setattr(kafka_dist, "build_plugin", lambda libs, version: built)
    monkeypatch.setattr(JavaDriver, "_identify", lambda self: None)  # no javac over fake jars
    target = ApacheTarget("4.4.0")
    target.prepare()
    assert target.lock == digest and target.describe()["lock"] == digest
    assert JavaDriver("java:4.4.0", "4.4.0").lock == digest
    own = ApacheTarget(str(target.distribution.home if target.distribution else ""))
    own.prepare()  # a folder the user names is the user's artifact: no lock
    assert own.lock == "" and "lock" not in own.describe()


def test_a_release_with_no_lock_is_refused_naming_the_command(mvn_log: Path) -> None:
    with pytest.raises(DistributionUnavailable) as info:
        kafka_dist.resolve("9.9.9")
    assert "`kconform clients lock java@9.9.9`" in str(info.value)
    assert calls(mvn_log) == []  # not resolved afresh


def test_a_changed_lock_changes_the_digest_and_rechecks_the_cache(
    mvn_log: Path, tmp_path: Path
) -> None:
    folder = lock("4.4.0", mvn_log)
    first = kafka_dist.resolve("4.4.0")
    text = (folder / release_lock.LOCK_FILE).read_text()
    (folder / release_lock.LOCK_FILE).write_text(text + "# re-read\n")
    second = kafka_dist.resolve("4.4.0")  # the cached jars, compared with the changed lock
    assert second.home == first.home and second.lock != first.lock
    assert second.lock == lockfiles.digest(folder)
    assert len(calls(mvn_log)) == 1  # the first assembly only
    jar = second.libs / "kafka-server-4.4.0.jar"
    jar.write_bytes(jar.read_bytes() + b"\0")
    (folder / release_lock.LOCK_FILE).write_text(text)  # a new lock: the cache is compared again
    with pytest.raises(
        DistributionUnavailable, match=r"kafka-server-4\.4\.0\.jar: expected.*remove"
    ):
        kafka_dist.resolve("4.4.0")


def test_the_lock_command_writes_every_jar_of_the_release(mvn_log: Path, tmp_path: Path) -> None:
    from kconform.cli import main

    assert main(["clients", "lock", "java@4.4.0"]) == 0
    folder = tmp_path / "locks" / "kafka" / "4.4.0"
    written = (folder / release_lock.LOCK_FILE).read_text()
    assert [c for c in calls(mvn_log) if ":list " in c]  # groups from Maven, not guessed
    home = maven_release.fetch("4.4.0", tmp_path / "cache")
    jars = sorted((home / "libs").glob("*.jar"))
    groups = {"kafka_2.13": "org.apache.kafka", "kafka-clients": "org.apache.kafka",
              "kafka-server": "org.apache.kafka", "slf4j-api": "org.slf4j",
              "log4j-core": "org.apache.logging.log4j",
              "log4j-slf4j-impl": "org.apache.logging.log4j"}  # fmt: skip
    expected = []
    for jar in jars:
        artifact, version = jar.name.removesuffix(".jar").rsplit("-", 1)
        expected.append(
            f"{groups[artifact]}:{artifact}:{version} sha256={release_lock.sha256(jar)}"
        )
    body = [ln for ln in written.splitlines() if not ln.startswith("#")]
    assert body == sorted(expected) and len(body) == len(groups)
    assert written.startswith("# Apache Kafka 4.4.0 as kconform assembles it from Maven Central")
    assert "`kconform clients lock java@4.4.0`" in written
    # the lock command over the release now in the cache gives the same file
    maven_release.write_lock("4.4.0")
    assert (folder / release_lock.LOCK_FILE).read_text() == written


def test_a_lock_line_that_is_not_one_is_named() -> None:
    with pytest.raises(ReleaseUnavailable, match=r"lock\.txt:3: not `group:artifact:version"):
        release_lock.parse("# head\n\norg.x:y sha256=ab\n", "lock.txt")


def test_a_classified_artifact_is_refused_not_dropped(tmp_path: Path) -> None:
    listing = tmp_path / "list"
    listing.write_text("   org.x:y:jar:linux:1.0:runtime\n")
    with pytest.raises(ReleaseUnavailable, match="not a plain jar"):
        release_lock.listed(listing)


def makefile_releases() -> set[str]:
    """The releases the Makefile runs: MATRIX_RELEASES and APACHE_VERSIONS (continued lines)."""
    text = (Path(__file__).parents[2] / "Makefile").read_text().replace("\\\n", " ")
    found: set[str] = set()
    for name in ("MATRIX_RELEASES", "APACHE_VERSIONS"):
        match = re.search(rf"^{name}\s*\?=(.*)$", text, re.MULTILINE)
        assert match is not None, name
        found |= set(match.group(1).split())
    return found


def test_every_release_the_makefile_runs_has_a_committed_lock() -> None:
    releases = makefile_releases()
    assert len(releases) >= 20 and {"3.7.0", "4.4.0"} <= releases
    for version in sorted(releases):
        folder = lockfiles.COMMITTED / release_lock.LOCK_KIND / version
        entries = release_lock.load(folder)  # ReleaseUnavailable when absent or malformed
        coordinates = {str(e.coordinate) for e in entries}
        for module in ("kafka_2.13", "kafka-clients"):
            assert f"org.apache.kafka:{module}:{version}" in coordinates, (version, module)
        assert any(e.coordinate.artifact in ("reload4j", "log4j-core") for e in entries)


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
