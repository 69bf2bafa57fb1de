"""`--client java:<distribution>`: naming a Kafka distribution, and its Java client really running.

The real runs use the distributions of `../shared/kafka/` (next to the repository, see its
README): each is unpacked once per session into a private cache, the driver is compiled against
its `libs/*`, and the client is run against an address where nothing listens, so that it logs
its connection warnings. They are skipped, with the reason, without those tarballs or a JDK.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from kconform.fixtures.clients import Scenario, create_driver, parse_clients
from kconform.fixtures.clients.driver import ClientRun
from kconform.fixtures.clients.java import CLASSPATH_ENV, JavaDriver, javac_failure
from kconform.fixtures.targets import kafka_dist, maven_release

REPO = Path(__file__).resolve().parents[2]
VERSIONS = ("3.7.0", "4.4.0")  # the releases `make test` gates on (APACHE_VERSIONS)
LOG_LINE = re.compile(r"^\[[^\]]+\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ")


@pytest.fixture
def no_distributions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty `KCONFORM_KAFKA_DISTS` folder and an empty cache: no distribution anywhere."""
    dists = tmp_path / "dists"
    dists.mkdir()
    monkeypatch.setenv(kafka_dist.DISTS_ENV, str(dists))
    monkeypatch.setenv(kafka_dist.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(kafka_dist.DOWNLOAD_ENV, raising=False)
    monkeypatch.setenv("KCONFORM_KAFKA_MAVEN", "0")  # nor from Maven Central
    monkeypatch.delenv(CLASSPATH_ENV, raising=False)
    return dists


def test_java_distribution_names(tmp_path: Path) -> None:
    folder = tmp_path / "kafka_2.13-3.7.0"
    folder.mkdir()
    text = f"java:3.7.0, java:{folder}, java:~/k.tgz, java:kafka_2.13-4.1.0.tar.gz, java"
    specs = parse_clients(text)
    assert [(s.kind, s.argument) for s in specs] == [
        ("java", "3.7.0"),
        ("java", str(folder)),
        ("java", "~/k.tgz"),
        ("java", "kafka_2.13-4.1.0.tar.gz"),
        ("java", ""),
    ]
    assert [s.label for s in specs] == [
        "java:3.7.0", f"java:{folder}", "java:~/k.tgz", "java:kafka_2.13-4.1.0.tar.gz", "java"
    ]  # fmt: skip


@pytest.mark.parametrize("bad", ["java:", "java: ", "java:3.7", "java:latest", "java:3.7.0-rc1"])
def test_java_name_that_cannot_be_a_distribution_is_a_usage_error(bad: str) -> None:
    with pytest.raises(ValueError, match=r"java:"):
        parse_clients(bad)


def test_missing_version_is_unavailable_with_the_ways_to_provide_it(
    no_distributions: Path,
) -> None:
    spec = parse_clients("java:9.9.9")[0]  # parsing does not look for it
    driver = create_driver(spec)
    reason = driver.unavailable_reason()
    assert driver.name == "java:9.9.9" and reason is not None
    assert "9.9.9 not found" in reason and str(no_distributions) in reason
    assert kafka_dist.DISTS_ENV in reason and "java:/path/to/kafka_2.13-9.9.9.tgz" in reason
    assert "apache:" not in reason  # the advice names the client, not the broker target


def test_missing_folder_and_tarball_are_unavailable(no_distributions: Path) -> None:
    for missing in (no_distributions / "nope", no_distributions / "nope.tgz"):
        reason = create_driver(parse_clients(f"java:{missing}")[0]).unavailable_reason()
        assert reason is not None and str(missing) in reason


def test_plain_java_without_classpath_names_both_ways(no_distributions: Path) -> None:
    reason = JavaDriver().unavailable_reason()
    assert reason is not None and CLASSPATH_ENV in reason and "java:<version>" in reason


def test_a_classpath_naming_nothing_is_one_line_naming_it(
    no_distributions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`KCONFORM_JAVA_CLASSPATH=/nonexistent`: javac ran and its 11-error dump, cut mid-word, was
    the reason `kconform clients` showed."""
    monkeypatch.setenv(CLASSPATH_ENV, f"/nonexistent:{no_distributions}/*")
    reason = JavaDriver().unavailable_reason()
    assert reason == (
        f"${CLASSPATH_ENV} names an entry that does not exist: /nonexistent (it needs the "
        "kafka-clients jar and its deps, joined by ':'; `dir/*` for a folder of jars)"
    )


def test_a_javac_dump_is_one_line() -> None:
    dump = "\n".join(
        f"/x/KconformClientDriver.java:{n}: error: package org.apache.kafka.clients does not "
        f"exist\n    import org.apache.kafka.clients.X;\n    ^" for n in (12, 13)
    ) + "\n2 errors\n"  # fmt: skip
    assert javac_failure(dump) == (
        "javac failed (2 errors, the first: package org.apache.kafka.clients does not exist, at "
        "KconformClientDriver.java:12); is every jar the driver needs (kafka-clients and its "
        "deps) on the classpath?"
    )


@pytest.mark.skipif(
    shutil.which("java") is None or shutil.which("javac") is None, reason="no java/javac on PATH"
)
def test_all_installed_clients_include_every_found_distribution(no_distributions: Path) -> None:
    """Listed without being unpacked or compiled; one that is broken says so when used."""
    (no_distributions / "kafka_2.13-3.9.9").mkdir()  # looks like a distribution by its name only
    labels = [s.label for s in parse_clients("")]
    assert "java:3.9.9" in labels and "java" not in labels
    reason = create_driver(parse_clients("java:3.9.9")[0]).unavailable_reason()
    assert reason is not None and "is not a Kafka distribution" in reason


@pytest.mark.skipif(
    shutil.which("java") is None or shutil.which("javac") is None, reason="no java/javac on PATH"
)
def test_all_installed_clients_leave_out_distributions_only_in_the_cache(
    no_distributions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache fills as `apache:` targets run; that must not add clients to a run by itself."""
    home = kafka_dist.cache_root() / "kafka" / "0123456789abcdef" / "kafka_2.13-3.9.8"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "kafka-server-start.sh").write_text("")
    (home / "libs").mkdir()
    (home / "libs" / "kafka-clients-3.9.8.jar").write_bytes(b"")
    assert [d.version for d in kafka_dist.available()] == ["3.9.8"]  # the cache does list it
    assert "java:3.9.8" not in [s.label for s in parse_clients("")]
    monkeypatch.delenv(kafka_dist.DISTS_ENV)
    assert "java:3.9.8" not in [s.label for s in parse_clients("")]
    assert parse_clients("java:3.9.8")[0].label == "java:3.9.8"  # still usable by name


# --- the real client, as `make test` takes it: tarballs or Maven Central ------------------------


def _tarballs() -> Path | None:
    """The first KCONFORM_KAFKA_DISTS folder holding every version's tarball, if any."""
    for folder in kafka_dist.search_folders():
        if all((folder / f"kafka_2.13-{v}.tgz").is_file() for v in VERSIONS):
            return folder
    return None


def _real_distributions_reason() -> str | None:
    if shutil.which("java") is None or shutil.which("javac") is None:
        return "no java/javac on PATH"
    if _tarballs() is None:
        usable, why = maven_release.status()
        if not usable:
            return f"no tarballs of {list(VERSIONS)} in $KCONFORM_KAFKA_DISTS, and {why}"
    return None


needs_real = pytest.mark.skipif(
    _real_distributions_reason() is not None, reason=str(_real_distributions_reason())
)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the session: each tarball is unpacked and each driver compiled once. A
    release from Maven Central stays in the user's cache, where `make test` assembled it."""
    if _tarballs() is None:
        return kafka_dist.cache_root()
    return tmp_path_factory.mktemp("kconform-cache")


@pytest.fixture
def real_distributions(shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(kafka_dist.DISTS_ENV, str(_tarballs() or ""))
    monkeypatch.setenv(kafka_dist.CACHE_ENV, str(shared_cache))
    monkeypatch.delenv(CLASSPATH_ENV, raising=False)
    return shared_cache


async def _idle_run(driver: JavaDriver, seconds: float) -> ClientRun:
    """The client idles against 127.0.0.1:1, where nothing listens (the harness's own path)."""
    run = await driver.start(
        "127.0.0.1:1", {"client.id": "kconform-java-test"}, Scenario.idle(seconds=seconds)
    )
    await run.wait(seconds + 30)
    return run


def _check_logs_and_events(run: ClientRun, version: str) -> None:
    events = [e.event for e in run.events]
    assert events == ["started", "closing", "closed"], (events, run.stderr_tail())
    assert run.events[0].data.get("version") == version
    assert run.other_output == [], "stdout holds more than the contract's JSON event lines"
    assert run.returncode == 0 and not run.timed_out
    stderr = run.stderr_tail(64 * 1024)
    levels = {m.group(1) for m in map(LOG_LINE.match, stderr.splitlines()) if m}
    assert levels and levels <= {"WARN", "ERROR", "FATAL"}, stderr[-3000:]
    assert re.search(
        r"\] WARN .*Connection to node -1 \(.*127\.0\.0\.1:1\) could not be established", stderr
    ), stderr[-3000:]
    assert "kconform-java-test" in stderr  # the client's own log context: its client.id


@needs_real
@pytest.mark.parametrize("version", VERSIONS)
def test_java_client_of_a_distribution_runs_and_logs_warnings_to_stderr(
    version: str, real_distributions: Path
) -> None:
    driver = create_driver(parse_clients(f"java:{version}")[0])
    assert isinstance(driver, JavaDriver)
    assert driver.unavailable_reason() is None
    description = driver.describe()
    assert (description["name"], description["implementation"], description["version"]) == (
        f"java:{version}", "apache-kafka-java", version
    )  # fmt: skip
    assert driver.home is not None and driver.home.is_relative_to(real_distributions)
    assert driver.compile().is_relative_to(real_distributions / "java-driver")
    _check_logs_and_events(asyncio.run(_idle_run(driver, 2.0)), version)


@needs_real
def test_plain_java_uses_the_classpath_variable(
    real_distributions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = kafka_dist.resolve("3.7.0").home
    monkeypatch.setenv(CLASSPATH_ENV, f"{home / 'libs'}/*")
    driver = create_driver(parse_clients("java")[0])
    assert driver.unavailable_reason() is None
    assert (driver.name, driver.version) == ("java", "3.7.0")
    assert isinstance(driver, JavaDriver) and driver.home is None


@needs_real
def test_java_driver_lists_what_its_jar_holds(real_distributions: Path) -> None:
    """share-consume only where kafka-clients has KafkaShareConsumer (3.9.0 on), the
    kconform.app.metric instruction only where it has registerMetricForSubscription (4.0.0
    on): read by reflection from the jar, so the version string decides nothing."""
    described = {}
    for version in ("3.7.0", "4.4.0"):
        driver = create_driver(parse_clients(f"java:{version}")[0])
        assert driver.unavailable_reason() is None
        described[version] = (sorted(driver.scenarios), sorted(driver.instructions))
    assert described == {
        "3.7.0": (["admin", "consume", "idle", "produce"], []),
        "4.4.0": (["admin", "consume", "idle", "produce", "share-consume"],
                  ["kconform.app.metric"]),
    }  # fmt: skip
