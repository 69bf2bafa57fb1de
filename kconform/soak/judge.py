"""The soak's objectives judged: one `soak.*` result each, citing the rule-book rule it judges.

Pure: the ledger, the delivery counts and the memory series in, `CaseResult`s out (the same
results `kconform run` writes, so the JSON, JUnit and HTML reports need nothing new). Every
threshold is a flag with the default stated here (`Thresholds`). A case whose evidence is
missing says so: `unsupported` (the target cannot show it), `not-applicable` (the run did not
bring it about: no subscription change, a run too short to measure growth), `error` (the harness
could not tell: sink records evicted before they were read).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kconform.engine.model import Verdict, verdict_for
from kconform.engine.results import CaseResult, Expectation
from kconform.fixtures.targets.base import Capability
from kconform.soak.delivery import DeliveryCounts
from kconform.soak.latency import histogram_percentile
from kconform.soak.ledger import Ledger, Storm
from kconform.soak.objectives import RESTART_SETTLE_S, SLOS, Slo, Thresholds

__all__ = ["SLOS", "Judgement", "SoakFacts", "Thresholds", "case_results", "judge"]


@dataclass
class Judgement:
    slo: Slo
    verdict: Verdict
    expectations: list[Expectation] = field(default_factory=list)
    message: str = ""
    value: float | None = None  # the SLO's headline figure, for --compare


@dataclass
class SoakFacts:
    """Everything the SLOs judge, gathered by the coordinator."""

    ledger: Ledger
    delivery: DeliveryCounts | None
    capabilities: frozenset[Capability]
    started: float
    judged_at: float  # when the fleet began to stop: lock-outs are judged up to here
    memory: Sequence[tuple[float, float]] = ()  # (time, bytes)
    memory_source: str = ""
    cached_max: int | None = None
    latency_hist: Sequence[int] = ()
    restarts_skipped: str = ""
    real_clients: Sequence[dict[str, Any]] = ()  # real.finish_real_clients' summaries


def judge(facts: SoakFacts, thresholds: Thresholds) -> list[Judgement]:
    """Every SLO's verdict (see the module docstring for the non-pass/fail verdicts)."""
    judgements = []
    for slo in SLOS:
        missing = sorted(slo.requires - facts.capabilities)
        if missing:
            judgements.append(
                Judgement(slo, Verdict.UNSUPPORTED, message=f"target lacks {', '.join(missing)}")
            )
            continue
        judgements.append(_JUDGES[slo.id](slo, facts, thresholds))
    return judgements


def _expect(what: str, expected: Any, observed: Any, ok: bool) -> Expectation:
    return Expectation(what, expected, observed, ok)


def _decide(slo: Slo, expectations: list[Expectation], **kw: Any) -> Judgement:
    violated = any(not e.ok for e in expectations)
    return Judgement(slo, verdict_for(slo.level, violated=violated), expectations, **kw)


def _no_loss(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    d = facts.delivery
    assert d is not None
    observed = (
        f"{d.acked} acknowledged, {d.matched} matched at the sink, {d.missing} missing, "
        f"{d.unread} unread, {d.unacked_delivered} delivered without an answer seen"
    )
    exps = [_expect("acknowledged pushes missing at the sink", 0, d.missing, d.missing == 0)]
    if d.examples_missing:
        exps.append(_expect("first missing", "(none)", d.examples_missing, False))
    exps.append(Expectation("deliveries", "(recorded)", observed, True))
    if d.missing == 0 and d.unread:
        return Judgement(
            slo,
            Verdict.ERROR,
            exps,
            value=float(d.missing),
            message=f"{d.unread} acknowledged pushes could not be checked: the sink "
            "evicted records before they were read, or the broker restarted first",
        )
    if d.acked == 0:
        return Judgement(slo, Verdict.NOT_APPLICABLE, exps, message="no push was acknowledged")
    return _decide(slo, exps, value=float(d.missing))


def _no_duplicate(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    d = facts.delivery
    assert d is not None
    exps = [_expect("pushes at the sink twice", 0, d.duplicates, d.duplicates == 0)]
    if d.examples_duplicate:
        exps.append(_expect("first duplicates", "(none)", d.examples_duplicate, False))
    if d.at_sink == 0:
        return Judgement(slo, Verdict.NOT_APPLICABLE, exps, message="no push reached the sink")
    return _decide(slo, exps, value=float(d.duplicates))


def _storm_line(storm: Storm, ledger: Ledger, t: Thresholds, judged_at: float) -> Expectation:
    late, unrecovered, worst = [], [], 0.0
    for client in sorted(storm.affected):
        bound = t.recovery_intervals * storm.intervals.get(client, ledger.interval_of(client))
        took = storm.recovered.get(client)
        if took is not None:
            worst = max(worst, took)
            if took > bound:
                late.append(f"client {client}: {took:.1f} s > {bound:.1f} s")
            continue
        state = ledger.clients[client]
        if state.storm is storm and state.storm_since is not None:
            open_for = min(judged_at, state.ended or judged_at) - state.storm_since
            if open_for > bound:
                unrecovered.append(f"client {client}: none after {open_for:.1f} s")
    at = storm.fault.start - ledger.start
    bad = late + unrecovered
    observed = (
        f"{len(storm.affected)} clients got 117; {len(storm.recovered)} pushed again, "
        f"slowest after {worst:.1f} s; {len(late)} late, {len(unrecovered)} never"
    )
    if storm.throttled:
        observed += f"; {len(storm.throttled)} answered THROTTLING_QUOTA_EXCEEDED on the way"
    if storm.disturbed:
        observed += f"; {len(storm.disturbed)} more lost their connection meanwhile (not judged)"
    if bad:
        observed += "; e.g. " + "; ".join(bad[:3])
    what = f"{storm.fault.detail} at {at:.0f} s: affected clients pushing again in time"
    return _expect(what, f"all within {t.recovery_intervals:g} x PushIntervalMs", observed, not bad)


def _recovery(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    storms = facts.ledger.storms
    if not storms:
        seen = facts.ledger.unexplained_117
        why = "no subscription change in the run" + (
            f" by this shard (shard 0 makes them); {seen} pushes were answered 117" if seen else ""
        )
        return Judgement(slo, Verdict.NOT_APPLICABLE, message=why)
    exps = [_storm_line(s, facts.ledger, t, facts.judged_at) for s in storms]
    worst = max((max(s.recovered.values(), default=0.0) for s in storms), default=0.0)
    if not any(s.affected for s in storms):
        exps.append(Expectation("clients answered 117 after a change", ">= 1", 0, True))
    return _decide(slo, exps, value=round(worst, 3))


def _lockout(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    ledger = facts.ledger
    ledger.check_lockouts(facts.judged_at)
    locked = sorted({lo.client for lo in ledger.lockouts})
    exps = [_expect("clients locked out during the run", 0, len(locked), not locked)]
    if ledger.lockouts:
        shown = [
            f"client {lo.client} from {lo.since - ledger.start:.0f} s"
            f"{'' if lo.until is None else f' to {lo.until - ledger.start:.0f} s'}: "
            f"{lo.reason}"
            for lo in ledger.lockouts[:5]
        ]
        exps.append(_expect("first lock-outs", "(none)", shown, False))
    exps.append(Expectation("clients followed", "(recorded)", len(ledger.clients), True))
    if facts.real_clients:  # real clients: judged by the gaps between their pushes at the sink
        stuck = [
            f"{r['client_id']}: {r['pushes_at_sink']} pushes, longest gap "
            f"{r['longest_gap_intervals']} intervals"
            for r in facts.real_clients
            if not r["pushes_at_sink"] or (r["longest_gap_intervals"] or 0) > t.lockout_intervals
        ]
        exps.append(
            _expect(
                "real clients locked out (gaps between their pushes at the sink)",
                0,
                stuck or 0,
                not stuck,
            )
        )
    return _decide(slo, exps, value=float(len(locked)))


def _restart(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    ledger = facts.ledger
    watches = ledger.restart_watches
    if not watches:
        why = facts.restarts_skipped or "no broker restart in the run"
        return Judgement(slo, Verdict.NOT_APPLICABLE, message=why)
    exps, worst_all, failed = [], 0.0, 0
    for watch in watches:
        overdue = watch.overdue(facts.judged_at, ledger)
        worst = max(watch.recovered.values(), default=0.0)
        worst_all = max(worst_all, worst)
        failed += len(overdue)
        fault = watch.fault
        observed = (
            f"{len(watch.recovered)} of {len(watch.recovered) + len(watch.waiting)} "
            f"clients pushed again, slowest {worst:.1f} s after the broker was back; "
            f"{len(overdue)} overdue"
        )
        if watch.disturbed:
            observed += (
                f"; {len(watch.disturbed)} caught by a later restart or a subscription change "
                "first (not judged)"
            )
        if overdue:
            observed += ": " + ", ".join(f"client {c}" for c in overdue[:5])
        what = (
            f"{fault.kind} of node(s) {','.join(map(str, fault.nodes)) or 'all'} at "
            f"{fault.start - ledger.start:.0f} s (down {fault.end - fault.start:.1f} s)"
        )
        exps.append(
            _expect(
                what, f"all within {t.lockout_intervals:g} x PushIntervalMs", observed, not overdue
            )
        )
    return _decide(slo, exps, value=float(failed))


def _errors(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    outside = facts.ledger.codes_outside
    observed = dict(outside) if outside else {}
    exps = [_expect("responses with a code outside the table", {}, observed, not outside)]
    totals = facts.ledger.totals
    seen = {k: v for k, v in sorted(totals.items()) if k.startswith(("push_", "get_"))}
    exps.append(Expectation("error codes seen", "(recorded)", seen, True))
    return _decide(slo, exps, value=float(sum(outside.values())))


def _throttle(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    totals = facts.ledger.totals
    pushes = totals["pushes"] - totals["terminating"]
    throttled = totals["push_89"]
    if pushes <= 0:
        return Judgement(slo, Verdict.NOT_APPLICABLE, message="no push was sent")
    percent = 100.0 * throttled / pushes
    exps = [
        _expect(
            "throttled pushes (THROTTLING_QUOTA_EXCEEDED)",
            f"< {t.max_throttled_percent:g} % of {pushes}",
            f"{throttled} ({percent:.3f} %)",
            percent < t.max_throttled_percent,
        )
    ]
    exps.append(Expectation("throttled Gets", "(recorded)", totals["get_89"], True))
    return _decide(slo, exps, value=round(percent, 4))


def growth_per_hour(
    series: Sequence[tuple[float, float]], segments: Sequence[Sequence[tuple[float, float]]] = ()
) -> float:
    """Theil-Sen slope of (time, bytes) in MiB per hour: the median of every pairwise slope, so
    one odd reading (a collection, a node just back) does not make a trend. With `segments`
    (stretches between restarts), only pairs within one stretch: a restart's drop is no slope."""
    slopes = sorted(
        (b[1] - a[1]) / (b[0] - a[0])
        for part in (segments or [series])
        for i, a in enumerate(part)
        for b in part[i + 1 :]
        if b[0] > a[0]
    )
    if not slopes:
        return 0.0
    middle = len(slopes) // 2
    slope = slopes[middle] if len(slopes) % 2 else (slopes[middle - 1] + slopes[middle]) / 2
    return slope * 3600 / (1 << 20)


def _memory(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    if not facts.memory_source or not facts.memory:
        return Judgement(slo, Verdict.UNSUPPORTED, message="broker memory is not readable here")
    span = facts.judged_at - facts.started
    if span < t.memory_min_minutes * 60:
        return Judgement(
            slo,
            Verdict.NOT_APPLICABLE,
            message=(
                f"the run lasted {span / 60:.1f} min; growth is judged from "
                f"--memory-min-minutes ({t.memory_min_minutes:g})"
            ),
        )
    warm = facts.started + span / 4  # the fleet has arrived and the caches have filled
    restarts = [f for f in facts.ledger.faults if f.kind in ("restart", "rolling_restart")]
    settling = [(f.start, f.end + RESTART_SETTLE_S) for f in restarts]
    segments: list[list[tuple[float, float]]] = [[]]
    for at, v in sorted(facts.memory):
        if not warm <= at <= facts.judged_at:
            continue
        if any(a <= at <= b for a, b in settling):
            if segments[-1]:
                segments.append([])
            continue
        segments[-1].append((at, v))
    segments = [part for part in segments if len(part) >= 2]
    readings = sum(len(part) for part in segments)
    covered = sum(part[-1][0] - part[0][0] for part in segments)
    if readings < 5 or covered < t.memory_min_minutes * 30:
        return Judgement(
            slo,
            Verdict.NOT_APPLICABLE,
            message=(
                f"{readings} memory readings over {covered / 60:.1f} min after the first quarter, "
                f"away from restarts: a JVM's heap swings by more than the bound between "
                f"collections, so growth is judged on at least {t.memory_min_minutes / 2:g} min"
            ),
        )
    growth = growth_per_hour([], segments)
    first, last = segments[0][0][1] / (1 << 20), segments[-1][-1][1] / (1 << 20)
    exps = [
        _expect(
            f"growth after the first quarter, within {len(segments)} stretch(es) between "
            f"restarts, each restart + {RESTART_SETTLE_S / 60:g} min left out "
            f"({facts.memory_source}; {readings} readings)",
            f"< {t.max_memory_growth_mib_per_hour:g} MiB/h",
            f"{growth:.1f} MiB/h ({first:.0f} -> {last:.0f} MiB)",
            growth < t.max_memory_growth_mib_per_hour,
        )
    ]
    return _decide(slo, exps, value=round(growth, 2))


def _latency(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    hist = list(facts.latency_hist)
    if not sum(hist):
        return Judgement(slo, Verdict.NOT_APPLICABLE, message="no push was answered")
    p50, p99 = histogram_percentile(hist, 50), histogram_percentile(hist, 99)
    observed = {
        "p50_ms_at_most": p50,
        "p99_ms_at_most": p99,
        "max_ms": round(facts.ledger.latency_max, 2),
        "pushes": sum(hist),
    }
    return Judgement(
        slo,
        Verdict.INFORMATIONAL,
        [Expectation("push latency", "(recorded)", observed, True)],
        value=p99,
    )


def _cache(slo: Slo, facts: SoakFacts, t: Thresholds) -> Judgement:
    created = len(facts.ledger.instances)
    observed: dict[str, object] = {"instances_created": created, "max_cached": facts.cached_max}
    if facts.cached_max is None:
        observed["note"] = "the target does not show its instance cache"
    return Judgement(
        slo,
        Verdict.INFORMATIONAL,
        [Expectation("instances", "(recorded)", observed, True)],
        value=created,
    )


_JUDGES = {
    "soak.delivery.no_loss": _no_loss,
    "soak.delivery.no_duplicate": _no_duplicate,
    "soak.subscription_change.recovery": _recovery,
    "soak.lockout.none": _lockout,
    "soak.restart.no_lockout": _restart,
    "soak.errors.kip_table": _errors,
    "soak.throttle.bound": _throttle,
    "soak.broker.memory_growth": _memory,
    "soak.latency.client_side": _latency,
    "soak.cache.instances": _cache,
}


def case_results(
    judgements: Sequence[Judgement],
    *,
    subject: str,
    implementation: str,
    version: str,
    started: float,
    baseline: dict[str, str] | None = None,
) -> list[CaseResult]:
    """The judgements as the results `kconform run` writes."""
    now = time.time()
    return [
        CaseResult(
            case_id=j.slo.id,
            title=j.slo.title,
            spec_ref=j.slo.spec,
            level=str(j.slo.level),
            kip="soak",
            subject=subject,
            subject_kind="broker",
            implementation=implementation,
            version=version,
            verdict=str(j.verdict),
            message=j.message,
            expectations=j.expectations,
            started=started,
            duration=now - started,
            baseline=(baseline or {}).get(j.slo.id),
            nodeid=f"soak::{j.slo.id}",
        )
        for j in judgements
    ]
