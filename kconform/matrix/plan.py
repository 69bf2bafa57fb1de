"""What a matrix run runs: one pytest process per subject, each with the suites and flags it
gets, the memory it holds and, until a run of it has been timed, a cost estimated from its kind.

The costs of finished runs are kept in a small JSON file (`{run name: seconds}`) so that the next
run starts the longest first and shards split by what runs really took.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kconform.errors import UsageError
from kconform.outputs import atomic_write

SUITES = ("broker", "volumes", "fuzz", "client")
HARNESS_MB = 250  # the pytest process itself: codec, engine, the in-process reference broker
CLUSTER = 3  # nodes of the --cluster run
LIGHT_CORES = 0.25  # a light client's run: its cases wait on the client's intervals


@dataclass(frozen=True)
class Run:
    """One pytest process of the matrix."""

    subject: str  # as --target/--client name it: apache:4.4.0, java:4.4.0, kafkajs@2.2.4
    name: str  # its result folder and baseline file: apache-4.4.0, apache-4.4.0-3brokers
    suites: tuple[str, ...]
    flags: tuple[str, ...]
    estimate: float  # seconds, from its kind's declaration
    memory_mb: int  # what it holds at once: the harness, its JVMs' heaps, its clients
    # a run whose baseline this one's is written against (the 3-node one lists what differs
    # from its release's 1-node one): recorded after it, whichever ends first
    after: str = ""
    # the cores it keeps busy: a JVM (a broker node, the Java client of each case) counts one,
    # a light client (a waiting case uses almost no CPU) a quarter; the runs going together
    # stay within the machine's cores, so that no client's timing runs on a starved CPU
    cores: float = 1.0


def heap_mb(option: str) -> int:
    """MB a `-Xmx<n>[kmg]` option allows (the JVM's own spelling)."""
    match = re.fullmatch(r"-Xmx([0-9]+)([kKmMgG]?)", option.strip())
    if not match:
        raise UsageError(f"{option!r} is not a JVM heap option (-Xmx512m)")
    size, unit = int(match[1]), match[2].lower()
    return {"k": size // 1024, "m": size, "g": size * 1024, "": size >> 20}[unit]


def _broker_run(
    target: str, name: str, nodes: int, suites: tuple[str, ...], after: str = ""
) -> Run:
    from kconform.fixtures.targets.kind import split_entry
    from kconform.fixtures.targets.registry import target_kind

    kind = target_kind(split_entry(target)[0])
    node = heap_mb(kind.jvm_heap()) if kind.jvm_heap else kind.node_memory_mb
    cores = 1.0 if kind.jvm_heap else 0.5  # a node's JVM; a registry broker's native binary
    return Run(target, name, suites, ("--target", target, "--brokers", str(nodes)),
               kind.matrix_seconds, HARNESS_MB + nodes * node, after, cores)  # fmt: skip


def _client_run(client: str) -> Run:
    from kconform.fixtures.clients.registry import client_kinds
    from kconform.fixtures.targets.registry import client_cases_target

    kind_name = re.split(r"[:@]", client, maxsplit=1)[0]
    kind = next((k for k in client_kinds() if k.name == kind_name), None)
    seconds, memory = (kind.matrix_seconds, kind.memory_mb) if kind else (60.0, 150)
    cores = LIGHT_CORES if kind and kind.light else 1.0  # a `command:` driver is not trusted light
    flags = ("--target", client_cases_target(), "--client", client)
    return Run(client, client.replace(":", "-"), ("client",), flags, seconds, HARNESS_MB + memory,
               cores=cores)  # fmt: skip


def plan_runs(
    releases: Sequence[str],
    *,
    cluster: str,
    release_clients: bool,
    targets: Sequence[str],
    clients: Sequence[str],
) -> list[Run]:
    """Every run, in the order the command names them: each release's broker run (its Java
    client's and its 3-node one after it), the other broker targets, the client drivers."""
    from kconform.fixtures.targets.kinds.apache import KIND as APACHE

    runs: list[Run] = []
    for release in releases:
        target = f"{APACHE.name}:{release}"
        name = target.replace(":", "-")
        runs.append(_broker_run(target, name, 1, ("broker", "volumes", "fuzz")))
        if release_clients:
            runs.append(_client_run(f"java:{release}"))
        if release == cluster:
            suites = ("broker", "volumes")
            runs.append(_broker_run(target, f"{name}-3brokers", CLUSTER, suites, after=name))
    runs += [_broker_run(t, t.replace(":", "-"), 1, ("broker", "volumes", "fuzz")) for t in targets]
    runs += [_client_run(c) for c in clients]
    names = [r.name for r in runs]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise UsageError(f"named twice: {', '.join(doubled)}")
    return runs


def pytest_command(run: Run, folder: Path, cases: str) -> list[str]:
    """The pytest process of `run`, writing into `folder`."""
    from kconform.runner import SUITES_DIR

    return [sys.executable, "-m", "pytest", *(str(SUITES_DIR / s) for s in run.suites),
            "-c", os.devnull, "--rootdir", str(SUITES_DIR), "--import-mode=importlib",
            "-p", "no:cacheprovider", "-q", "--assert=plain",
            "--kconform-results", str(folder / "results.json"),
            "--kconform-volumes", str(folder / "volumes"), *run.flags,
            *(["--cases", cases] if cases else [])]  # fmt: skip


def read_costs(path: Path) -> dict[str, float]:
    """The recorded costs (none when the file does not exist yet)."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"costs file {path}: unreadable ({exc})") from None
    if not isinstance(data, dict) or not all(
        isinstance(v, int | float) and v >= 0 for v in data.values()
    ):
        raise UsageError(f"costs file {path}: not a {{run name: seconds}} object")
    return {str(k): float(v) for k, v in data.items()}


def write_costs(path: Path, costs: Mapping[str, float]) -> None:
    """Replace `path` with `costs`, sorted, whole seconds (a file diffs well in review)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({k: round(costs[k]) for k in sorted(costs)}, indent=1) + "\n"

    def dump(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    atomic_write(path, dump)


def cost(run: Run, costs: Mapping[str, float]) -> float:
    """Its last recorded cost, else its kind's estimate."""
    return costs.get(run.name, run.estimate)
