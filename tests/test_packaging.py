"""The wheel a user installs carries the data files kconform reads at run time.

The Java driver's source, the sink plugin's source, the report schemas, the baselines and the
regression corpus are not Python modules; a packaging slip ships a kconform whose `java` driver or
`--baseline` cannot work, and only a user outside this checkout would see it.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# source folder -> where its files land inside the wheel
DATA = {
    "fixtures/clients/java-driver": "kconform/fixtures/clients/java-driver",
    "fixtures/clients/go-driver": "kconform/fixtures/clients/go-driver",
    "fixtures/plugin": "kconform/fixtures/plugin",
    "reports/schema": "kconform/reports/schema",
    "baselines": "kconform/baselines",
    "suites/fuzz/regressions": "kconform/suites/fuzz/regressions",
}


def _tracked(folder: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if not line.endswith(".py")]


def test_the_wheel_carries_every_data_file_and_builds_without_warnings(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    log = build.stdout + build.stderr
    # setuptools' warning for a data folder it may stop shipping in a later release
    assert "is absent from the `packages` configuration" not in log
    (wheel,) = tmp_path.glob("kconform-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {dest + path[len(src) :] for src, dest in DATA.items() for path in _tracked(src)}
    assert len(expected) >= 20, "the data folders moved: update DATA"
    assert sorted(expected - names) == []
