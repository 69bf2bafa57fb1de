"""After the run: verdicts, and every file a soak leaves in its output folder.

- `results.json`, `junit.xml`, `index.html` and `cases/`: the same reports as `kconform run`,
  the SLOs being the cases (`soak.*`); `index.html` gets a section linking the soak page;
- `soak.html`: the soak page (`reports/soak.py`), `soak-summary.json`: what it is rendered from (and
  what `--compare` reads of a previous run), `soak-tables.json`: the tables (Spark's job
  `pipelines/soak.py`, or the Python fallback when Spark is off or fails);
- `run.json` (options, schedule, faults, notes) and `samples/` (written during the run).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kconform import __version__
from kconform.engine.model import Verdict
from kconform.reports import soak as report
from kconform.reports.html import write_html
from kconform.reports.junit import write_junit
from kconform.reports.model import RunResults
from kconform.soak import tables
from kconform.soak.judge import SLOS, Judgement, SoakFacts, case_results, judge
from kconform.soak.ledger import Ledger
from kconform.soak.options import SoakRun, write_run_json
from kconform.soak.samples import write_json
from kconform.soak.tables import merge_histograms

SUMMARY_FILE = "soak-summary.json"


def judge_run(run: SoakRun, rows: list[dict[str, Any]]) -> list[Judgement]:
    """Every SLO's verdict for what `run` measured (all `skipped` if the target never ran)."""
    o = run.options
    if run.ledger is None:
        why = run.unavailable or run.crash or "the target did not start"
        return [Judgement(s, Verdict.SKIPPED, message=f"target unavailable: {why}") for s in SLOS]
    memory, memory_source = _memory_series(rows, run.memory_source)
    judged_at = run.judged_at or time.time()
    running = [r for r in rows if r["bucket_start"] < judged_at - 1e-6]  # not the final stop
    cached = [int(r["cached_instances"]) for r in rows if r.get("cached_instances") is not None]
    restarts = [n for n in run.notes if "cannot restart" in n]
    facts = SoakFacts(
        ledger=run.ledger,
        delivery=run.matcher.settle(time.time(), final=True) if run.matcher else None,
        capabilities=run.capabilities,
        started=run.ledger.start,
        judged_at=judged_at,
        memory=memory,
        memory_source=memory_source,
        cached_max=max(cached) if cached else None,
        latency_hist=merge_histograms(r.get("latency_hist") or [] for r in running),
        restarts_skipped=restarts[0] if restarts else "",
        real_clients=run.real_clients,
    )
    return judge(facts, o.thresholds)


def _memory_series(
    rows: list[dict[str, Any]], resident: str
) -> tuple[list[tuple[float, float]], str]:
    """What the memory SLO follows: a JVM broker's heap after collection where the sink plugin
    shows the heap (the resident memory of a JVM mostly follows the heap it has committed, which
    grows towards -Xmx without any leak), else resident memory."""
    floors = [
        (r["bucket_end"], float(r["heap_floor_bytes"]))
        for r in rows
        if r.get("heap_floor_bytes") is not None
    ]
    if len(floors) >= 2:
        return floors, "JVM heap in use after collection (lowest of 5 s readings per interval)"
    series = [
        (r["bucket_end"], float(r["memory_bytes"]))
        for r in rows
        if r.get("memory_bytes") is not None
    ]
    return series, resident


def summary_of(run: SoakRun, judgements: list[Judgement], table: dict[str, Any]) -> dict[str, Any]:
    """`soak-summary.json`: the run, its SLOs and faults, in plain data."""
    o, ledger = run.options, run.ledger
    start = ledger.start if ledger else run.started
    faults = []
    for fault in ledger.faults if ledger else []:
        faults.append(
            {
                "kind": fault.kind,
                "start_s": fault.start - start,
                "end_s": fault.end - start,
                "detail": fault.detail,
                "recovery": _recovery(ledger, fault),
            }
        )
    return {
        "run_id": run.run_id,
        "target": run.target_info or {"name": o.target},
        "started": run.started,
        "finished": run.finished,
        "measured_s": (run.judged_at or run.finished) - start,
        "duration_s": o.duration,
        "clients": o.clients,
        "workers": o.workers,
        "shard": list(o.shard),
        "push_interval_ms": o.push_interval_ms,
        "interrupted": run.interrupted,
        "crash": run.crash,
        "notes": run.notes,
        "thresholds": o.thresholds.__dict__,
        "slos": [
            {
                "id": j.slo.id,
                "title": j.slo.title,
                "level": str(j.slo.level),
                "verdict": str(j.verdict),
                "value": j.value,
                "unit": j.slo.unit,
                "message": j.message,
                "expectations": [e.__dict__ for e in j.expectations],
            }
            for j in judgements
        ],
        "faults": faults,
        "totals": table.get("totals", {}),
        "delivery": run.matcher.counts.__dict__ if run.matcher else None,
        "instances_created": len(ledger.instances) if ledger else 0,
        "tables_engine": table.get("engine"),
        "real_clients": run.real_clients,
    }


def _recovery(ledger: Ledger | None, fault: Any) -> str:
    if ledger is None:
        return ""
    for storm in ledger.storms:
        if storm.fault is fault:
            worst = max(storm.recovered.values(), default=0.0)
            return (
                f"{len(storm.affected)} clients answered 117, {len(storm.recovered)} pushing "
                f"again, slowest after {worst:.1f} s; {len(storm.disturbed)} reconnected meanwhile"
            )
    for watch in ledger.restart_watches:
        if watch.fault is fault:
            worst = max(watch.recovered.values(), default=0.0)
            return (
                f"{len(watch.recovered)} clients pushing again, slowest {worst:.1f} s after "
                f"the broker was back; {len(watch.waiting)} not yet"
            )
    return ""


def soak_tables(
    out: Path, rows: list[dict[str, Any]], *, spark: bool, master: str | None, notes: list[str]
) -> dict[str, Any]:
    """The tables by the Spark job, or by `tables.py` when Spark is off or fails."""
    if spark and rows:
        try:
            from kconform.fixtures.spark import local_spark, stop_session
            from kconform.pipelines.soak import soak_tables as spark_tables
            from kconform.pipelines.soak import write_tables

            session = local_spark(master, app="kconform-soak")
            try:
                result = spark_tables(session, [out])
                write_tables(session, result, out)
                return result
            finally:
                trouble = stop_session(session)
                if trouble:
                    notes.append(trouble)
        except Exception as exc:  # Spark (or Java) missing or failing: the report still comes
            notes.append(f"Spark job failed ({type(exc).__name__}: {exc}); tables by Python")
    result = tables.tables(rows)
    write_json(out / "soak-tables.json", result)
    return result


def write_outputs(
    run: SoakRun,
    *,
    spark: bool = True,
    master: str | None = "local[2]",
    compare_dir: Path | None = None,
    baselines: dict[str, tuple[Mapping[str, str], Mapping[str, str]]] | None = None,
) -> RunResults:
    """Judge `run` and write every report into its output folder; returns the results."""
    o = run.options
    out = o.out
    write_run_json(run)
    rows = list(run.writer.rows) if run.writer else []
    judgements = judge_run(run, rows)
    subject = run.target_info.get("name") or o.target
    results = RunResults(
        kconform_version=__version__,
        started=run.started,
        finished=run.finished or time.time(),
        interrupted=run.interrupted,
    )
    info = dict(run.target_info or {"name": subject})
    info["soak"] = {
        "run_id": run.run_id,
        "clients": o.clients,
        "duration_s": o.duration,
        "push_interval_ms": o.push_interval_ms,
    }
    results.subjects.append(info)
    results.results = case_results(
        judgements,
        subject=subject,
        implementation=str(info.get("implementation", "")),
        version=str(info.get("version", "")),
        started=run.started,
    )
    expected, why = (baselines or {}).get(subject, ({}, {}))
    for result in results.results:
        result.baseline = expected.get(result.case_id)
        result.baseline_why = why.get(result.case_id)
    if run.crash:
        for result in results.results:
            result.message = "; ".join(filter(None, [result.message, f"run crashed: {run.crash}"]))
    results.write(out / "results.json")
    table = soak_tables(out, rows, spark=spark, master=master, notes=run.notes)
    summary = summary_of(run, judgements, table)
    summary["outcome"] = report.outcome(results)  # the page's banner says what the exit code does
    previous_results, diff = None, None
    if compare_dir is not None:
        previous_results, diff = _previous(compare_dir, summary, run.notes)
        summary["compared"] = diff is not None
    write_json(out / SUMMARY_FILE, summary)
    if diff is not None:
        write_json(out / "soak-compare.json", diff)
    (out / "soak.html").write_text(
        report.render(summary, table.get("timeline", []), table, diff), encoding="utf-8"
    )
    write_junit(results, out / "junit.xml")
    write_html(
        results, out, previous=previous_results, extra_sections=[report.index_section(summary)]
    )
    return results


def _previous(
    folder: Path, summary: dict[str, Any], notes: list[str]
) -> tuple[RunResults | None, dict[str, Any] | None]:
    try:
        previous = json.loads((folder / SUMMARY_FILE).read_text(encoding="utf-8"))
        previous_results = RunResults.read(folder / "results.json")
    except (OSError, ValueError) as exc:
        notes.append(f"--compare {folder}: not a soak output folder ({exc})")
        print(f"kconform: --compare {folder}: not a soak output folder ({exc})", file=sys.stderr)
        return None, None
    return previous_results, report.compare(previous, summary)


def rerender(folder: Path, compare_dir: Path | None = None) -> Path:
    """Write `soak.html` again from a finished run's summary and tables."""
    summary = json.loads((folder / SUMMARY_FILE).read_text(encoding="utf-8"))
    table = json.loads((folder / "soak-tables.json").read_text(encoding="utf-8"))
    diff = None
    if compare_dir is not None:
        previous = json.loads((compare_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
        diff = report.compare(previous, summary)
    page = folder / "soak.html"
    page.write_text(report.render(summary, table.get("timeline", []), table, diff), "utf-8")
    return page
