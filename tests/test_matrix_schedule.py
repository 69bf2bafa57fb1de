"""`kconform matrix run`'s plan and schedule (issue 44): runs side by side within the cores and
memory, the longest first, a deterministic cost-balanced shard, and `matrix diff`."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.engine.results import CaseResult
from kconform.errors import UsageError
from kconform.matrix.plan import Run, heap_mb, plan_runs, read_costs, write_costs
from kconform.matrix.schedule import Finished, longest_first, run_all
from kconform.matrix.shard import parse_shard, parts, pick
from kconform.plugin.scheduling import Shard
from kconform.reports.matrix_diff import diff, load_verdicts, render_text
from kconform.reports.model import RunResults


def _run(name: str, seconds: float, memory: int = 100) -> Run:
    return Run(name, name, ("client",), (), seconds, memory)


def test_heap_options_count_as_the_jvm_reads_them() -> None:
    assert [heap_mb(o) for o in ("-Xmx512m", "-Xmx2g", "-Xmx2G", "-Xmx1048576k")] == [
        512, 2048, 2048, 1024]  # fmt: skip
    with pytest.raises(UsageError):
        heap_mb("512m")


def test_the_plan_counts_each_jvm_node_by_its_heap_and_estimates_from_the_kind() -> None:
    runs = {r.name: r for r in plan_runs(["4.4.0"], cluster="4.4.0", release_clients=True,
                                         targets=[], clients=["kafka-python"])}  # fmt: skip
    one, three = runs["apache-4.4.0"], runs["apache-4.4.0-3brokers"]
    assert three.memory_mb - one.memory_mb == 2 * 512  # two more -Xmx512m nodes
    assert runs["java-4.4.0"].estimate > one.estimate > runs["kafka-python"].estimate
    assert "--brokers" in three.flags and three.flags[three.flags.index("--brokers") + 1] == "3"
    with pytest.raises(UsageError, match="named twice"):
        plan_runs([], cluster="", release_clients=False, targets=[], clients=["a@1", "a@1"])


def test_costs_round_trip_and_a_bad_file_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "costs.json"
    assert read_costs(path) == {}
    write_costs(path, {"b": 10.4, "a": 99.6})
    assert path.read_text() == '{\n "a": 100,\n "b": 10\n}\n'
    path.write_text('{"a": "slow"}')
    with pytest.raises(UsageError, match="not a"):
        read_costs(path)


def test_shards_are_deterministic_balanced_and_cover_every_run_once() -> None:
    runs = [_run(f"s{i:02}", 10.0 + (i * 37) % 90) for i in range(40)]
    costs = {"s07": 500.0}  # a recorded cost wins over the estimate
    split = parts(runs, costs, 3)
    shuffled = runs[:]
    random.Random(7).shuffle(shuffled)
    assert [[r.name for r in p] for p in parts(shuffled, costs, 3)] == [
        [r.name for r in p] for p in split]  # fmt: skip
    names = sorted(r.name for p in split for r in p)
    assert names == sorted(r.name for r in runs)  # each once
    loads = [sum(costs.get(r.name, r.estimate) for r in p) for p in split]
    assert max(loads) - min(loads) <= 100  # within the largest estimate
    assert "s07" in [r.name for r in split[0]]  # the longest goes first, to part 1
    mine = pick(runs, costs, Shard(2, 3))
    assert [r.name for r in mine] == [r.name for r in runs if r in split[1]]  # plan order


@pytest.mark.parametrize("text", ["0/3", "4/3", "x", "1/", "/3", "-1/3"])
def test_a_bad_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError):
        parse_shard(text)
    assert main(["matrix", "run", "--clients", "kafka-python", "--shard", text]) == 2


def _sleeper(seconds: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


def test_runs_go_longest_first_within_jobs_and_memory() -> None:
    runs = [_run("short", 1, 300), _run("long", 5, 600), _run("mid", 3, 600), _run("tiny", 2, 50)]
    started: list[tuple[str, float]] = []
    ended: list[Finished] = []
    going: dict[str, int] = {}
    peak = {"jobs": 0, "mb": 0}

    def launch(run: Run) -> subprocess.Popen[bytes]:
        started.append((run.name, time.monotonic()))
        going[run.name] = run.memory_mb
        peak["jobs"] = max(peak["jobs"], len(going))
        peak["mb"] = max(peak["mb"], sum(going.values()))
        return _sleeper(run.estimate / 5)

    def done(end: Finished) -> None:
        going.pop(end.run.name)
        ended.append(end)

    run_all(runs, costs={}, jobs=2, memory_mb=700, launch=launch, done=done, cores=2.0)
    # long (600) first; mid (600) does not fit beside it, short (300) neither; tiny (50) does
    assert [n for n, _ in started][:2] == ["long", "tiny"]
    assert peak["jobs"] <= 2 and peak["mb"] <= 700
    assert sorted(e.run.name for e in ended) == ["long", "mid", "short", "tiny"]
    assert all(e.code == 0 and e.seconds > 0 for e in ended)
    assert [r.name for r in longest_first(runs, {"short": 9})] == ["short", "long", "mid", "tiny"]


def test_jvms_never_share_the_cores_that_light_clients_fill() -> None:
    """On 2 cores with `-j 6`: two JVM runs (a core each) at most together, a light client run
    (a quarter) fills what is left: at -j 4 three Java clients beside two releases on 2 cores
    turned a cadence verdict (a push 60 ms past its bound)."""
    jvm = [Run(f"java-{i}", f"java-{i}", ("client",), (), 5.0 - i, 100) for i in range(3)]
    light = [Run(f"light-{i}", f"light-{i}", ("client",), (), 1.0, 100, cores=0.25)
             for i in range(4)]  # fmt: skip
    going: dict[str, float] = {}
    peak = {"cores": 0.0, "jvms": 0}

    def launch(run: Run) -> subprocess.Popen[bytes]:
        going[run.name] = run.cores
        peak["cores"] = max(peak["cores"], sum(going.values()))
        peak["jvms"] = max(peak["jvms"], sum(1 for c in going.values() if c >= 1))
        return _sleeper(0.3)

    run_all([*jvm, *light], costs={}, jobs=6, memory_mb=10_000, launch=launch,
            done=lambda end: going.pop(end.run.name), cores=2.0)  # fmt: skip
    assert peak == {"cores": 2.0, "jvms": 2}
    planned = plan_runs(["4.4.0"], cluster="", release_clients=True, targets=[],
                        clients=["kafka-python"])  # fmt: skip
    assert [r.cores for r in planned] == [1.0, 1.0, 0.25]  # the release, its Java client, light


def test_a_run_larger_than_the_budget_still_runs_alone() -> None:
    names: list[str] = []
    run_all([_run("huge", 1, 10_000)], costs={}, jobs=4, memory_mb=100,
            launch=lambda r: _sleeper(0.1), done=lambda e: names.append(e.run.name))  # fmt: skip
    assert names == ["huge"]


def test_an_interrupted_matrix_stops_every_run_and_keeps_what_finished(tmp_path: Path) -> None:
    """SIGTERM to `kconform matrix run` (as Ctrl-C): the runs going get SIGINT and end, none
    starts after, the finished ones stay in the manifest."""
    script = tmp_path / "drive.py"
    script.write_text(f"""
import subprocess, sys, time
from pathlib import Path
from kconform.matrix import schedule
from kconform.cli import main
from kconform.reports.model import RunResults

def start(command, log):
    name = Path(log).parent.name  # equal estimates: aiokafka@0.14.0 starts first, by name
    seconds = 0.2 if name.startswith("aiokafka") else 600
    if seconds < 1:  # it ends with its results written
        RunResults("0", 0.0).write(Path(log).with_name("results.json"))
    return subprocess.Popen([sys.executable, "-c",
        "import os, pathlib, sys, time; pathlib.Path(sys.argv[1]).write_text(str(os.getpid())); "
        "time.sleep(float(sys.argv[2]))", str(Path(log).with_name("pid")), str(seconds)],
        process_group=0)
schedule.start = start
sys.exit(main(["matrix", "run", "--clients", "kafka-python,aiokafka@0.14.0,confluent-kafka",
               "--out", {str(tmp_path / "out")!r}, "--costs", {str(tmp_path / "c.json")!r},
               "-j", "2"]))
""")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    out = tmp_path / "out"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(out.glob("*/pid"))) < 2:
        time.sleep(0.2)
    time.sleep(1.5)  # aiokafka (0.2 s) has ended; the third run took its place
    pids = [int(p.read_text()) for p in out.glob("*/pid")]
    assert len(pids) == 3
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=60)[0].decode()
    assert proc.returncode == 2 and "interrupted" in output
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    manifest = json.loads((out / "matrix.json").read_text())
    assert manifest["ran"] == ["aiokafka@0.14.0"] and len(manifest["plan"]) == 3
    assert (out / "aiokafka@0.14.0" / "results.json").is_file()


def _results(folder: Path, verdicts: dict[str, str]) -> None:
    folder.mkdir(parents=True)
    results = [CaseResult(c, "t", "", "MUST", "714", "s", "client", "s", "1", v)
               for c, v in verdicts.items()]  # fmt: skip
    RunResults("0", 0.0, results=results).write(folder / "results.json")


def test_matrix_diff_says_what_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _results(tmp_path / "a" / "java-4.4.0", {"x.one": "pass", "x.two": "fail"})
    _results(tmp_path / "a" / "gone", {"x.one": "pass"})
    _results(tmp_path / "b" / "java-4.4.0", {"x.one": "non-strict", "x.three": "pass"})
    _results(tmp_path / "b" / "java-4.5.0", {"x.one": "pass"})
    change = diff(load_verdicts(tmp_path / "a"), load_verdicts(tmp_path / "b"))
    assert change.subjects_added == ["java-4.5.0"] and change.subjects_removed == ["gone"]
    assert change.changed == [("java-4.4.0", "x.one", "pass", "non-strict")]
    assert change.cases_added == [("java-4.4.0", "x.three", "pass")]
    assert change.cases_removed == [("java-4.4.0", "x.two", "fail")]
    assert "java-4.4.0 x.one: pass -> non-strict" in render_text(change)
    assert main(["matrix", "diff", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["changed"] == [{"subject": "java-4.4.0", "case": "x.one", "a": "pass",
                                "b": "non-strict"}]  # fmt: skip
    assert main(["matrix", "diff", str(tmp_path / "a"), str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out.startswith("no change")
    assert main(["matrix", "diff", str(tmp_path / "a"), str(tmp_path / "nosuch")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["matrix", "diff", str(tmp_path / "empty"), str(tmp_path / "a")]) == 2


def test_matrix_diff_reads_baseline_folders(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1] / "baselines"
    verdicts = load_verdicts(root)
    assert verdicts.get("apache-4.4.0")
    assert diff(verdicts, verdicts).empty()
    accepted = {"s": {"c": "pass|non-strict"}}
    assert diff(accepted, {"s": {"c": "pass"}}).empty()  # a run's verdict the baseline allows
    assert diff(accepted, {"s": {"c": "fail"}}).changed == [("s", "c", "pass|non-strict", "fail")]
    assert diff(accepted, {"s": {"c": "pass"}}) == diff({"s": {"c": "pass"}}, accepted)


def test_every_run_dies_with_a_killed_matrix(tmp_path: Path) -> None:
    """SIGKILL to `kconform matrix run`: the kernel ends each run it started (PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    script = tmp_path / "drive.py"
    script.write_text(f"""
import sys
from pathlib import Path
from kconform.matrix import plan
from kconform.cli import main

def command(run, folder, cases):
    return [sys.executable, "-c", "import os, pathlib, sys, time; "
            "pathlib.Path(sys.argv[1]).write_text(str(os.getpid())); time.sleep(600)",
            str(Path(folder) / "pid")]
plan.pytest_command = command
sys.exit(main(["matrix", "run", "--clients", "kafka-python,confluent-kafka",
               "--out", {str(tmp_path / "out")!r}, "--costs", {str(tmp_path / "c.json")!r}]))
""")
    proc = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(tmp_path.glob("out/*/pid"))) < 2:
        time.sleep(0.2)
    time.sleep(0.3)
    pids = [int(p.read_text()) for p in tmp_path.glob("out/*/pid")]
    assert len(pids) == 2
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [pid for pid in alive if _alive(pid)]
    assert not alive


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_matrix_page_shows_what_changed_since_another_matrix(tmp_path: Path) -> None:
    from kconform.cli.matrix import render_pages

    root = Path(__file__).resolve().parents[1] / "baselines"
    measured = json.loads((root.parent / "docs" / "matrix.json").read_text())
    column = next(c for c in measured["columns"]
                  if c["subject"] == "apache:4.4.0" and not c.get("variant"))  # fmt: skip
    case = next(c for c, v in column["verdicts"].items() if v == "pass")
    column["verdicts"][case] = "fail"
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps(measured))
    md, page = render_pages(root, tmp_path / "pages", since=earlier)
    text = md.read_text()
    assert "## What changed" in text and f"`apache-4.4.0 {case}: fail -> pass`" in text
    assert "<h2>What changed</h2>" in page.read_text()
    unchanged = render_pages(root, tmp_path / "same", since=root)[0].read_text()
    assert "Nothing: the same subjects, cases and verdicts." in unchanged


def test_a_3_node_baseline_is_recorded_after_its_releases_1_node_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--write-baselines` side by side keeps the order one run after another had: the 3-node
    baseline lists what differs from the 1-node one, so it is written after it even when its
    run ends first."""
    from kconform.matrix import record, schedule

    def start(command: list[str], log: Path) -> subprocess.Popen[bytes]:
        RunResults("0", 0.0).write(log.with_name("results.json"))
        return _sleeper(0.1 if log.parent.name.endswith("3brokers") else 1.5)

    recorded: list[str] = []
    monkeypatch.setattr(schedule, "start", start)
    monkeypatch.setattr(record, "record_run", lambda s, name, *a: recorded.append(name))
    monkeypatch.setattr(schedule, "default_jobs", lambda: 2)  # two cores: both runs at once
    argv = ["matrix", "run", "--releases", "4.4.0", "--cluster", "4.4.0", "--no-clients",
            "--write-baselines", "--baselines", str(tmp_path / "b"), "--out",
            str(tmp_path / "out"), "--costs", str(tmp_path / "c.json"), "-j", "2"]  # fmt: skip
    assert main(argv) == 0
    assert recorded == ["apache-4.4.0", "apache-4.4.0-3brokers"]
    assert sorted(json.loads((tmp_path / "c.json").read_text())) == recorded
