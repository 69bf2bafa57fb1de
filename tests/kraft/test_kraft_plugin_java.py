"""The sink plugin's Java, checked without Kafka jars: javac against stub APIs, then run.

`stubs/kafka-3.7` is the public API shape the plugin compiles against in 3.7-4.1 (Kafka's
interfaces with their exact packages and signatures, Yammer metrics-core 2.2.0); `stubs/kafka-4.2`
overlays 4.2's KIP-1217 interfaces and the deprecation-for-removal of the old ones. The plugin
must compile warning-free (`-Xlint:all -Werror`) against both, and its exporter class must need
4.2 (the Dockerfile compiles it only there). Then `java/SinkDriver.java` plays the broker on a
plain JVM and the Python side reads the real plugin's HTTP/JSON output.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kconform.fixtures.targets import kraft_config as cfg
from kconform.fixtures.targets.kraft_container import SinkClient

HERE = Path(__file__).resolve().parent
STUBS = HERE / "stubs"
PLUGIN_SRC = cfg.plugin_dir() / "src"
JAVAC, JAVA = shutil.which("javac"), shutil.which("java")
pytestmark = pytest.mark.skipif(
    JAVAC is None or JAVA is None, reason="javac/java (JDK 17+) not on PATH"
)


def sources(*roots: Path) -> list[str]:
    return sorted(str(p) for root in roots for p in root.rglob("*.java"))


def javac(out: Path, files: list[str], classpath: list[Path], *, strict: bool = True) -> str:
    """Compile; returns javac's output, raises AssertionError with it on failure."""
    out.mkdir(parents=True, exist_ok=True)
    args = [str(JAVAC), "--release", "17", "-d", str(out)]
    if classpath:
        args += ["-cp", ":".join(str(c) for c in classpath)]
    if strict:
        args += ["-Xlint:all", "-Werror"]
    result = subprocess.run([*args, *files], capture_output=True, text=True, timeout=120)
    if result.returncode:
        raise AssertionError(result.stdout + result.stderr)
    return result.stdout + result.stderr


def stub_tree(tmp: Path, *layers: str) -> Path:
    """The stub sources of `layers`, later layers replacing files of earlier ones."""
    tree = tmp / ("src-" + "+".join(layers))
    for layer in layers:
        shutil.copytree(STUBS / layer, tree, dirs_exist_ok=True)
    return tree


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Stubs and plugin compiled for 3.7 (main sources) and 4.2 (main + exporter)."""
    tmp = tmp_path_factory.mktemp("javac")
    out = {}
    for name, layers, roots in (
        ("3.7", ("kafka-3.7",), [PLUGIN_SRC / "main"]),
        ("4.2", ("kafka-3.7", "kafka-4.2"), [PLUGIN_SRC / "main", PLUGIN_SRC / "exporter"]),
    ):
        stubs = tmp / f"stubs-{name}"
        javac(stubs, sources(stub_tree(tmp, *layers)), [], strict=False)
        plugin = tmp / f"plugin-{name}"
        javac(plugin, sources(*roots), [stubs])
        out[f"stubs-{name}"], out[f"plugin-{name}"] = stubs, plugin
    return out


def test_plugin_compiles_against_the_3_7_api(compiled: dict[str, Path]) -> None:
    classes = {p.name for p in compiled["plugin-3.7"].rglob("*.class")}
    assert {"KconformSinkReporter.class", "SinkServer.class", "PushRecord.class"} <= classes
    assert "KconformSinkExporterReporter.class" not in classes


def test_plugin_and_exporter_compile_against_the_4_2_api(compiled: dict[str, Path]) -> None:
    classes = {p.name for p in compiled["plugin-4.2"].rglob("*.class")}
    assert "KconformSinkExporterReporter.class" in classes


def test_the_exporter_needs_4_2(compiled: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="ClientTelemetryExporterProvider"):
        javac(
            tmp_path / "out", sources(PLUGIN_SRC / "exporter"),
            [compiled["stubs-3.7"], compiled["plugin-3.7"]], strict=False,
        )  # fmt: skip


def test_every_api_type_the_plugin_imports_is_stubbed() -> None:
    imported = set()
    for path in sources(PLUGIN_SRC):
        imported |= set(re.findall(r"^import ((?:org\.apache\.kafka|com\.yammer)\.[\w.]+);",
                                   Path(path).read_text(), re.M))  # fmt: skip
    assert imported, "no Kafka imports found"
    for name in sorted(imported):
        rel = name.replace(".", "/") + ".java"
        assert (STUBS / "kafka-3.7" / rel).is_file() or (STUBS / "kafka-4.2" / rel).is_file(), name


THROWN: list[str] = []
"""What the driver's exports asked to throw threw, in order ("none" when nothing)."""


@pytest.fixture(scope="module")
def driver(
    compiled: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SinkClient]:
    """SinkDriver running: the plugin's SinkServer on an ephemeral port, fed four pushes."""
    out = tmp_path_factory.mktemp("driver")
    classpath = [compiled["stubs-3.7"], compiled["plugin-3.7"]]
    javac(out, [str(HERE / "java" / "SinkDriver.java")], classpath, strict=False)
    process = subprocess.Popen(
        [str(JAVA), "-cp", ":".join(str(c) for c in [*classpath, out]), "kconformtest.SinkDriver"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        while line.startswith("THREW "):
            THROWN.append(line.removeprefix("THREW ").strip())
            line = process.stdout.readline()
        match = re.fullmatch(r"PORT (\d+)\n", line)
        assert match, (
            f"driver said {line!r}; stderr: {process.stderr.read() if process.stderr else ''}"
        )
        client = SinkClient("127.0.0.1", int(match.group(1)))
        deadline = time.monotonic() + 10
        while client.get("/partition-metrics").get("sampled_at_ms") is None:
            assert time.monotonic() < deadline, "the sampler never ran"
            time.sleep(0.05)
        yield client
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def test_the_plugin_records_each_push_as_the_broker_handed_it(driver: SinkClient) -> None:
    first, second, third, fourth, *_ = driver.telemetry(broker_id=7)
    assert first.client_instance_id == "AAAAAAAAAAEAAAAAAAAAAg"
    assert first.payload == bytes([0x0A, 0x02, 0x08, 0x01]) and first.compression_type == 0
    assert first.client_id == 'weird "id"\n'  # escaped by the plugin, intact here
    assert (first.software_name, first.software_version) == ("apache-kafka-java", "3.9.1")
    assert (first.source_address, first.source_port) == ("127.0.0.1", 54321)
    assert not first.terminating
    # the same payload object through receiver and exporter is one push (KIP-1217 brokers)
    assert second.terminating and second.compression_type == 1
    assert second.software_name is None and second.source_port is None
    raw = driver.get("/telemetry")["records"]
    assert raw[1]["via"] == "receiver+exporter" and raw[1]["push_interval_ms"] == 5000
    assert raw[0]["principal"] == "User:ANONYMOUS" and raw[0]["request_type"] == 72
    # a payload method that throws is recorded as an error, never thrown back at the broker
    assert third.client_instance_id == "third-instance" and third.payload == b"\x55"
    assert "contentType: java.lang.IllegalStateException" in raw[2]["error"]
    assert third.compression_type == -1
    assert (
        fourth.client_instance_id == "fourth-instance" and "no request context" in raw[3]["error"]
    )
    assert [r["seq"] for r in driver.get("/telemetry?since=2")["records"]] == [3, 4, 5, 6, 7]
    assert driver.health() == {"ok": True, "node_id": "7", "records": 7, "dropped": 0,
                               "throw_on_demand": True, "thrown": 2}  # fmt: skip


def test_the_plugin_throws_only_when_switched_on_and_asked(driver: SinkClient) -> None:
    """ThrowOnDemand: the reserved metric name makes the receiver and the exporter throw, and
    only once the trigger is on; a near miss or bytes that are not protobuf are recorded."""
    ids = [r.client_instance_id for r in driver.telemetry(broker_id=7)]
    assert ids[4:] == ["fifth-instance", "sixth-instance", "seventh-instance"]
    assert "thrown-receiver" not in ids and "thrown-exporter" not in ids
    assert len(THROWN) == 2 and all("carries metric kconform.sink.throw" in t for t in THROWN)


def test_the_plugin_samples_partition_metrics(driver: SinkClient) -> None:
    got = {(m.source, m.topic, m.partition, m.metric): m.value for m in driver.partition_metrics()}
    assert got == {
        ("log_size", "t.a", 0, "Size"): 1234.0,
        ("log_end_offset", "t.a", 1, "LogEndOffset"): 7.0,  # not the is-future replica's 3
        ("broker_topic", "t.a", -1, "MessagesInPerSec"): 42.0,
        ("kip977", "t.a", 1, "BytesInPerSec"): 99.0,
    }  # a throwing gauge, topic-less meters and other groups are left out
