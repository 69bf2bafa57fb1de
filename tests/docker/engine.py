"""A Docker engine of the CI's own: bridge-less, under the build folder, gone when stopped.

Test machinery for `provision.py`, not product code. The engine never makes a bridge or any
private-range address (`--bridge=none --iptables=false --ip-forward=false --ip-masq=false`;
containers use host networking), keeps its data, state and socket under one folder, and runs
its own containerd, so no engine or containerd already on the machine is touched. Both daemons
run under `fixtures/targets/nanny.py`: if the provisioning process dies, however it dies, they
are stopped (dockerd stops its containers when it stops). A pull would go to 127.0.0.1:9 (the
daemon's proxy) and fail there: images are built locally, never fetched.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
NANNY = REPO / "fixtures" / "targets" / "nanny.py"
DOCKERD_NETWORK_FLAGS = (
    "--bridge=none",
    "--iptables=false",
    "--ip-forward=false",
    "--ip-masq=false",
)
NO_REGISTRY = "http://127.0.0.1:9"  # the daemon's proxy: a pull attempt ends on the loopback
# What dockerd 20.10 and containerd 1.6 write outside their configured paths (a trust key,
# the plugin socket folder, the shims' socket folder): removed at stop when they were not there
# before (folders only when empty), deepest first.
OUTSIDE = tuple(
    Path(p)
    for p in ("/etc/docker/key.json", "/etc/docker", "/run/docker/plugins", "/run/docker",
              "/run/containerd/s", "/run/containerd")
)  # fmt: skip
PRIVATE_PREFIXES = ("10.", "192.168.", *(f"172.{n}." for n in range(16, 32)))


class EngineError(RuntimeError):
    pass


class _Daemon:
    """One daemon under the nanny; closing `keepalive` (or this process dying) stops it."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str], grace: float) -> None:
        read_end, write_end = os.pipe()
        self.log = log
        with log.open("ab") as out:
            try:
                self.process = subprocess.Popen(
                    [sys.executable, "-S", str(NANNY), "--grace", str(grace), "--", *argv],
                    stdin=read_end, stdout=out, stderr=subprocess.STDOUT, env=env,
                    start_new_session=True,
                )  # fmt: skip
            except BaseException:
                os.close(write_end)
                raise
            finally:
                os.close(read_end)
        self.keepalive = write_end
        self.grace = grace

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> int:
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=self.grace + 15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        with contextlib.suppress(OSError):
            os.close(self.keepalive)
        return code


class Engine:
    """containerd + dockerd with everything under `root`; `host` is its DOCKER_HOST."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.exec_root = root / "exec"
        self.socket = root / "docker.sock"
        self.containerd_socket = self.exec_root / "containerd" / "containerd.sock"
        self.host = f"unix://{self.socket}"
        self._daemons: list[_Daemon] = []
        self._made: list[Path] = []  # outside `root`: what dockerd writes that was not there

    def start(self, timeout: float = 60.0) -> None:
        self._made = [p for p in OUTSIDE if not p.exists()]
        for folder in (self.data, self.exec_root / "containerd", self.root / "containerd"):
            folder.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("DOCKER_")}
        env.update(HTTP_PROXY=NO_REGISTRY, HTTPS_PROXY=NO_REGISTRY, NO_PROXY="")
        config = self.root / "containerd.toml"
        config.write_text(
            "version = 2\n"
            f'root = "{self.root / "containerd"}"\n'
            f'state = "{self.exec_root / "containerd" / "state"}"\n'
            'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
            f'[grpc]\n  address = "{self.containerd_socket}"\n'
            f'[ttrpc]\n  address = "{self.containerd_socket}.ttrpc"\n'
        )
        daemon_json = self.root / "daemon.json"
        daemon_json.write_text(json.dumps({}))  # not /etc/docker/daemon.json: nothing inherited
        self._daemons.append(
            _Daemon(["containerd", "--config", str(config)], self.root / "containerd.log", env, 20)
        )
        self._wait(lambda: self.containerd_socket.exists(), timeout, "containerd socket")
        self._daemons.append(
            _Daemon(
                ["dockerd", f"--data-root={self.data}", f"--exec-root={self.exec_root}",
                 f"--host={self.host}", f"--pidfile={self.root / 'dockerd.pid'}",
                 f"--config-file={daemon_json}", f"--containerd={self.containerd_socket}",
                 *DOCKERD_NETWORK_FLAGS],
                self.root / "dockerd.log", env, 40,
            )
        )  # fmt: skip
        self._wait(self._pings, timeout, "dockerd")
        self.check_networking()

    def _wait(self, ready: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if any(not d.alive() for d in self._daemons):
                raise EngineError(f"{what}: a daemon exited\n{self.logs_tail()}")
            if time.monotonic() > deadline:
                raise EngineError(f"{what} not up after {timeout:.0f}s\n{self.logs_tail()}")
            time.sleep(0.2)

    def client(self, timeout: float = 600) -> Any:
        import docker

        return docker.DockerClient(base_url=self.host, timeout=timeout)

    def _pings(self) -> bool:
        if not self.socket.exists():
            return False
        try:
            client = self.client(5)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except Exception:
            return False

    def check_networking(self) -> None:
        """Only the host and none networks; no docker0; no private-range address anywhere."""
        client = self.client(30)
        try:
            names = sorted(n.name for n in client.networks.list())
        finally:
            client.close()
        if not set(names) <= {"host", "none"}:
            raise EngineError(f"the engine has networks {names}: expected host and none only")
        if Path("/sys/class/net/docker0").exists():
            raise EngineError("a docker0 interface exists")
        addresses = subprocess.run(
            ["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, check=False
        ).stdout
        private = [a for a in addresses.split() if a.startswith(PRIVATE_PREFIXES)]
        if private:
            raise EngineError(f"private-range addresses present: {private}")

    def leftovers(self) -> dict[str, list[str]]:
        """What a clean run leaves in the engine: nothing but images (and host/none)."""
        client = self.client(60)
        try:
            return {
                "containers": [c.name for c in client.containers.list(all=True)],
                "volumes": [v.name for v in client.volumes.list()],
                "networks": [
                    n.name for n in client.networks.list() if n.name not in ("host", "none")
                ],
            }
        finally:
            client.close()

    def clear(self) -> None:
        """Remove every container, volume and network of this engine (it is ours alone)."""
        client = self.client(120)
        try:
            for c in client.containers.list(all=True):
                with contextlib.suppress(Exception):
                    c.remove(force=True, v=True)
            for v in client.volumes.list():
                with contextlib.suppress(Exception):
                    v.remove(force=True)
            for n in client.networks.list():
                if n.name not in ("host", "none"):
                    with contextlib.suppress(Exception):
                        n.remove()
        finally:
            client.close()

    def stop(self) -> list[str]:
        """Stop dockerd, then containerd; what is still running or mounted afterwards."""
        if self._daemons and self._pings():
            with contextlib.suppress(Exception):
                self.clear()
        for daemon in reversed(self._daemons):
            daemon.stop()
        self._daemons.clear()
        for path in self._made:
            with contextlib.suppress(OSError):
                if path.is_dir():
                    path.rmdir()
                else:
                    path.unlink()
        problems = [f"process {pid}: {cmd}" for pid, cmd in processes_under(self.root)]
        problems += [f"left outside {self.root}: {p}" for p in self._made if p.exists()]
        for target in mounts_under(self.root):  # dockerd leaves exec-root/netns/default
            code = subprocess.run(["umount", target], check=False).returncode
            if code:
                problems.append(f"mount left: {target}")
        return problems

    def logs_tail(self, lines: int = 30) -> str:
        out = []
        for name in ("containerd.log", "dockerd.log"):
            path = self.root / name
            if path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"--- {name}\n" + "\n".join(text))
        return "\n".join(out)


def mounts_under(root: Path) -> list[str]:
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    return sorted((m for m in mounts if m.startswith(f"{root}/")), reverse=True)


def processes_under(root: Path) -> list[tuple[int, str]]:
    """Live processes whose command line names `root` (daemons, shims), this one aside."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if str(root) in cmdline and state != "Z":
            found.append((int(entry.name), cmdline.strip()))
    return found
