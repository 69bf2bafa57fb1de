"""The kraft target's engine-facing logic without an engine: network mode, host-mode settings,
the plugin image's cache key, and the cleanup that works without testcontainers' reaper."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kconform.errors import HarnessDefect
from kconform.fixtures.targets import kraft_config as cfg
from kconform.fixtures.targets import kraft_container as kc
from kconform.fixtures.targets import kraft_reaper as reaper
from kconform.fixtures.targets.apache import local_properties
from kconform.fixtures.targets.kraft_container import KraftContainerTarget
from tests.kraft.conftest import FakeDocker, FakeResource
from tests.kraft.test_kraft_config import image_property

# --- network mode --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "bridge", "mode"),
    [(None, True, "bridge"), ("", False, "host"), ("auto", True, "bridge"),
     (" AUTO ", False, "host"), ("host", True, "host"), ("host", False, "host"),
     ("bridge", True, "bridge")],
)  # fmt: skip
def test_network_mode_follows_the_engine_unless_told(
    requested: str | None, bridge: bool, mode: str
) -> None:
    assert cfg.network_mode(requested, bridge_available=bridge) == mode


def test_network_mode_refuses_what_cannot_be() -> None:
    with pytest.raises(ValueError, match="no bridge network"):
        cfg.network_mode("bridge", bridge_available=False)
    with pytest.raises(ValueError, match="KCONFORM_KRAFT_NETWORK='overlay'"):
        cfg.network_mode("overlay", bridge_available=True)
    with pytest.raises(ValueError, match="expected one of auto, bridge, host"):
        KraftContainerTarget("4.1.0", network="hots")


def test_the_target_reads_its_network_and_jdk_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(cfg.NETWORK_ENV, "host")
    monkeypatch.setenv(cfg.JDK_IMAGE_ENV, "local/jdk:17")
    target = KraftContainerTarget("4.1.0")
    assert (target.network_request, target.jdk_image) == ("host", "local/jdk:17")
    assert KraftContainerTarget("4.1.0", network="bridge").network_request == "bridge"
    monkeypatch.delenv(cfg.JDK_IMAGE_ENV)
    assert KraftContainerTarget("4.1.0").jdk_image == cfg.DEFAULT_JDK_IMAGE


def test_has_bridge_means_the_default_bridge_network() -> None:
    docker = FakeDocker()
    assert kc._has_bridge(docker)
    docker.networks.get("bridge").removed = True
    docker.networks.create("my-bridge-net")  # a user network with a similar name is not it
    assert not kc._has_bridge(docker)


# --- host mode: every address on the loopback ----------------------------------------------------


def test_host_nodes_have_four_ports_each_and_the_image_volume() -> None:
    nodes = kc.host_nodes(list(range(7001, 7013)))
    assert [(n.node_id, n.port, n.broker_port, n.controller_port, n.sink_port) for n in nodes] == [
        (1, 7001, 7002, 7003, 7004), (2, 7005, 7006, 7007, 7008), (3, 7009, 7010, 7011, 7012),
    ]  # fmt: skip
    assert {str(n.folder / "data") for n in nodes} == {cfg.LOG_DIR}
    for bad in ([], [1, 2, 3]):
        with pytest.raises(HarnessDefect, match="four ports"):
            kc.host_nodes(bad)


def test_host_env_is_the_apache_targets_settings_through_the_image() -> None:
    nodes = kc.host_nodes(list(range(7001, 7013)))
    cid = cfg.new_cluster_id()
    env = kc.host_env(nodes[1], nodes, version="3.7.0", cluster_id=cid, extra={"a.b": "c"})
    excluded = {"KAFKA_HEAP_OPTS", "KAFKA_JMX_OPTS"}  # the image's wrapper skips these
    as_props = {image_property(k): v for k, v in env.items()
                if k.startswith("KAFKA_") and k not in excluded}  # fmt: skip
    expected = local_properties(nodes[1], nodes, reporter=cfg.REPORTER_CLASS, extra={"a.b": "c"})
    assert as_props == expected  # one source of broker settings for both doors
    assert (
        expected["controller.quorum.voters"] == "1@127.0.0.1:7003,2@127.0.0.1:7007,3@127.0.0.1:7011"
    )
    assert expected["advertised.listeners"] == "BROKER://127.0.0.1:7006,EXTERNAL://127.0.0.1:7005"
    assert expected["log.dirs"] == cfg.LOG_DIR
    assert (env["KCONFORM_SINK_HOST"], env["KCONFORM_SINK_PORT"]) == ("127.0.0.1", "7008")
    assert (expected["kconform.sink.host"], expected["kconform.sink.port"]) == ("127.0.0.1", "7008")
    assert env["KAFKA_JMX_OPTS"] == "-Dcom.sun.management.jmxremote=false"
    assert env["CLUSTER_ID"] == cid
    addresses = [a for k in ("listeners", "advertised.listeners") for a in expected[k].split(",")]
    hosts = {a.rsplit(":", 1)[0].split("//")[-1] for a in addresses}
    assert hosts == {"127.0.0.1"}


def test_both_doors_give_a_node_the_same_heap() -> None:
    from kconform.fixtures.targets import apache

    nodes = kc.host_nodes([7001, 7002, 7003, 7004])
    env = kc.host_env(nodes[0], nodes, version="4.1.0", cluster_id=cfg.new_cluster_id())
    local = apache.ApacheTarget("4.1.0")  # not started: its default heap is all we read
    assert env["KAFKA_HEAP_OPTS"] == cfg.HEAP == local.heap


def test_bridge_env_keeps_the_sink_on_every_interface_and_jmx_off() -> None:
    nodes = cfg.plan_nodes([5001, 5002])
    env = cfg.node_env(nodes[0], nodes, version="4.1.0", cluster_id=cfg.new_cluster_id())
    assert "KCONFORM_SINK_HOST" not in env and env["KCONFORM_SINK_PORT"] == str(cfg.SINK_PORT)
    assert env["KAFKA_JMX_OPTS"] == cfg.JMX_OFF


# --- the plugin image: keyed by the base image's ID ---------------------------------------------


def test_the_image_tag_names_the_base_and_jdk_ids() -> None:
    tag = cfg.image_tag("3.9.1", base_id="sha256:aaa")
    assert tag != cfg.image_tag("3.9.1", base_id="sha256:bbb")  # a rebuilt apache/kafka:3.9.1
    assert tag != cfg.image_tag("3.9.1", base_id="sha256:aaa", jdk_id="sha256:ccc")
    assert tag != cfg.image_tag("3.9.1", base_id="sha256:aaa", jdk_image="local/jdk:17")
    assert tag == cfg.image_tag("3.9.1", base_id="sha256:aaa")


def test_build_args_name_the_jdk_image() -> None:
    assert cfg.build_args("3.9.1") == {
        "KAFKA_VERSION": "3.9.1", "KAFKA_IMAGE": "apache/kafka",
        "JDK_IMAGE": cfg.DEFAULT_JDK_IMAGE,
    }  # fmt: skip
    assert cfg.build_args("4.1.0", "mirror/kafka", "local/jdk:17")["JDK_IMAGE"] == "local/jdk:17"


def test_the_image_is_built_once_per_tag_and_again_for_a_new_base(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import testcontainers.core.image

    docker = FakeDocker()
    builds: list[tuple[str, dict[str, Any]]] = []

    class Image:
        def __init__(self, path: str, tag: str, clean_up: bool, **kwargs: Any) -> None:
            assert path == str(cfg.plugin_dir()) and not clean_up
            self.tag, self.kwargs = tag, kwargs

        def build(self) -> Image:
            builds.append((self.tag, self.kwargs))
            docker.images.create(self.tag)
            return self

    monkeypatch.setattr(testcontainers.core.image, "DockerImage", Image)
    base = docker.images.create("apache/kafka:3.9.1")
    target = KraftContainerTarget("3.9.1", jdk_image="local/jdk:17")
    tag = target._ensure_image(docker)
    assert tag == cfg.image_tag("3.9.1", base_id=base.id, jdk_image="local/jdk:17",
                                jdk_id="sha256:local/jdk:17")  # fmt: skip
    assert docker.images.pulled == [("local/jdk", "17")]  # absent: pulled before the key
    assert target._ensure_image(docker) == tag and len(builds) == 1
    assert builds[0][1] == {
        "buildargs": {"KAFKA_VERSION": "3.9.1", "KAFKA_IMAGE": "apache/kafka",
                      "JDK_IMAGE": "local/jdk:17"},
        "network_mode": "none", "forcerm": True,
    }  # fmt: skip
    base.removed = True  # apache/kafka:3.9.1 rebuilt under the same name
    docker.images.items.append(FakeResource("apache/kafka:3.9.1", id="sha256:rebuilt"))
    assert target._ensure_image(docker) != tag and len(builds) == 2


# --- cleanup without ryuk -------------------------------------------------------------------------


def labels(pid: int, host: str | None = None) -> dict[str, str]:
    return {reaper.LABEL_TARGET: "kraft", reaper.LABEL_RUN: f"r{pid}",
            reaper.LABEL_OWNER: f"{host or socket.gethostname()}:{pid}"}  # fmt: skip


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_orphans_are_resources_of_dead_harnesses_on_this_host() -> None:
    host = socket.gethostname()
    assert reaper.orphaned(labels(dead_pid()), host)
    assert not reaper.orphaned(labels(os.getppid()), host)  # alive
    assert not reaper.orphaned(labels(os.getpid()), host)  # this harness
    assert not reaper.orphaned(labels(dead_pid(), host="elsewhere"), host)  # cannot tell: keep
    assert not reaper.orphaned({}, host)


def test_the_sweep_removes_only_orphans() -> None:
    docker = FakeDocker()
    gone, alive = dead_pid(), os.getppid()
    for pid in (gone, alive):
        docker.containers.create(f"c{pid}", labels(pid))
        docker.volumes.create(f"v{pid}", labels(pid))
        docker.networks.create(f"n{pid}", labels(pid))
    assert reaper.sweep_orphans(docker) == []
    assert sorted(r.name for r in docker.containers.list() + docker.volumes.list()) == [
        f"c{alive}", f"v{alive}",
    ]  # fmt: skip
    assert [n.name for n in docker.networks.list() if n.labels] == [f"n{alive}"]


def test_removal_failures_are_reported_not_raised() -> None:
    docker = FakeDocker()
    stuck = docker.containers.create("stuck", labels(1))

    def refuse(**kwargs: Any) -> None:
        raise RuntimeError("device busy")

    stuck.remove = refuse  # type: ignore[method-assign]
    docker.containers.create("gone", labels(1)).remove = lambda **kw: (_ for _ in ()).throw(
        RuntimeError("No such container: gone")
    )
    problems = reaper.remove_labelled(docker, f"{reaper.LABEL_RUN}=r1")
    assert problems == ["container stuck: device busy"]


def test_the_watcher_removes_the_run_when_its_pipe_closes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    docker = FakeDocker()
    mine, other = (
        docker.containers.create("mine", labels(1)),
        docker.containers.create("x", labels(2)),
    )
    monkeypatch.setattr(reaper, "docker_client", lambda timeout: docker)
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    try:
        os.dup2(read_end, 0)
        os.close(write_end)  # the harness is gone
        assert reaper.reap_main(["--reap", "r1"]) == 0
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read_end)
    assert mine.removed and not other.removed
    assert reaper.reap_main([]) == 2


def test_the_watcher_runs_as_a_module() -> None:
    """What `_watch` starts: the module's entry point; without an engine it says so, briefly."""
    done = subprocess.run(
        [sys.executable, "-m", reaper.__name__, "--reap", "nothing"], input=b"",
        capture_output=True, env={**os.environ, "DOCKER_HOST": "unix:///nonexistent.sock"},
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(b"kraft reaper: "), done.stderr


def test_stop_closes_the_watchers_pipe_and_waits_for_it() -> None:
    target = KraftContainerTarget("4.1.0")
    read_end, write_end = os.pipe()
    target._watcher = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"], stdin=read_end
    )
    os.close(read_end)
    target._watch_fd = write_end
    target.stop()
    assert target._watcher is None and target._watch_fd == -1 and target.cleanup_errors == []
