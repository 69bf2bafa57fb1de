"""The driver contract and registry: command lines, events, names, and no stray processes."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kconform.errors import Unsupported
from kconform.fixtures.clients import Scenario, create_driver, parse_clients
from kconform.fixtures.clients.contract import (
    command_line,
    like_default,
    parse_command_line,
    parse_event,
)
from kconform.fixtures.clients.java import CLASSPATH_ENV, SOURCE
from kconform.fixtures.targets.base import Capability
from kconform.runner import client_names, default_baselines


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario.produce("t1", rate=12.5, seconds=3),
        Scenario.consume("t2", group="g", seconds=4),
        Scenario.idle(seconds=1.5),
    ],
)
def test_command_line_round_trip(scenario: Scenario) -> None:
    config = {"client.id": "x", "enable.metrics.push": "false", "odd": "a=b"}
    parsed = parse_command_line(command_line("h:1,h:2", config, scenario))
    assert (parsed.bootstrap, parsed.config, parsed.scenario) == ("h:1,h:2", config, scenario)


def test_scenario_needs_its_arguments() -> None:
    with pytest.raises(ValueError, match="needs a topic"):
        Scenario("produce", 1.0)
    with pytest.raises(ValueError, match="needs a group"):
        Scenario("consume", 1.0, topic="t")


def test_events_are_json_lines_with_event_and_time() -> None:
    event = parse_event('{"event": "delivered", "t": 12.5, "offset": 3}\n')
    assert event is not None and (event.event, event.t, dict(event.data)) == (
        "delivered", 12.5, {"offset": 3})  # fmt: skip
    assert parse_event("%7|librdkafka log line") is None
    assert parse_event('{"no": "event"}') is None


@pytest.mark.parametrize(
    ("value", "default", "converted"),
    [("true", False, True), ("0", True, False), ("5", 1, 5), ("0.5", 1.0, 0.5), ("x", None, "x"),
     ("snappy", "none", "snappy")],
)  # fmt: skip
def test_python_drivers_type_a_config_value_as_its_default(
    value: str, default: object, converted: object
) -> None:
    """A bool default is tested before int (bool is an int): 'true' must not become int('true')."""
    assert like_default(value, default) == converted
    assert type(like_default(value, default)) is type(converted)


def test_client_names() -> None:
    specs = parse_clients("confluent-kafka, kafka-python,java,command:/x/y")
    assert [s.label for s in specs] == ["confluent-kafka", "kafka-python", "java", "command:/x/y"]
    for bad in ("librdkafka", "command:", "java:1"):
        with pytest.raises(ValueError):
            parse_clients(bad)


def test_a_pinned_client_is_matched_to_its_baseline_by_the_label_it_runs_as() -> None:
    pinned = parse_clients("java@4.4.0,confluent-kafka")
    assert client_names(pinned) == ["java:4.4.0", "confluent-kafka"]
    assert [s.label for s in parse_clients(",".join(client_names(pinned)))] == client_names(pinned)
    found = default_baselines(["reference", *client_names(parse_clients("java@4.4.0"))])
    assert [p.parts[-2:] for p in found if p.parent.name == "java"] == [("java", "4.4.0.json")]


def test_installed_drivers_identify_themselves() -> None:
    confluent = create_driver(parse_clients("confluent-kafka")[0])
    assert confluent.unavailable_reason() is None
    assert Capability.TELEMETRY in confluent.capabilities
    assert confluent.describe()["name"] == "confluent-kafka"
    kafka_python = create_driver(parse_clients("kafka-python")[0])
    assert kafka_python.unavailable_reason() is None
    assert kafka_python.capabilities == frozenset()  # KIP-511 only: telemetry cases unsupported


def test_java_driver_unavailable_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CLASSPATH_ENV, raising=False)
    reason = create_driver(parse_clients("java")[0]).unavailable_reason()
    assert reason is not None and CLASSPATH_ENV in reason
    assert "java" not in [s.label for s in parse_clients("")]  # "" = drivers that can run


def test_missing_command_is_unavailable(tmp_path: Path) -> None:
    driver = create_driver(parse_clients(f"command:{tmp_path / 'nope'}")[0])
    assert "does not exist" in (driver.unavailable_reason() or "")


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "client.py"
    path.write_text(textwrap.dedent(body))
    return f"command:{path}"


def test_run_collects_events_and_stops_an_overrunning_client(tmp_path: Path) -> None:
    spec = _script(
        tmp_path,
        """
        import json, os, sys, time
        if sys.argv[1:] == ["--describe"]:
            print(json.dumps({"implementation": "t", "version": "9", "capabilities": []}))
            raise SystemExit(0)
        print(json.dumps({"event": "started", "t": time.time(), "pid": os.getpid()}), flush=True)
        print("not an event", flush=True)
        child = os.fork()  # a helper process: must die with the run's process group
        if child == 0:
            time.sleep(60)
        time.sleep(60)
    """,
    )
    driver = create_driver(parse_clients(spec)[0])
    assert (driver.version, driver.capabilities) == ("9", frozenset())

    async def scenario() -> tuple[list, object]:
        run = await driver.start("127.0.0.1:1", {"client.id": "c"}, Scenario.idle(seconds=0.1))
        events = await run.wait(1.0)
        return events, run

    events, run = asyncio.run(scenario())
    assert [e.event for e in events] == ["started"]
    assert run.timed_out and run.other_output == ["not an event"]
    deadline = time.monotonic() + 2.0  # a killed helper may need a moment to go
    while _alive_in_group(run.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive_in_group(run.pid) == [], "the run left processes behind"


def _alive_in_group(pgid: int) -> list[str]:
    """Processes of the group that still run (zombies wait for init to reap them: not alive)."""
    listing = subprocess.run(["ps", "-eo", "pid=,pgid=,stat="], capture_output=True, text=True)
    return [
        line
        for line in listing.stdout.splitlines()
        if line.split()[1] == str(pgid) and not line.split()[2].startswith("Z")
    ]


@pytest.mark.skipif(shutil.which("javac") is None, reason="no javac")
def test_java_driver_source_compiles_against_the_client_api(tmp_path: Path) -> None:
    """Stubs of the few kafka-clients types the driver uses stand in for the jar."""
    stubs = {
        "org/apache/kafka/common/utils/AppInfoParser.java":
            "public class AppInfoParser { public static String getVersion() { return \"x\"; } }",
        "org/apache/kafka/clients/producer/RecordMetadata.java":
            "public class RecordMetadata { public String topic() { return null; } "
            "public int partition() { return 0; } public long offset() { return 0; } }",
        "org/apache/kafka/clients/producer/Callback.java":
            "public interface Callback { void onCompletion(RecordMetadata m, Exception e); }",
        "org/apache/kafka/clients/producer/ProducerRecord.java":
            "public class ProducerRecord<K, V> { public ProducerRecord(String t, V v) { } }",
        "org/apache/kafka/clients/producer/KafkaProducer.java":
            "public class KafkaProducer<K, V> implements AutoCloseable { "
            "public KafkaProducer(java.util.Properties p) { } "
            "public Object send(ProducerRecord<K, V> r, Callback c) { return null; } "
            "public void flush() { } public void close() { } }",
        "org/apache/kafka/clients/consumer/ConsumerRecord.java":
            "public class ConsumerRecord<K, V> { public String topic() { return null; } "
            "public int partition() { return 0; } public long offset() { return 0; } }",
        "org/apache/kafka/clients/consumer/ConsumerRecords.java":
            "public class ConsumerRecords<K, V> implements Iterable<ConsumerRecord<K, V>> { "
            "public java.util.Iterator<ConsumerRecord<K, V>> iterator() { return null; } }",
        "org/apache/kafka/clients/consumer/KafkaConsumer.java":
            "public class KafkaConsumer<K, V> implements AutoCloseable { "
            "public KafkaConsumer(java.util.Properties p) { } "
            "public void subscribe(java.util.Collection<String> t) { } "
            "public ConsumerRecords<K, V> poll(java.time.Duration d) { return null; } "
            "public void close() { } }",
        # the admin scenario and the application metric (KIP-1076, called by reflection)
        "org/apache/kafka/common/KafkaFuture.java":
            "public class KafkaFuture<T> { public T get(long n, java.util.concurrent.TimeUnit u) "
            "throws java.util.concurrent.ExecutionException, "
            "java.util.concurrent.TimeoutException, InterruptedException { return null; } }",
        "org/apache/kafka/clients/admin/DescribeClusterResult.java":
            "public class DescribeClusterResult { public org.apache.kafka.common.KafkaFuture<"
            "java.util.Collection<Object>> nodes() { return null; } }",
        "org/apache/kafka/clients/admin/Admin.java":
            "public interface Admin extends AutoCloseable { static Admin create("
            "java.util.Properties p) { return null; } DescribeClusterResult describeCluster(); "
            "void close(); }",
        "org/apache/kafka/common/MetricName.java": "public class MetricName { }",
        "org/apache/kafka/common/metrics/KafkaMetric.java": "public class KafkaMetric { }",
        "org/apache/kafka/common/metrics/MeasurableStat.java":
            "public interface MeasurableStat { }",
        "org/apache/kafka/common/metrics/stats/CumulativeSum.java":
            "public class CumulativeSum implements org.apache.kafka.common.metrics.MeasurableStat "
            "{ }",
        "org/apache/kafka/common/metrics/Sensor.java":
            "public class Sensor { public boolean add(org.apache.kafka.common.MetricName n, "
            "MeasurableStat s) { return true; } public void record(double v) { } }",
        "org/apache/kafka/common/metrics/Metrics.java":
            "public class Metrics { public org.apache.kafka.common.MetricName metricName(String n,"
            " String g, String d) { return null; } public Sensor sensor(String n) { return null; }"
            " public KafkaMetric metric(org.apache.kafka.common.MetricName n) { return null; } }",
    }  # fmt: skip
    sources = []
    for relative, body in stubs.items():
        path = tmp_path / "stubs" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        package = relative.rsplit("/", 1)[0].replace("/", ".")
        path.write_text(f"package {package};\n{body}\n")
        sources.append(str(path))
    done = subprocess.run(
        ["javac", "-d", str(tmp_path / "out"), *sources, str(SOURCE)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "LC_ALL": "C"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("suffix", [".sh", ".py"])
def test_command_driver_runs_the_path_as_given_not_the_symlink_target(
    tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Programs that read their own name (argv[0]) see the name they were called by."""
    real = tmp_path / "real" / f"driver-real{suffix}"
    real.parent.mkdir()
    if suffix == ".sh":
        real.write_text(
            '#!/bin/sh\nprintf \'{"implementation": "%s", "capabilities": []}\\n\' "$0"\n'
        )
        real.chmod(0o755)
    else:
        real.write_text(
            "import json, sys\n"
            "print(json.dumps({'implementation': sys.argv[0], 'capabilities': []}))\n"
        )
    (tmp_path / "bin").mkdir()
    link = tmp_path / "bin" / f"kafka-client{suffix}"
    link.symlink_to(real)
    driver = create_driver(parse_clients(f"command:{link}")[0])
    assert driver.implementation == str(link)
    assert driver.executable()[-1] == str(link)
    # a relative path runs as the same absolute path (the driver is started from any cwd)
    monkeypatch.chdir(tmp_path / "bin")
    relative = create_driver(parse_clients(f"command:kafka-client{suffix}")[0])
    assert relative.implementation == str(link)


def test_the_installed_confluent_kafka_names_the_librdkafka_it_bundles() -> None:
    """Which librdkafka a binding runs is what librdkafka reports, not the binding's version:
    confluent-kafka 2.16.1 ships 2.16.0. results.json's subjects carry it (`bundles`)."""
    import confluent_kafka

    described = create_driver(parse_clients("confluent-kafka")[0]).describe()
    assert described["bundles"] == {"librdkafka": confluent_kafka.libversion()[0]}


def test_a_command_driver_may_name_what_it_bundles(tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    body = "import json\nprint(json.dumps({'implementation': 'x', 'bundles': %s}))\n"
    script.write_text(body % "{'librdkafka': '2.8.0'}")
    driver = create_driver(parse_clients(f"command:{script}")[0])
    assert driver.unavailable_reason() is None
    assert driver.describe()["bundles"] == {"librdkafka": "2.8.0"}
    script.write_text(body % "['librdkafka']")
    reason = create_driver(parse_clients(f"command:{script}")[0]).unavailable_reason() or ""
    assert "'bundles' as [\"librdkafka\"]" in reason and "expected an object" in reason


def test_describe_scenarios_decide_what_a_driver_is_asked(tmp_path: Path) -> None:
    """No `scenarios`: the three the contract began with; a listed one is kept; an unknown one
    is a contract problem; a scenario the driver lacks is `unsupported`, never started."""
    script = tmp_path / "client.py"
    body = "import json\nprint(json.dumps({'implementation': 'x'%s}))\n"
    script.write_text(body % "")
    old = create_driver(parse_clients(f"command:{script}")[0])
    assert old.scenarios == {"produce", "consume", "idle"}
    assert "scenarios" not in old.describe()
    with pytest.raises(Unsupported, match="does not list the 'admin' scenario \\(an Admin client"):
        asyncio.run(old.start("127.0.0.1:9", {}, Scenario.admin(seconds=1)))
    script.write_text(body % ", 'scenarios': ['idle', 'admin']")
    new = create_driver(parse_clients(f"command:{script}")[0])
    assert new.scenarios == {"idle", "admin"} and new.describe()["scenarios"] == ["admin", "idle"]
    script.write_text(body % ", 'scenarios': ['teleport']")
    reason = create_driver(parse_clients(f"command:{script}")[0]).unavailable_reason() or ""
    assert "'teleport'" in reason or '"teleport"' in reason


def test_unknown_capability_in_describe_is_reported(tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    script.write_text(
        "import json\n"
        "print(json.dumps({'implementation': 'x', 'capabilities': ['telemetry', 'teleportation']}))"
    )
    spec = parse_clients(f"command:{script}")
    driver = create_driver(spec[0])  # a plain pytest run: its cases are skipped with the reason
    assert "'teleportation'" in (driver.unavailable_reason() or "")
    from kconform.fixtures.clients.registry import check_clients  # what the CLI asks first

    with pytest.raises(ValueError, match=r"'teleportation'.*known: .*telemetry"):
        check_clients(spec)


def test_kafka_python_stops_when_asked_while_its_constructor_retries_the_bootstrap() -> None:
    """kafka-python retries its bootstrap inside the constructor (for the whole scenario here):
    SIGTERM must end the driver then, not when the constructor gives up 30 s later."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kconform.fixtures.clients.kafka_python_driver",
         *command_line("127.0.0.1:9", {}, Scenario.idle(seconds=30))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert '"started"' in process.stdout.readline()  # now in the constructor
        time.sleep(1.0)
        asked = time.monotonic()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=25)
        took = time.monotonic() - asked
    finally:
        process.kill()
    assert process.returncode == 0, err[-2000:]
    assert took < 10, f"{took:.1f} s after SIGTERM"
    assert "stopped while its client was being constructed" in err
    assert '"closed"' not in out  # no client was made, so none is said to be closed
