"""The `apache` target on real Apache Kafka: what it offers, and that nothing outlives it.

Needs a JDK and the release, from KCONFORM_KAFKA_DISTS or Maven Central (`mvn`); skipped with
the reason otherwise.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from spawned import spawn, stderr_of

from kconform.codecs.messages import GetTelemetrySubscriptionsRequest
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.runtime import LoopThread
from kconform.fixtures.targets.apache import ApacheTarget
from kconform.fixtures.targets.base import Capability, TargetError
from tests.apache.conftest import dists_folder, real_kafka_skip_reason

VERSION = "4.4.0"  # the newest release `make test` gates on (APACHE_CLUSTER)
pytestmark = pytest.mark.skipif(
    real_kafka_skip_reason(VERSION) is not None, reason=str(real_kafka_skip_reason(VERSION))
)
REPO = Path(__file__).resolve().parents[2]


def harness_env(run_dir: Path) -> dict[str, str]:
    dists = str(dists_folder() or "")
    return dict(os.environ, KCONFORM_RUN_DIR=str(run_dir), KCONFORM_KAFKA_DISTS=dists)


def processes_mentioning(text: str) -> list[int]:
    """Pids of live processes whose command line contains `text` (the run folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (
                (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            )
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z" and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def bindable(port: int) -> bool:
    """Nothing listens there. SO_REUSEADDR as Kafka's own acceptor sets it: connections left in
    TIME_WAIT by a killed broker do not hold the port, a listener still does."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def assert_nothing_left(run_dir: Path, ports: list[int], within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not processes_mentioning(str(run_dir)) and all(bindable(p) for p in ports):
            return
        time.sleep(0.2)
    left = processes_mentioning(str(run_dir))
    busy = [p for p in ports if not bindable(p)]
    raise AssertionError(f"left behind after {within}s: processes {left}, ports {busy}")


@pytest.fixture(scope="module")
def apache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheTarget]:
    os.environ.setdefault("KCONFORM_KAFKA_DISTS", str(dists_folder() or ""))
    run_dir = tmp_path_factory.mktemp("runs")
    old = os.environ.get("KCONFORM_RUN_DIR")
    os.environ["KCONFORM_RUN_DIR"] = str(run_dir)
    t = ApacheTarget(VERSION, brokers=1)
    try:
        t.start()
        yield t
    finally:
        t.stop()
        if old is None:
            os.environ.pop("KCONFORM_RUN_DIR", None)
        else:
            os.environ["KCONFORM_RUN_DIR"] = old


def telemetry_max_bytes(t: ApacheTarget) -> int:
    loop = LoopThread("test-apache")
    try:
        (broker,) = t.brokers
        conn = loop.run(KafkaConnection.open(broker.host, broker.port))
        answer = loop.run(
            conn.request(GetTelemetrySubscriptionsRequest(client_instance_id=uuid.UUID(int=0)), 0)
        )
        loop.run(conn.close())
        return int(answer.body.telemetry_max_bytes)
    finally:
        loop.stop()


def test_a_real_broker_with_the_sink(apache: ApacheTarget) -> None:
    assert apache.version == VERSION
    for capability in (Capability.TELEMETRY, Capability.CLIENT_METRICS_ADMIN,
                       Capability.TELEMETRY_SINK, Capability.PARTITION_METRICS,
                       Capability.TOPIC_ADMIN, Capability.RESTART,
                       Capability.STATIC_BROKER_CONFIG):  # fmt: skip
        assert apache.has(capability), capability
    assert apache.telemetry_received() == []
    info = apache.describe()
    # the sink's class follows the jars: KIP-1217's exporter variant on 4.2+ (4.4.0 here)
    exporter_api = "org/apache/kafka/server/telemetry/ClientTelemetryExporterProvider.class"
    assert apache.distribution is not None
    with zipfile.ZipFile(apache.distribution.clients_jar()) as jar:
        has_exporter = exporter_api in jar.namelist()
    assert info["reporter"] == (
        "dev.kconform.sink.KconformSinkExporterReporter"
        if has_exporter
        else "dev.kconform.sink.KconformSinkReporter"
    )
    assert [b.host for b in apache.brokers] == ["127.0.0.1"]


def test_every_port_is_on_the_loopback(apache: ApacheTarget) -> None:
    """No listener of a node, the sink included, is reachable from another host."""
    loopback = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1, as v4 and v4-mapped
    listening: dict[int, set[str]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A":  # LISTEN
                address, port = local.split(":")
                listening.setdefault(int(port, 16), set()).add(address)
    (node,) = apache.nodes
    for port in (node.port, node.broker_port, node.controller_port, node.sink_port):
        assert listening.get(port), f"nothing listens on {port}"
        assert listening[port] <= loopback, f"port {port} listens on {listening[port]}"


def test_topics_survive_a_restart(apache: ApacheTarget) -> None:
    apache.create_topic("kc-apache-restart", partitions=3)
    apache.create_topic("kc-apache-restart", partitions=3)  # idempotent, like --if-not-exists
    before = apache.describe()["bootstrap"]
    apache.restart()
    assert apache.describe()["bootstrap"] == before
    apache.create_topic("kc-apache-restart", partitions=3)
    deadline = time.monotonic() + 15  # the sink samples the broker's gauges once a second
    seen: set[int] = set()
    while seen != {0, 1, 2} and time.monotonic() < deadline:
        time.sleep(0.5)
        seen = {m.partition for m in apache.partition_metrics() if m.topic == "kc-apache-restart"}
    assert seen == {0, 1, 2}


def test_static_settings_apply_by_restarting(apache: ApacheTarget) -> None:
    assert telemetry_max_bytes(apache) == 1048576  # Apache's default
    apache.set_static_config("telemetry.max.bytes", "4096")
    assert "telemetry.max.bytes=4096" in apache.nodes[0].properties_file.read_text()
    assert telemetry_max_bytes(apache) == 4096
    apache.set_static_config("telemetry.max.bytes", None)
    assert telemetry_max_bytes(apache) == 1048576


def test_stop_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCONFORM_RUN_DIR", str(tmp_path))
    t = ApacheTarget(VERSION, brokers=1)
    t.start()
    (node,) = t.nodes
    run_dir = t.run_dir
    assert run_dir is not None and processes_mentioning(str(run_dir))
    t.stop()
    t.stop()  # twice is fine
    assert_nothing_left(run_dir, [node.port, node.sink_port], within=5)
    assert not run_dir.exists()
    with pytest.raises(TargetError, match="not running"):
        t.check_alive()


HARNESS = textwrap.dedent(
    """
    import json, sys, time
    from kconform.fixtures.targets.apache import ApacheTarget
    t = ApacheTarget(sys.argv[1], brokers=int(sys.argv[2]))
    t.start()
    print(json.dumps({"run_dir": str(t.run_dir),
                      "ports": [p for n in t.nodes for p in (n.port, n.sink_port)]}), flush=True)
    time.sleep(600)
    """
)


def test_sigkill_of_the_harness_leaves_nothing(tmp_path: Path) -> None:
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS, VERSION, "1"], stdout=subprocess.PIPE,
        env=harness_env(tmp_path), cwd=REPO,
    )  # fmt: skip
    try:
        assert harness.stdout is not None
        started = json.loads(harness.stdout.readline())
        assert processes_mentioning(started["run_dir"])
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    assert_nothing_left(Path(started["run_dir"]), started["ports"])
    # the folder stays until the next start notices its owner is gone, then it is swept
    from kconform.fixtures.targets.apache import sweep_stale_runs

    assert Path(started["run_dir"]) in sweep_stale_runs(tmp_path)


def test_ctrl_c_of_kconform_run_leaves_nothing(tmp_path: Path) -> None:
    run = subprocess.Popen(
        [sys.executable, "-m", "kconform.cli", "run", "--target", f"apache:{VERSION}",
         "--brokers", "1", "--cases", "kip511.*,kip714.*", "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=harness_env(tmp_path), cwd=REPO,
        text=True,
    )  # fmt: skip
    assert run.stdout is not None
    seen = []
    for line in run.stdout:
        seen.append(line)
        if line.startswith("[   3/"):  # the target is up and cases are running
            break
    else:
        pytest.fail("kconform run ended before any case ran:\n" + "".join(seen[-30:]))
    run_dirs = list(tmp_path.glob("kconform-apache-*"))
    assert len(run_dirs) == 1
    run.send_signal(signal.SIGINT)
    rest = run.stdout.read()
    assert run.wait(timeout=60) == 2, rest[-2000:]
    assert_nothing_left(run_dirs[0], [], within=20)
    assert (tmp_path / "out" / "results.json").is_file()


def test_serve_prints_the_sink_a_run_against_it_needs(tmp_path: Path) -> None:
    """`kconform serve apache:<v>` keeps a real broker up for `--bootstrap-server` runs; the
    telemetry_sink cases also need `--sink`, which only the served broker's plugin port gives,
    so serve prints it and the whole command line (before, a user had to find the port)."""
    serve = spawn(
        [sys.executable, "-m", "kconform.cli", "serve", f"apache:{VERSION}"],
        tmp_path / "stderr", env=harness_env(tmp_path), cwd=REPO,
    )  # fmt: skip
    assert serve.stdout is not None
    lines: list[str] = []
    try:
        for line in serve.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("# Ctrl-C"):
                break
        bootstrap = lines[0]
        (sink,) = [x.removeprefix("# sink: ") for x in lines if x.startswith("# sink: ")]
        assert f"# suites: kconform run --bootstrap-server {bootstrap} --sink {sink}" in lines
        host, port = sink.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5):
            pass  # the plugin's HTTP endpoint listens there
        run_dirs = list(tmp_path.glob("kconform-apache-*"))
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
    assert serve.returncode == 0, stderr_of(tmp_path / "stderr")[-2000:]
    assert len(run_dirs) == 1
    assert_nothing_left(run_dirs[0], [int(port)], within=20)
