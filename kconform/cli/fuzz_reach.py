"""Branches a coverage-guided (or measured) fuzz run reached over time.

Each request case writes the probes it set, with when each was first set
(`guided.Guide.write`). Here they are merged into the run's union and cut at checkpoints
(every minute from the first example; every five past ten minutes, and the end). Each cut
becomes an `.exec` file (`ProbeUnion.to_exec`) and `jacococli report` over the release's
class files maps its probes to branches and lines of the chosen methods, counted as the
`--coverage` report counts them (`reports.coverage.build_model`).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconform.errors import Unavailable
from kconform.fixtures.coverage import jacoco
from kconform.fixtures.coverage.probes import ProbeUnion
from kconform.fixtures.targets import kafka_dist
from kconform.reports.coverage import build_model, parse_xml

REACH_JSON = "reach.json"
CASE_KEYS = ("case", "mode", "probes", "corpus", "derived", "fresh", "dumps", "dump_ms")


@dataclass(frozen=True)
class Point:
    """What the run had reached `seconds` after its first example."""

    seconds: float
    probes: int
    branches: tuple[int, int]  # covered, all (chosen methods)
    lines: tuple[int, int]


def read_cases(folder: Path) -> list[dict[str, Any]]:
    """The request cases' reach files, oldest first."""
    found = [json.loads(p.read_text("utf-8")) for p in sorted(folder.glob("reach-*.json"))]
    return sorted(found, key=lambda data: float(data["started"]))


def checkpoints(start: float, end: float) -> list[float]:
    """Seconds after `start` to measure at: each minute up to ten, then every five, and the end."""
    total, moments, minute = end - start, [], 1
    while minute * 60 < total:
        moments.append(minute * 60.0)
        minute += 1 if minute < 10 else 5
    return [*moments, max(total, 0.0)]


def classes_folder(version: str) -> Path:
    """The chosen classes' files of release `version`, copied out of its jars once."""
    dist = kafka_dist.resolve(version)
    jars = [dist.libs / f"{a}-{dist.version}.jar" for a in jacoco.SOURCE_ARTIFACTS]
    present = [j for j in jars if j.is_file()]
    key = hashlib.sha256(";".join(f"{j.name}:{j.stat().st_size}" for j in present).encode())
    folder = kafka_dist.cache_root() / "jacoco" / "classes" / f"fuzz-{key.hexdigest()[:16]}"
    return jacoco.release_classes(present, folder)


def measure(union: ProbeUnion, start: float, moments: list[float], version: str) -> list[Point]:
    """The union cut at each moment, mapped to branches by `jacococli report`."""
    tools = jacoco.resolve_tools(kafka_dist.cache_root())
    classes = classes_folder(version)
    points = []
    with tempfile.TemporaryDirectory(prefix="kconform-reach-") as tmp:
        for index, seconds in enumerate(moments):
            cut = union.until(start + seconds)
            exec_file, xml = Path(tmp) / f"{index}.exec", Path(tmp) / f"{index}.xml"
            exec_file.write_bytes(cut.to_exec())
            jacoco.report(tools, [exec_file], classes, xml, name=f"fuzz at {seconds:.0f}s")
            totals = build_model(parse_xml(xml), {}, sources={})["totals"]
            b_missed, b_covered = totals.get("BRANCH", [0, 0])
            l_missed, l_covered = totals.get("LINE", [0, 0])
            points.append(Point(seconds, cut.count, (b_covered, b_missed + b_covered),
                                (l_covered, l_missed + l_covered)))  # fmt: skip
    return points


def reach(folder: Path, version: str) -> dict[str, Any]:
    """The run's reach over time (written to `folder/reach.json` as well)."""
    cases = read_cases(folder)
    if not cases:
        raise Unavailable(f"no reach-*.json in {folder}: no request case ran guided")
    union = ProbeUnion.merged([ProbeUnion.from_json(c["union"]) for c in cases])
    start = float(cases[0]["started"])
    end = max(float(c["ended"]) for c in cases)
    points = measure(union, start, checkpoints(start, end), version)
    data = {
        "mode": cases[0]["mode"],
        "release": version,
        "cases": [{k: c[k] for k in CASE_KEYS} for c in cases],
        "points": [_point_json(p) for p in points],
    }
    (folder / REACH_JSON).write_text(json.dumps(data, indent=1), "utf-8")
    return data


def _point_json(p: Point) -> dict[str, Any]:
    return {"seconds": p.seconds, "probes": p.probes, "branches": list(p.branches),
            "lines": list(p.lines)}  # fmt: skip


def reach_table(data: dict[str, Any]) -> str:
    """The points as a table, then each case's corpus."""
    rows = [
        f"coverage-{data['mode']} reach on apache:{data['release']} (chosen methods, "
        "docs/coverage.md)",
        f"{'after':>8} {'probes':>7} {'branches':>12} {'lines':>12}",
    ]
    for p in data["points"]:
        (bc, bt), (lc, lt) = p["branches"], p["lines"]
        rows.append(f"{p['seconds'] / 60:>7.1f}m {p['probes']:>7} {bc:>6}/{bt:<5} {lc:>6}/{lt:<5}")
    for c in data["cases"]:
        rows.append(
            f"  {c['case']:<42} probes {c['probes']:>4}, corpus {c['corpus']:>3}, "
            f"derived {c['derived']}, fresh {c['fresh']}, {c['dump_ms']} ms/dump"
        )
    return "\n".join(rows)
