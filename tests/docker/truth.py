"""Same truth through both doors: what apache:<v> gives, as the yardstick for kraft:<v>.

`kraft:<v>` runs release <v> in containers, `apache:<v>` runs it as local processes; the verdicts
must not depend on the door. The apache expectations (`baselines/apache/<v>.json`, with
a section per bigger cluster size, held against apache:<v> by `make test`) say what apache gives,
case by case and per cluster size.
Here they are rewritten for the kraft subject (so a kraft run fails on any difference) and
compared with a kraft run's results (so a test shows the equality, not only its absence of
failures). Standard library only: `provision.py` runs it outside the venv's pytest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kconform.engine.model import BAD_VERDICTS
from kconform.reports.model import layered_baselines

REPO = Path(__file__).resolve().parents[2]
BASELINE_DIRS = (REPO / "baselines",)


def apache_baselines(dirs: Iterable[Path] = BASELINE_DIRS) -> list[tuple[Path, dict[str, Any]]]:
    """Every baseline whose subject is an `apache:<version>`, with its document."""
    found = []
    for folder in dirs:
        for path in sorted(folder.glob("*/*.json")):
            doc = json.loads(path.read_text())
            if isinstance(doc, dict) and str(doc.get("subject", "")).startswith("apache:"):
                found.append((path, doc))
    return found


def as_kraft(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The same baseline for `kraft:<version>` (verdicts, whys and cluster size unchanged)."""
    version = str(doc["subject"]).split(":", 1)[1]
    return {**doc, "subject": f"kraft:{version}"}


def write_kraft_baselines(out: Path, dirs: Iterable[Path] = BASELINE_DIRS) -> list[Path]:
    """`out/kraft/<version>.json` for every apache baseline, the whys they cite beside them
    (`out/whys.json`); the paths, for `--baseline`."""
    (out / "kraft").mkdir(parents=True, exist_ok=True)
    written = []
    for path, doc in apache_baselines(dirs):
        target = out / "kraft" / path.name
        target.write_text(json.dumps(as_kraft(doc), indent=1, sort_keys=False) + "\n")
        whys = path.parent.parent / "whys.json"
        if whys.is_file():
            (out / "whys.json").write_text(whys.read_text(encoding="utf-8"), encoding="utf-8")
        written.append(target)
    return written


def expected_verdicts(
    version: str, brokers: int, dirs: Iterable[Path] = BASELINE_DIRS
) -> dict[str, str]:
    """apache:<version>'s verdicts on an N-broker cluster, case by case: every case the measured
    matrix ran on it (docs/matrix.json), as its expectations (the general ones, then the
    size-specific ones, as the pytest plugin layers them) say."""
    subject = f"apache:{version}"
    paths = [p for p, d in apache_baselines(dirs) if d["subject"] == subject]
    if not paths:
        return {}
    expected = layered_baselines(paths, brokers)[subject][0]
    measured = json.loads((REPO / "docs" / "matrix.json").read_text())["columns"]
    cases = {c for col in measured if col["subject"] == subject for c in col["verdicts"]}
    return {case: expected[case] for case in sorted(cases | set(expected))}


def kraft_runs(results: Mapping[str, Any]) -> dict[tuple[str, int], dict[str, str]]:
    """(version, brokers) -> {case id: verdict} for every kraft:<version> subject of a run."""
    sizes = {s["name"]: int(s.get("brokers") or 1) for s in results.get("subjects", [])}
    runs: dict[tuple[str, int], dict[str, str]] = {}
    for r in results.get("results", []):
        subject = str(r.get("subject", ""))
        if subject.startswith("kraft:"):
            key = (subject.split(":", 1)[1], sizes.get(subject, 1))
            runs.setdefault(key, {})[r["case_id"]] = r["verdict"]
    return runs


def family(case: str) -> str:
    return case.split(".", 1)[0]  # kip511, kip714, kip977, fuzz, soak ...


def differences(expected: Mapping[str, str], actual: Mapping[str, str]) -> list[str]:
    """Every case whose kraft verdict is not apache's; cases apache has no baseline for (the
    fuzz suite's) must not be failures. A family of cases the run did not include at all (the
    soak's, when only the broker suites ran) is not compared."""
    ran = {family(case) for case in actual}
    out = []
    for case, verdict in sorted(expected.items()):
        got = actual.get(case)
        if got != verdict and family(case) in ran:
            out.append(f"{case}: kraft {got or 'did not run'}, apache {verdict}")
    for case, got in sorted(actual.items()):
        if case not in expected and got in BAD_VERDICTS:
            out.append(f"{case}: kraft {got} (no apache baseline: must not fail)")
    return out


def case_ids(nodeids: Iterable[str]) -> set[str]:
    """The case ids of pytest node ids (`suites/x.py::test_f[...]`), read from the `@case(...)`
    right above each function: what `make test` leaves ungated (APACHE_UNGATED's --deselect)."""
    found = set()
    for nodeid in nodeids:
        path, _, name = nodeid.partition("::")
        name = name.split("[", 1)[0]
        text = (REPO / path).read_text()
        function = re.search(rf"^(?:async )?def {re.escape(name)}\(", text, re.M)
        cases = [m for m in re.finditer(r'@case\(\s*"([^"]+)"', text)
                 if function is not None and m.start() < function.start()]  # fmt: skip
        if not cases:
            raise ValueError(f"{nodeid}: no @case(...) found above {name}")
        found.add(cases[-1].group(1))
    return found
