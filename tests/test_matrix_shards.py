"""Issue 44: three `kconform matrix run --shard K/3` processes, merged, give the matrix one
unsharded run gives: the same manifest, the same subjects, the same verdict per case.

Cheap subjects and cases: the in-process brokers and Python clients, one fast case each side."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kconform.cli import main
from kconform.reports.matrix_diff import diff, load_verdicts

CASES = "kip511.apiversions.all_versions_decode,kip511.client.software_identity"
SUBJECTS = ["--targets", "reference,librdkafka_mock", "--clients", "confluent-kafka,kafka-python"]


def _matrix(out: Path, costs: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "kconform.cli", "matrix", "run", *SUBJECTS, "--cases", CASES,
            "--out", str(out), "--costs", str(costs), "-j", "1", *extra]  # fmt: skip


def test_three_shards_merged_are_one_unsharded_run(tmp_path: Path) -> None:
    costs = tmp_path / "costs.json"
    shards = [subprocess.Popen(_matrix(tmp_path / f"shard{k}", costs, "--shard", f"{k}/3"),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
              for k in (1, 2, 3)]  # fmt: skip
    outputs = [proc.communicate(timeout=300)[0].decode() for proc in shards]
    assert [proc.returncode for proc in shards] == [0, 0, 0], outputs
    ran = [json.loads((tmp_path / f"shard{k}" / "matrix.json").read_text())["ran"]
           for k in (1, 2, 3)]  # fmt: skip
    every = [name for part in ran for name in part]
    assert all(ran) and len(every) == len(set(every)) == 4  # each run in one shard
    assert not costs.exists()  # a shard is a part: it records no cost the others would read

    whole = tmp_path / "whole"
    single = subprocess.run(_matrix(whole, costs), capture_output=True, text=True, check=False)
    assert single.returncode == 0, single.stdout + single.stderr

    merged = tmp_path / "merged"
    folders = [str(tmp_path / f"shard{k}") for k in (1, 2, 3)]
    assert main(["matrix", "merge", *folders, "--out", str(merged)]) == 0
    assert (merged / "matrix.json").read_text() == (whole / "matrix.json").read_text()
    assert sorted(p.name for p in merged.iterdir()) == sorted(p.name for p in whole.iterdir())
    verdicts = load_verdicts(merged)
    assert len(verdicts) == 4 and all(verdicts.values())
    assert diff(load_verdicts(whole), verdicts).empty()

    # merging again into the same folder, or parts of different selections, is refused
    assert main(["matrix", "merge", *folders, "--out", str(merged)]) == 2
    assert main(["matrix", "merge", folders[0], folders[0], "--out", str(tmp_path / "x")]) == 2
    other = json.loads((tmp_path / "shard1" / "matrix.json").read_text())
    other["cases"] = "kip511"
    (tmp_path / "shard1" / "matrix.json").write_text(json.dumps(other))
    assert main(["matrix", "merge", *folders, "--out", str(tmp_path / "y")]) == 2
    assert main(["matrix", "merge", str(tmp_path / "nosuch"), "--out", str(tmp_path / "z")]) == 2
