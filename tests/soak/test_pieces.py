"""The soak's smaller pieces: schedule, sink reading, samples, tables, the page, the diff, the
command's flags. No target, no Spark (tests/soak/test_pipeline.py has the Spark job)."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import pytest
from fake_sink import FakeSink

from kconform.cli import main
from kconform.cli.soak import add_arguments, options_from
from kconform.soak import report, tables
from kconform.soak.delivery import push_stamp
from kconform.soak.latency import LATENCY_BUCKETS_MS, histogram_percentile, latency_histogram
from kconform.soak.payload import PayloadBuilder, make_profile
from kconform.soak.samples import SampleWriter, read_samples
from kconform.soak.schedule import parse_cadence, parse_duration, plan
from kconform.soak.sink import HttpSink


def payload(stamp_s: float) -> bytes:
    builder = PayloadBuilder(make_profile(1, seed=1, tag="t"), [1], random.Random(1))
    builder.configure(["*"], True, int(stamp_s * 1e9))
    return builder.build(int(stamp_s * 1e9))


# --- schedule --------------------------------------------------------------------------------


def test_durations_and_cadences() -> None:
    assert parse_duration("8h") == 28_800 and parse_duration("20m") == 1200
    assert parse_duration("60s") == 60 and parse_duration("90") == 90
    assert parse_cadence("once") == "once" and parse_cadence("2m") == 120.0
    with pytest.raises(ValueError):
        parse_duration("soon")


def test_once_faults_are_spread_and_periodic_ones_stop_before_the_end() -> None:
    once = dict.fromkeys(("subscription", "client_churn", "restart", "rolling_restart"), "once")
    steps = plan(100.0, once, nodes=[1, 2, 3], can_restart=True)
    assert [(s.at, s.kind) for s in steps] == [
        (15.0, "subscription"), (30.0, "client_churn"), (45.0, "restart"),
        (60.0, "rolling_restart"),
    ]  # fmt: skip
    periodic = plan(1200.0, {"subscription": 120.0}, nodes=[1], can_restart=False)
    assert [s.detail for s in periodic][:4] == ["create", "alter", "delete", "create"]
    assert max(s.at for s in periodic) <= 0.85 * 1200
    assert not plan(100.0, once, nodes=[1], can_restart=False)[2:]  # no restarts, no rolling


def test_with_periodic_subscription_churn_other_faults_keep_half_a_period_away() -> None:
    cadences: dict[str, float | str] = {"subscription": 120.0}
    cadences.update(dict.fromkeys(("client_churn", "restart", "rolling_restart"), "once"))
    steps = plan(1200.0, cadences, nodes=[1, 2, 3], can_restart=True)
    changes = [s.at for s in steps if s.kind == "subscription"]
    others = {s.kind: s.at for s in steps if s.kind != "subscription"}
    # once at 30 %, 45 % and 60 %: 360 s and 720 s are subscription changes, so they move on
    assert others == {"client_churn": 420.0, "restart": 540.0, "rolling_restart": 780.0}
    assert all(abs(at - c) >= 60 for at in others.values() for c in changes)


# --- sink reading ---------------------------------------------------------------------------


def test_http_sink_reads_from_where_the_run_started_and_follows_a_restart() -> None:
    sink = FakeSink("1")
    try:
        sink.push("before", payload(1.0))
        reader = HttpSink({1: ("127.0.0.1", sink.port)})
        reader.start()
        sink.push("a", payload(2.0))
        batch = reader.read()
        assert [(r[0], r[1]) for r in batch.records] == [("a", 2_000_000_000)]
        assert batch.polls[0].complete and batch.polls[0].incarnation == 0
        sink.restart()  # a new JVM: counting starts again at 1
        sink.push("b", payload(3.0))
        batch = reader.read()
        assert [r[0] for r in batch.records] == ["b"] and batch.polls[0].incarnation == 1
        sink.records.append({**sink.records[-1], "seq": 9})  # 2..8 evicted before we read
        sink.next_seq = 10
        batch = reader.read()
        assert not batch.polls[0].complete and batch.dropped == 7
    finally:
        sink.close()


def test_push_stamp_reads_plain_and_compressed_payloads() -> None:
    from kconform.codecs.compression import compress

    data = payload(5.0)
    assert push_stamp(data) == 5_000_000_000
    assert push_stamp(compress(data, 4)) == 5_000_000_000  # what Apache 3.7 hands the plugin
    assert push_stamp(b"not otlp at all \xff") == 0


# --- samples and tables ---------------------------------------------------------------------


def row(offset: float, **values: object) -> dict[str, object]:
    base: dict[str, object] = {
        "bucket_start": 1000 + offset, "bucket_end": 1010 + offset, "offset_s": offset,
        "clients_live": 10, "pushes": 20, "pushes_accepted": 19, "rejected_117": 1,
        "latency_hist": latency_histogram([1.0] * 19 + [50.0]), "latency_max_ms": 50.0,
        "memory_bytes": 100 << 20, "faults": "",
    }  # fmt: skip
    base.update(values)
    return base


def test_samples_round_trip_through_parquet(tmp_path: Path) -> None:
    writer = SampleWriter(tmp_path, run_id="r", shard=0)
    writer.write(row(0.0))
    writer.write(row(10.0, faults="restart of node 1"))
    back = read_samples(tmp_path)
    assert [r["offset_s"] for r in back] == [0.0, 10.0] and back[1]["faults"]
    assert back[0]["run_id"] == "r" and back[0]["latency_hist"] == row(0)["latency_hist"]


def test_tables_merge_shards_per_interval() -> None:
    a = [row(0.0), row(10.0, memory_bytes=120 << 20)]
    b = [{**r, "shard": 1, "memory_bytes": 90 << 20} for r in a]
    line = tables.timeline(a + b)
    assert [r["pushes"] for r in line] == [40, 40]  # counts add up
    assert line[1]["memory_bytes"] == 120 << 20  # the broker's reading: the largest, not a sum
    assert line[0]["latency_p99_ms"] >= 50.0 and line[0]["latency_p50_ms"] <= 1.0
    errors = {e["code"]: e for e in tables.errors(a + b)}
    assert errors["UNKNOWN_SUBSCRIPTION_ID (117)"]["count"] == 4
    assert tables.totals(a)["peak_memory_mib"] == 120.0


def test_histogram_percentiles_are_upper_bounds() -> None:
    values = [0.3, 0.9, 2.0, 2.0, 7.5, 100.0]
    hist = latency_histogram(values)
    assert sum(hist) == len(values)
    assert histogram_percentile(hist, 50) >= 2.0
    assert histogram_percentile(hist, 100) >= 100.0 and histogram_percentile(hist, 100) < 150
    assert len(hist) == len(LATENCY_BUCKETS_MS) + 1


# --- the page and the diff ------------------------------------------------------------------


def summary(verdicts: dict[str, str], values: dict[str, float]) -> dict[str, object]:
    return {
        "run_id": "r1", "target": {"name": "reference"}, "clients": 10, "measured_s": 60.0,
        "duration_s": 60, "push_interval_ms": 5000, "shard": [0, 1],
        "slos": [{"id": k, "title": k, "level": "MUST", "verdict": v, "value": values.get(k),
                  "unit": "", "expectations": [{"what": "w <x>", "expected": 0, "observed": 1,
                                                "ok": v == "pass"}]}
                 for k, v in verdicts.items()],
        "faults": [{"kind": "restart", "start_s": 20.0, "end_s": 22.0, "detail": "node 1"}],
        "totals": {"pushes": 100, "latency_p99_ms": 4.0},
    }  # fmt: skip


def test_compare_lists_changed_verdicts_and_moved_figures() -> None:
    before = summary({"soak.a": "pass", "soak.b": "pass"}, {"soak.a": 0.0, "soak.b": 3.0})
    now = summary({"soak.a": "pass", "soak.b": "fail"}, {"soak.a": 0.0, "soak.b": 9.0})
    now["totals"] = {"pushes": 150, "latency_p99_ms": 5.0}
    diff = report.compare(before, now)
    assert diff["changed_verdicts"] == 1
    changed = {s["id"]: s for s in diff["slos"]}
    assert changed["soak.b"]["delta"] == 6.0 and changed["soak.b"]["previous_verdict"] == "pass"
    assert {t["what"]: t["delta"] for t in diff["totals"]} == {"pushes": 50, "p99 latency ms": 1}


def test_the_page_is_self_contained_with_faults_on_every_plot() -> None:
    s = summary({"soak.a": "fail"}, {"soak.a": 2.0})
    line = tables.timeline([row(0.0), row(10.0), row(20.0, faults="restart of node 1")])
    diff = report.compare(s, s)
    page = report.render(s, line, {"errors": tables.errors([row(0.0)]), "engine": "python"}, diff)
    assert page.count("<svg") == 5 and page.count('class="fault"') == 5
    assert "w &lt;x&gt;" in page  # escaped
    assert "Compared with run r1" in page
    without_svg_namespace = page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "http://" not in without_svg_namespace and "https://" not in without_svg_namespace


# --- the command's flags ----------------------------------------------------------------------


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_flags_become_options() -> None:
    options = options_from(parsed("--duration", "20m", "--clients", "2000", "--shard", "1/3",
                                  "--subscription-churn", "2m", "--restart", "none"))  # fmt: skip
    assert options.duration == 1200 and options.clients == 2000 and options.shard == (1, 3)
    assert options.push_interval_ms == 30_000 and not options.leader
    assert options.cadences["subscription"] == 120.0 and options.cadences["restart"] == "none"
    short = options_from(parsed("--duration", "60s"))
    assert short.push_interval_ms == 5000 and short.sample_interval() == 5.0


@pytest.mark.parametrize(
    "argv",
    [["--duration", "soon"], ["--shard", "3/3"], ["--clients", "0"],
     ["--push-interval-ms", "50"], ["--target", "nonsense"], ["--churn-fraction", "0.9"],
     ["--baseline", "/nonexistent.json"], ["--real-clients", "java"]],
)  # fmt: skip
def test_bad_flags_are_one_line_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["soak", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kconform: error:") and "Traceback" not in err


def test_report_rerenders_a_finished_run(tmp_path: Path) -> None:
    s = summary({"soak.a": "pass"}, {})
    (tmp_path / "soak-summary.json").write_text(json.dumps(s))
    (tmp_path / "soak-tables.json").write_text(json.dumps(tables.tables([row(0.0)])))
    assert main(["soak", "--report", str(tmp_path)]) == 0
    assert "<svg" in (tmp_path / "soak.html").read_text()
