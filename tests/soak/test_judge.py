"""The SLO logic on hand-made event streams: each verdict, and what makes it pass, fail or
stay undecided. No network, no clock: events carry their own times."""

from __future__ import annotations

from kconform.engine.model import Verdict
from kconform.fixtures.targets.base import Capability
from kconform.soak.client import Event
from kconform.soak.delivery import DeliveryMatcher, Poll
from kconform.soak.judge import SoakFacts, Thresholds, growth_per_hour, judge
from kconform.soak.latency import latency_histogram
from kconform.soak.ledger import Fault, Ledger

ALL = frozenset(Capability)
INTERVAL = 5.0


def start(client: int, t: float = 0.0) -> list[Event]:
    return [Event("life", t, client, detail="started"),
            Event("get", t, client, value=int(INTERVAL * 1000), instance=f"i{client}")]  # fmt: skip


def push(client: int, t: float, code: int = 0, stamp: int = 0) -> Event:
    return Event("push", t, client, code=code, latency_ms=1.0, node=1, instance=f"i{client}",
                 stamp=stamp or int(t * 1e9) + client)  # fmt: skip


def verdicts(ledger: Ledger, judged_at: float, **facts: object) -> dict[str, Verdict]:
    args: dict[str, object] = {"ledger": ledger, "delivery": None, "capabilities": ALL,
                               "started": 0.0, "judged_at": judged_at}  # fmt: skip
    args.update(facts)
    if args["delivery"] is None:
        args["capabilities"] = ALL - {Capability.TELEMETRY_SINK}
    judged = judge(SoakFacts(**args), Thresholds())  # type: ignore[arg-type]
    return {j.slo.id: j.verdict for j in judged}


def steady(ledger: Ledger, clients: range, until: float) -> None:
    """Every client pushing once per interval, accepted."""
    for c in clients:
        ledger.feed(start(c))
        t = 1.0
        while t < until:
            ledger.feed([push(c, t + c * 0.01)])
            t += INTERVAL


def test_steady_fleet_passes_every_judged_slo() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(5), 60)
    got = verdicts(ledger, 60)
    assert got["soak.lockout.none"] is Verdict.PASS
    assert got["soak.errors.kip_table"] is Verdict.PASS
    assert got["soak.throttle.bound"] is Verdict.PASS
    assert got["soak.subscription_change.recovery"] is Verdict.NOT_APPLICABLE
    assert got["soak.restart.no_lockout"] is Verdict.NOT_APPLICABLE
    assert got["soak.delivery.no_loss"] is Verdict.UNSUPPORTED  # no sink given


def test_subscription_change_recovery_within_and_beyond_two_intervals() -> None:
    ledger = Ledger(0.0, INTERVAL)
    for c in range(4):
        ledger.feed(start(c))
    ledger.fault(Fault("subscription", 100.0, 100.0, "create"))
    ledger.feed([push(0, 101, 117), push(0, 106)])  # 5 s: within 2 x 5 s
    ledger.feed([push(3, 101, 117), Event("conn", 102, 3, detail="lost"), push(3, 130)])
    assert verdicts(ledger, 140)["soak.subscription_change.recovery"] is Verdict.PASS
    storm = ledger.storms[0]
    assert storm.recovered == {0: 5.0} and storm.disturbed == {3}  # a reconnect: not judged

    ledger.feed([push(1, 101, 117), push(1, 112.5)])  # 11.5 s: late
    assert verdicts(ledger, 140)["soak.subscription_change.recovery"] is Verdict.FAIL


def test_a_storm_that_never_ends_fails_recovery_and_lockout() -> None:
    ledger = Ledger(0.0, INTERVAL)
    ledger.feed(start(0))
    ledger.feed([push(0, 4)])
    ledger.fault(Fault("subscription", 5.0, 5.0, "alter"))
    for t in range(6, 60, 5):  # what the kept-SubscriptionId mutant does: 117 for ever
        ledger.feed([push(0, t, 117), Event("get", t, 0, value=5000, instance="i0")])
    got = verdicts(ledger, 60)
    assert got["soak.subscription_change.recovery"] is Verdict.FAIL
    assert got["soak.lockout.none"] is Verdict.FAIL
    assert "last error UNKNOWN_SUBSCRIPTION_ID" in ledger.lockouts[0].reason


def test_stopped_telemetry_is_a_lockout_and_closed_clients_are_not() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(2), 20)
    ledger.feed([Event("life", 20, 0, detail="closed")])
    assert verdicts(ledger, 50)["soak.lockout.none"] is Verdict.FAIL  # client 1 went quiet
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 20)
    ledger.feed([push(0, 21, 42), Event("life", 21, 0, detail="stopped:push_42")])
    assert verdicts(ledger, 22)["soak.lockout.none"] is Verdict.FAIL
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 20)
    ledger.feed([Event("life", 20, 0, detail="killed")])
    assert verdicts(ledger, 60)["soak.lockout.none"] is Verdict.PASS


def test_restart_gives_a_fresh_clock_and_is_judged_from_the_return() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(2), 30)
    ledger.restarting = True
    assert ledger.check_lockouts(50) == 0  # no lock-out opens while the broker is down
    ledger.fault(Fault("restart", 30.0, 45.0, "restart of node 1", (1,)))
    ledger.feed([push(0, 48), push(1, 55)])
    got = verdicts(ledger, 58)
    assert got["soak.restart.no_lockout"] is Verdict.PASS
    assert ledger.restart_watches[0].recovered == {0: 3.0, 1: 10.0}
    assert got["soak.lockout.none"] is Verdict.PASS

    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(2), 30)
    ledger.fault(Fault("restart", 30.0, 45.0, "restart of node 1", (1,)))
    ledger.feed([push(0, 48)])  # client 1 never comes back
    got = verdicts(ledger, 80)
    assert got["soak.restart.no_lockout"] is Verdict.FAIL
    assert got["soak.lockout.none"] is Verdict.FAIL


def test_error_codes_outside_the_kip_table_fail() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 20)
    ledger.feed([push(0, 21, 118), push(0, 26, 89)])
    assert verdicts(ledger, 27)["soak.errors.kip_table"] is Verdict.PASS
    ledger.feed([push(0, 31, 35)])
    assert verdicts(ledger, 32)["soak.errors.kip_table"] is Verdict.FAIL
    assert ledger.codes_outside == {"PushTelemetry UNSUPPORTED_VERSION (35)": 1}


def test_throttled_pushes_above_the_bound_fail() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(10), 50)  # 100 pushes
    assert verdicts(ledger, 50)["soak.throttle.bound"] is Verdict.PASS
    ledger.feed([push(0, 51, 89), push(1, 51, 89)])
    assert verdicts(ledger, 52)["soak.throttle.bound"] is Verdict.FAIL


def test_memory_growth_is_judged_after_the_first_quarter_of_long_runs() -> None:
    flat = [(t * 60.0, 500e6 + (t % 2) * 1e6) for t in range(30)]
    rising = [(t * 60.0, 500e6 + t * 60 * 200_000) for t in range(30)]  # 200 kB/s = 687 MiB/h
    assert abs(growth_per_hour(flat)) < 5
    assert 680 < growth_per_hour(rising) < 690
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 1800)
    ok = verdicts(ledger, 1800, memory=flat, memory_source="rss")
    bad = verdicts(ledger, 1800, memory=rising, memory_source="rss")
    short = verdicts(ledger, 300, memory=rising[:5], memory_source="rss")
    none = verdicts(ledger, 1800)
    assert ok["soak.broker.memory_growth"] is Verdict.PASS
    assert bad["soak.broker.memory_growth"] is Verdict.FAIL
    assert short["soak.broker.memory_growth"] is Verdict.NOT_APPLICABLE
    assert none["soak.broker.memory_growth"] is Verdict.UNSUPPORTED


def test_latency_is_recorded_not_judged() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 20)
    hist = latency_histogram([1.0, 2.0, 3.0, 250.0])
    assert verdicts(ledger, 20, latency_hist=hist)["soak.latency.client_side"] is (
        Verdict.INFORMATIONAL
    )


# --- delivery ------------------------------------------------------------------------------


def test_matching_in_either_order_and_duplicates() -> None:
    m = DeliveryMatcher()
    m.instance("a")
    m.ack("a", 1, node=1, t=10)
    m.sink("a", 1, t=10.5)
    m.sink("a", 2, t=11)  # the sink first ...
    m.ack("a", 2, node=1, t=11.2)  # ... then the answer reaches the coordinator
    m.sink("a", 2, t=12)  # and once more: a duplicate
    counts = m.settle(20, final=True)
    assert (counts.acked, counts.matched, counts.duplicates, counts.missing) == (2, 2, 1, 0)


def test_missing_needs_a_complete_read_of_the_same_sink_after_the_ack() -> None:
    m = DeliveryMatcher()
    m.poll(Poll(1, 5.0, 0))
    m.ack("a", 1, node=1, t=10)
    assert m.settle(11).pending == 1  # nothing read since: not yet decidable
    m.poll(Poll(1, 12.0, 0))
    counts = m.settle(13)
    assert counts.missing == 1 and counts.examples_missing

    evicted = DeliveryMatcher()
    evicted.poll(Poll(1, 5.0, 0))
    evicted.ack("a", 1, node=1, t=10)
    evicted.poll(Poll(1, 12.0, 0, complete=False))  # records evicted before this read
    assert evicted.settle(13).unread == 1

    restarted = DeliveryMatcher()
    restarted.poll(Poll(1, 5.0, 0))
    restarted.ack("a", 1, node=1, t=10)
    restarted.poll(Poll(1, 12.0, 1))  # a new sink: what the old one held is unknowable
    assert restarted.settle(13).unread == 1
    assert restarted.settle(13, final=True).missing == 0


def test_no_loss_verdicts_fail_error_and_pass() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 10)
    m = DeliveryMatcher()
    m.poll(Poll(1, 0.0, 0))
    m.ack("i0", 1, 1, 1.0)
    m.ack("i0", 2, 1, 2.0)
    m.sink("i0", 1, 1.5)
    m.poll(Poll(1, 3.0, 0))
    assert verdicts(ledger, 10, delivery=m.settle(10, final=True))["soak.delivery.no_loss"] is (
        Verdict.FAIL
    )
    m = DeliveryMatcher()
    m.poll(Poll(1, 0.0, 0))
    m.ack("i0", 1, 1, 1.0)
    m.poll(Poll(1, 3.0, 0, complete=False))
    assert verdicts(ledger, 10, delivery=m.settle(10, final=True))["soak.delivery.no_loss"] is (
        Verdict.ERROR
    )
    m = DeliveryMatcher()
    m.ack("i0", 1, 1, 1.0)
    m.sink("i0", 1, 1.5)
    got = verdicts(ledger, 10, delivery=m.settle(10, final=True))
    assert got["soak.delivery.no_loss"] is Verdict.PASS
    assert got["soak.delivery.no_duplicate"] is Verdict.PASS


def test_unclaimed_sink_records_are_unanswered_pushes_or_someone_elses() -> None:
    m = DeliveryMatcher()
    m.instance("mine")
    m.sink("mine", 5, 1.0)  # the client's connection dropped before the answer
    m.sink("theirs", 6, 1.0)  # another shard's client, or a real client
    counts = m.settle(100.0)
    assert (counts.unacked_delivered, counts.foreign) == (1, 1)


def test_restart_recovery_too_late_fails_unless_a_later_restart_came_first() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(2), 30)
    ledger.fault(Fault("restart", 30.0, 31.0, "restart of node 1", (1,)))
    ledger.feed([push(0, 33), push(1, 65)])  # 34 s after the return: more than 6 x 5 s
    assert verdicts(ledger, 70)["soak.restart.no_lockout"] is Verdict.FAIL

    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(2), 30)
    ledger.fault(Fault("restart", 30.0, 31.0, "restart of node 1", (1,)))
    ledger.feed([push(0, 33)])
    ledger.fault(Fault("rolling_restart", 40.0, 44.0, "rolling restart", (1, 2, 3)))
    ledger.feed([push(0, 46), push(1, 50)])
    assert verdicts(ledger, 60)["soak.restart.no_lockout"] is Verdict.PASS
    assert ledger.restart_watches[0].disturbed == {1}


def test_a_move_restarts_the_lockout_clock() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 10)
    ledger.feed([Event("life", 25, 0, detail="moved")])
    assert verdicts(ledger, 50)["soak.lockout.none"] is Verdict.PASS  # 25 s since the move
    assert verdicts(ledger, 60)["soak.lockout.none"] is Verdict.FAIL


def test_a_subscription_change_during_restart_recovery_hands_the_client_to_the_storm() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 30)
    ledger.fault(Fault("restart", 30.0, 31.0, "restart of node 1", (1,)))
    ledger.fault(Fault("subscription", 32.0, 32.0, "alter"))
    ledger.feed([push(0, 35, 117), push(0, 42)])
    assert ledger.restart_watches[0].disturbed == {0}
    assert ledger.storms[0].recovered == {0: 7.0}


def test_growth_is_judged_within_the_stretches_between_restarts() -> None:
    """Restarts every few minutes leave stretches, not a second half: the slope is taken within
    each (a restart's drop is no slope), so a leak shows and a flat heap passes."""
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 1800)
    for at in (600.0, 1100.0):
        ledger.fault(Fault("restart", at, at + 10, "restart", (1,)))
    times = [t * 60.0 for t in range(31)]
    flat = [(t, 600e6 - (100e6 if t > 610 else 0) - (100e6 if t > 1110 else 0)) for t in times]
    leak = [(t, v + t * 200_000) for t, v in flat]  # 687 MiB/h on top, from the start
    assert verdicts(ledger, 1800, memory=flat, memory_source="heap")[
        "soak.broker.memory_growth"] is Verdict.PASS  # fmt: skip
    assert verdicts(ledger, 1800, memory=leak, memory_source="heap")[
        "soak.broker.memory_growth"] is Verdict.FAIL  # fmt: skip
    no_sink = ALL - {Capability.TELEMETRY_SINK}
    judged = judge(SoakFacts(ledger, None, no_sink, 0.0, 1800, leak, "heap"), Thresholds())
    memory = next(j for j in judged if j.slo.id == "soak.broker.memory_growth")
    assert memory.value is not None and 680 < memory.value < 690
    # 480-540 s, 840-1080 s and 1320-1800 s: the first quarter and restarts + 3 min left out
    assert "3 stretch(es)" in memory.expectations[0].what
    assert "16 readings" in memory.expectations[0].what


def test_a_restarted_brokers_refilling_heap_is_not_growth() -> None:
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 1800)
    ledger.fault(Fault("restart", 1000.0, 1010.0, "restart of node 1", (1,)))
    heap = [(t * 60.0, 600e6) for t in range(31)]
    heap = [(t, 400e6 if 1010 <= t <= 1200 else v) for t, v in heap]  # the new JVM refills
    got = verdicts(ledger, 1800, memory=heap, memory_source="heap")
    assert got["soak.broker.memory_growth"] is Verdict.PASS


def test_a_few_minutes_between_restarts_are_too_little_to_judge_growth() -> None:
    """A JVM's heap swings by more than the bound within minutes (a 20-minute soak's first
    stretch read 585 -> 648 MiB in 3 min without a leak): growth is judged on at least half of
    --memory-min-minutes of readings away from restarts, never on less."""
    ledger = Ledger(0.0, INTERVAL)
    steady(ledger, range(1), 1200)
    for at, end in ((420.0, 432.0), (780.0, 830.0)):
        ledger.fault(Fault("restart", at, end, "restart", (1,)))
    heap = [(t * 60.0, 585e6 + (t % 3) * 30e6) for t in range(21)]
    # 288-1150 s judged; left: 300-360 s, 660-720 s, 1020-1140 s: 4 min of readings
    short = verdicts(ledger, 1150, memory=heap, memory_source="heap")
    assert short["soak.broker.memory_growth"] is Verdict.NOT_APPLICABLE
    # to 1200 s: 1020-1200 s, 5 min in all: judged (the swings have no trend: a pass)
    enough = verdicts(ledger, 1200, memory=heap, memory_source="heap")
    assert enough["soak.broker.memory_growth"] is Verdict.PASS
