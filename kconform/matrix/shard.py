"""A part of the matrix per machine, and the parts joined again.

`--shard K/N` splits the run list as a CI fleet splits a suite into chunks: every run goes, the
longest first (recorded cost, else its kind's estimate; equal costs by name), to the part with
the least cost so far (ties to the lowest index). The same runs and costs give every machine the
same parts, each about 1/N of the whole.

Each result folder holds `matrix.json`: the case selection, the whole plan (every run's subject
and name), the shard, and the runs whose results it holds. `merge` joins folders of the same
plan and selection into one whose `matrix.json` and per-run folders are those of an unsharded
run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kconform.errors import UsageError
from kconform.matrix.plan import Run
from kconform.matrix.schedule import longest_first
from kconform.plugin.scheduling import Shard
from kconform.plugin.scheduling import parse_shard as parse_worker_part

MANIFEST = "matrix.json"


def parse_shard(text: str) -> Shard:
    """`K/N` with 1 <= K <= N; a usage error otherwise."""
    return parse_worker_part(text, "--shard")


def parts(runs: Sequence[Run], costs: Mapping[str, float], count: int) -> list[list[Run]]:
    """The runs split into `count` parts of about equal cost (see the module's docstring)."""
    from kconform.matrix.plan import cost

    load = [0.0] * count
    split: list[list[Run]] = [[] for _ in range(count)]
    for run in longest_first(runs, costs):
        part = min(range(count), key=lambda p: (load[p], p))
        load[part] += cost(run, costs)
        split[part].append(run)
    return split


def pick(runs: Sequence[Run], costs: Mapping[str, float], shard: Shard) -> list[Run]:
    """The runs of `shard`, in the plan's order."""
    mine = {r.name for r in parts(runs, costs, shard.count)[shard.index - 1]}
    return [r for r in runs if r.name in mine]


def manifest(
    plan: Sequence[Run], cases: str, shard: Shard | None, ran: Sequence[str]
) -> dict[str, Any]:
    """What `matrix.json` says of a result folder."""
    entries = [{"subject": r.subject, "name": r.name} for r in plan]
    return {
        "cases": cases,
        "plan": sorted(entries, key=lambda r: r["name"]),
        "shard": str(shard) if shard else None,
        "ran": sorted(ran),
    }


def write_manifest(folder: Path, body: Mapping[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(body, indent=1) + "\n"
    (folder / MANIFEST).write_text(text, encoding="utf-8")


def read_manifest(folder: Path) -> dict[str, Any]:
    """A result folder's `matrix.json`; a usage error when there is none."""
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder")
    path = folder / MANIFEST
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{folder}: not a matrix result folder (no {MANIFEST})") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: unreadable ({exc})") from None
    if not isinstance(body, dict) or not {"cases", "plan", "ran"} <= body.keys():
        raise UsageError(f"{path}: not a matrix manifest (cases, plan, ran)")
    return body


def merge(folders: Sequence[Path], out: Path) -> list[str]:
    """Join the result folders into `out`; the plan's runs none of them holds."""
    bodies = [read_manifest(folder) for folder in folders]
    first = bodies[0]
    for folder, body in zip(folders[1:], bodies[1:], strict=True):
        if body["cases"] != first["cases"]:
            raise UsageError(
                f"{folders[0]} ran cases {first['cases'] or 'all'!r}, {folder} ran "
                f"{body['cases'] or 'all'!r}: different case sets do not merge"
            )
        if body["plan"] != first["plan"]:
            raise UsageError(f"{folders[0]} and {folder} planned different runs: "
                             "shards of different matrices do not merge")  # fmt: skip
    owner: dict[str, Path] = {}
    for folder, body in zip(folders, bodies, strict=True):
        for name in body["ran"]:
            if name in owner:
                raise UsageError(f"{name} is in both {owner[name]} and {folder}")
            if not (folder / name).is_dir():
                raise UsageError(f"{folder}: {MANIFEST} lists {name}, whose folder is missing")
            owner[name] = folder
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--out {out}: not empty (merge writes a new folder)")
    out.mkdir(parents=True, exist_ok=True)
    for name, folder in sorted(owner.items()):
        shutil.copytree(folder / name, out / name)
    body = {**first, "shard": None, "ran": sorted(owner)}
    write_manifest(out, body)
    return sorted({r["name"] for r in first["plan"]} - owner.keys())
