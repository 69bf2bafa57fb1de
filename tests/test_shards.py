"""`-j N`: the split of cases over workers, the merge of their results, and that workers die with
the run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kconform.cli import EXIT_USAGE, main
from kconform.reports.model import RunResults, merge_runs
from kconform.runner import worst_exit
from kconform.shards import Shard, assign, parse_shard, share


def test_a_shard_is_i_of_n() -> None:
    assert parse_shard("2/4") == Shard(2, 4)
    for bad in ("0/4", "5/4", "2", "a/b", "-1/2"):
        with pytest.raises(ValueError, match=r"i/N|between 1 and N"):
            parse_shard(bad)


def test_largest_groups_go_first_to_the_least_loaded_worker() -> None:
    groups = [("a", 12), ("b", 7), ("c", 7), ("d", 5), ("e", 4), ("f", 4), ("g", 3)]
    placed = assign(groups, 3)
    assert placed == {"a": 1, "b": 2, "c": 3, "d": 2, "e": 3, "f": 3, "g": 1}
    assert assign(list(reversed(groups)), 3) == placed  # the order they come in does not matter


@pytest.mark.parametrize("count", [1, 2, 3, 8, 20])
def test_the_workers_shares_cover_every_case_once_and_keep_groups_whole(count: int) -> None:
    keys = [f"suite{i % 7}.py::subject{i % 3}" for i in range(60)]
    shares = [share(keys, Shard(i, count)) for i in range(1, count + 1)]
    for position in range(len(keys)):
        assert sum(s[position] for s in shares) == 1
    for key in set(keys):
        owners = {
            i
            for i, s in enumerate(shares)
            for k, mine in zip(keys, s, strict=True)
            if k == key and mine
        }
        assert len(owners) == 1, key


def test_the_run_exit_code_is_the_worst_of_the_workers() -> None:
    assert worst_exit([0, 0]) == 0
    assert worst_exit([0, 1, 0]) == 1
    assert worst_exit([1, 2]) == 2  # interrupted beats failed
    assert worst_exit([0, 5]) == 0  # a worker with no share of the cases is no failure
    assert worst_exit([5, 5]) == 5  # nobody had anything to run
    assert worst_exit([1, 3]) == 3


def _run(started: float, interrupted: bool = False) -> RunResults:
    run = RunResults("0", started=started, finished=started + 10, interrupted=interrupted)
    run.subjects = [{"name": "reference"}]
    return run


def test_merged_runs_keep_everything_and_the_widest_time_span() -> None:
    merged = merge_runs([_run(100.0), _run(90.0, interrupted=True)])
    assert merged.started == 90.0 and merged.finished == 110.0
    assert merged.interrupted
    assert merged.subjects == [{"name": "reference"}]


@pytest.mark.parametrize(
    "argv, message",
    [(["run", "-j", "0"], "at least 1 worker"), (["run", "-j", "many"], "number of workers")],
)
def test_bad_job_counts_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == EXIT_USAGE
    assert message in capsys.readouterr().err


def test_workers_refuse_a_shared_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-j", "2", "--bootstrap-server", "127.0.0.1:9"]) == EXIT_USAGE
    assert "shared by the workers" in capsys.readouterr().err


CASES = "kip511.apiversions.invalid,kip714.push.compression,kip714.push.terminating"


def _verdicts(path: Path) -> dict[tuple[str, str], str]:
    return {r.key: r.verdict for r in RunResults.read(path).results}


@pytest.mark.slow
def test_a_run_in_workers_gives_the_verdicts_of_a_run_in_one_process(tmp_path: Path) -> None:
    args = ["run", "--target", "reference", "--brokers", "1", "--cases", CASES]
    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    assert main([*args, "-j", "3", "--out", str(tmp_path / "three")]) == 0
    one, three = (
        _verdicts(tmp_path / "one/results.json"),
        _verdicts(tmp_path / "three/results.json"),
    )
    assert len(one) >= 10
    assert three == one
    shards = sorted((tmp_path / "three/shards").glob("results-*.json"))
    assert [p.name for p in shards] == ["results-1.json", "results-2.json", "results-3.json"]
    counts = [len(RunResults.read(p).results) for p in shards]
    assert sum(counts) == len(one) and min(counts) > 0
    assert json.loads((tmp_path / "three/results.json").read_text())["interrupted"] is False


def _children(pid: int) -> set[int]:
    """Every live descendant of `pid`."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
def test_workers_and_their_targets_die_with_a_killed_run(tmp_path: Path) -> None:
    run = subprocess.Popen(
        [sys.executable, "-m", "kconform.cli", "run", "--target", "reference", "--brokers", "1",
         "--cases", "kip714.push.,kip714.subscriptions.", "-j", "2",
         "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        assert run.stdout is not None
        for line in run.stdout:  # both workers are running cases
            if b"[j1 " in line and b"]" in line and run.poll() is None:
                break
        time.sleep(1.0)
        family = _children(run.pid)
        assert len(family) >= 4, family  # two workers, each with at least its mock
        os.kill(run.pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in family):
            time.sleep(0.2)
        assert [p for p in family if _alive(p)] == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()
