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

from kconform.cli import main
from kconform.exit_codes import EXIT_USAGE
from kconform.plugin.scheduling import (
    Group,
    Shard,
    assign,
    claim_order,
    count_done,
    parse_shard,
    share,
    try_claim,
)
from kconform.plugin.workers import (
    claims_folder,
    default_jobs,
    default_run_jobs,
    shard_results_path,
)
from kconform.reports.model import RunResults, merge_runs
from kconform.runner import worst_exit


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


def test_groups_are_claimed_phase_by_phase_longest_expected_first() -> None:
    groups = [
        Group("a", (0, False), ("a1",)),
        Group("b", (0, False), ("b1", "b2")),  # two cases of unknown length: 2 x the median
        Group("c", (0, False), ("c1",)),
        Group("kill", (0, True), ("k1",)),  # disruptive: after its subject's others, however long
        Group("d", (1, False), ("d1",)),  # the next subject
    ]
    expected = {"a1": 30.0, "c1": 1.0, "k1": 2.0, "d1": 9.0}  # median 5.5: b counts as 11 s
    assert [g.key for g in claim_order(groups, expected)] == ["a", "b", "c", "kill", "d"]
    # without an earlier run every case counts alike: the larger group first, then as collected
    assert [g.key for g in claim_order(groups, {})] == ["b", "a", "c", "kill", "d"]
    assert [g.key for g in claim_order(groups[:1] + groups[2:3], {})] == ["a", "c"]


_CLAIM_ALL = """
import json, sys
from pathlib import Path
from kconform.plugin.scheduling import try_claim
folder, keys, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
Path(out).write_text("\\n".join(k for k in keys if try_claim(Path(folder), k)), encoding="utf-8")
"""


def test_each_group_is_claimed_by_exactly_one_of_several_racing_workers(tmp_path: Path) -> None:
    # separate interpreters, as pytest-xdist's workers are (and importable however pytest was
    # started: a spawned multiprocessing child must import this test module, which `pytest`
    # run from the venv's bin cannot)
    keys = [f"suite.py::test_{i}[subject]" for i in range(300)]
    argv = [sys.executable, "-c", _CLAIM_ALL, str(tmp_path), json.dumps(keys)]
    workers = [subprocess.Popen([*argv, str(tmp_path / f"w{i}")]) for i in range(4)]
    for worker in workers:
        assert worker.wait(60) == 0
    won = [
        line
        for i in range(4)
        for line in (tmp_path / f"w{i}").read_text(encoding="utf-8").splitlines()
    ]
    assert sorted(won) == sorted(keys)
    assert try_claim(tmp_path, keys[0]) is False


def test_two_runs_with_results_in_one_folder_share_nothing_of_their_workers() -> None:
    """`certify --json out/a.json -j 3` beside `certify --json out/b.json -j 3`: one claims
    folder would let each run's workers claim the other's groups, and lose their results."""
    a, b = Path("out/a.json"), Path("out/b.json")
    assert claims_folder(a) != claims_folder(b)
    assert shard_results_path(a, 1) != shard_results_path(b, 1)
    assert shard_results_path(a, 1).parent == claims_folder(a).parent


def test_the_done_count_is_the_runs_over_every_worker(tmp_path: Path) -> None:
    assert [count_done(tmp_path) for _ in range(3)] == [1, 2, 3]


def test_claiming_workers_run_every_case_once_across_modules(pytester: pytest.Pytester) -> None:
    """Two workers share a folder; groups are claimed out of module order (the durations say
    so), and module fixtures are set up and torn down around each claimed group as pytest
    requires (a module left set up for an item of another module is an internal error)."""
    for name in ("alpha", "beta"):
        pytester.makepyfile(**{f"test_{name}": (
            "import pytest\n"
            "@pytest.fixture(scope='module')\n"
            "def module_state():\n    yield {}\n"
            + "".join(
                f"def test_{i}(module_state):\n    module_state[{i}] = 1\n" for i in range(4)
            )
        )})  # fmt: skip
    durations = {"results": [
        {"nodeid": f"test_{name}.py::test_{i}", "duration": float((i * 7 + len(name)) % 5)}
        for name in ("alpha", "beta") for i in range(4)
    ]}  # fmt: skip
    (pytester.path / "earlier.json").write_text(json.dumps(durations), encoding="utf-8")
    claims = pytester.path / "claims"
    claims.mkdir()
    # claim order: alpha2 beta0 beta2 alpha1 alpha3 beta1 alpha0 beta3. Another worker holds
    # alpha3, so after alpha1 this one goes to beta1: the next item it will run is not the next
    # one collected, and alpha's module must not be left set up.
    assert try_claim(claims, "test_alpha.py::test_3")
    common = ["-p", "kconform.plugin", "--kconform-claims", str(claims),
              "--kconform-durations", str(pytester.path / "earlier.json")]  # fmt: skip
    first = pytester.runpytest_subprocess(*common, "-v")
    second = pytester.runpytest_subprocess(*common, "-v")  # finds everything claimed
    first.assert_outcomes(passed=7)
    assert second.ret == pytest.ExitCode.OK
    second.assert_outcomes()
    ran = [line.split(" ")[0] for line in first.outlines if " PASSED" in line]
    assert ran == [
        f"test_{name}.py::test_{i}"
        for name, i in [("alpha", 2), ("beta", 0), ("beta", 2), ("alpha", 1), ("beta", 1),
                        ("alpha", 0), ("beta", 3)]
    ]  # fmt: skip


def test_workers_by_default_only_for_clients_that_wait_without_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert default_jobs("confluent-kafka") == 8
    assert default_jobs("confluent-kafka, kafka-python") == 8
    assert default_jobs("") == 8  # broker suites
    assert default_jobs("java:4.1.0") == 1  # a JVM per case bent the timing, even at -j 2
    assert default_jobs("confluent-kafka,java") == 1
    assert default_jobs("command:/opt/driver") == 1


def test_a_whole_run_on_embedded_targets_gets_workers_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    light = "confluent-kafka,kafka-python"
    assert default_run_jobs("reference,librdkafka_mock", light, whole=True) == 8
    assert default_run_jobs("reference:no_push_throttle", light, whole=True) == 8
    assert default_run_jobs("reference", light, whole=False) == 1  # --cases, -k or -x
    assert default_run_jobs("reference,apache:4.1.0", light, whole=True) == 1  # a JVM each
    assert default_run_jobs("kraft", light, whole=True) == 1
    assert default_run_jobs("external", light, whole=True) == 1  # --bootstrap-server
    assert default_run_jobs("reference", "confluent-kafka,java", whole=True) == 1


def test_the_main_job_runs_in_workers_and_a_filtered_run_in_one_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[int] = []
    monkeypatch.setattr("kconform.runner.run", lambda options: seen.append(options.jobs) or 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr("kconform.cli.run.check_bootstrap", lambda bootstrap: None)  # no Kafka
    light = ["--client", "confluent-kafka,kafka-python"]
    assert main(["run", *light]) == 0
    assert main(["run", *light, "--cases", "kip511."]) == 0
    assert main(["run", *light, "-j", "3"]) == 0
    assert main(["run", "--bootstrap-server", "127.0.0.1:9", *light]) == 0
    assert seen == [8, 1, 3, 1]


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
    assert main(argv) == EXIT_USAGE
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
    shards = sorted((tmp_path / "three/results-shards").glob("results-*.json"))
    assert [p.name for p in shards] == ["results-1.json", "results-2.json", "results-3.json"]
    assert not (tmp_path / "three/results-shards/claims").exists()
    counts = [len(RunResults.read(p).results) for p in shards]
    assert sum(counts) == len(one)  # a worker that started late may have found nothing left
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
        for line in run.stdout:  # the workers are running cases (which one ran first varies)
            if line.startswith(b"[j") and b"]" in line and run.poll() is None:
                break
        time.sleep(1.0)
        family = _children(run.pid)
        assert len(family) >= 3, family  # two workers, and at least one's target
        os.kill(run.pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in family):
            time.sleep(0.2)
        assert [p for p in family if _alive(p)] == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()


@pytest.mark.slow
def test_a_targets_volume_cases_run_in_one_worker_and_reach_the_report(tmp_path: Path) -> None:
    """The three volume cases judge one volume run. Each alone in a worker, three workers made
    the run at once into one folder (Spark: `_temporary/0 does not exist`, two `error`s), and
    the runs landed beside the workers' results, where the report did not look."""
    out = tmp_path / "three"
    other = "kip511.apiversions.valid_software_accepted"  # a second group: -j stays above 1
    args = ["run", "--target", "reference", "--brokers", "1", "--cases", f"kip977.volumes.,{other}"]
    assert main([*args, "-j", "3", "--out", str(out)]) == 0
    verdicts = _verdicts(out / "results.json")
    assert len(verdicts) == 4
    assert "error" not in verdicts.values(), verdicts
    holders = [
        p.name
        for p in sorted((out / "results-shards").glob("results-*.json"))
        if any(r.case_id.startswith("kip977.volumes.") for r in RunResults.read(p).results)
    ]
    assert len(holders) == 1, holders
    assert (out / "volumes" / "reference" / "volumes-summary.json").is_file()
    assert 'id="volumes"' in (out / "index.html").read_text()


def test_a_run_in_workers_leaves_nothing_beside_a_results_file_kept_elsewhere(
    tmp_path: Path,
) -> None:
    """`--json elsewhere/r.json`: the workers' files go in the report folder (before, an
    `r-shards/` folder appeared beside the JSON, now that a whole run has workers by default)."""
    elsewhere, report = tmp_path / "elsewhere", tmp_path / "report"
    elsewhere.mkdir()
    args = ["run", "--target", "reference", "--brokers", "1", "--cases", CASES, "-j", "2"]
    assert main([*args, "--json", str(elsewhere / "r.json"), "--out", str(report)]) == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["r.json"]
    assert len(RunResults.read(elsewhere / "r.json").results) >= 10
    assert sorted(p.name for p in (report / "r-shards").iterdir()) == [
        "results-1.json",
        "results-2.json",
    ]
