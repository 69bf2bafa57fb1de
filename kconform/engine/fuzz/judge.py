"""How the stateful machine judges one session: each answer against the model, each difference
named by its rule.

`Judge.exchange` sends a request, asks the model (`model.TimedModel`) for its answers across the
request's time window, and keeps the one the target gave. A difference is, in this order:

1. ruling 11, for a push whose Metrics field is null: any answer or a close conforms;
2. a known deviation (`deviations.STATEFUL`): the session replayed through the reference model
   with that deviation's mutants gives every answer the target gave. A SHOULD/INFO deviation is
   adopted (the session goes on against that model); a MUST one fails with its `why`;
3. another ruling-4 Get difference: recorded, and the session is not compared any further;
4. anything else: a failure naming the KIP rule behind the model's answer (`model.rule_for`).

A failure is recorded when it happens (the shortest is the one reported) and raised by the
machine's teardown, so that Hypothesis' draws never depend on the target (`machine.py`).
"""

from __future__ import annotations

from typing import Any

from kconform.codecs.errors import ErrorCode
from kconform.codecs.messages import PushTelemetryRequest
from kconform.codecs.schema import Message
from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.engine.fuzz import actions as a
from kconform.engine.fuzz import deviations
from kconform.engine.fuzz import model as m
from kconform.engine.fuzz.corpus import MISMATCH
from kconform.engine.fuzz.engine import Finding
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.reference import RequestContext


class Judge:
    """One session's model, its history, and its verdict so far (see the module docstring)."""

    def __init__(self, world: a.World, client_id: str, trace: a.Trace, seed: int) -> None:
        self.world = world
        self.client_id = client_id
        self.trace = trace
        self.seed = seed
        self.model = m.TimedModel(world.telemetry_max_bytes, seed=seed)
        self.started = m.now_ms()
        self.history: list[m.Step] = []
        self.adopted: frozenset[str] = frozenset()
        self.diverged = False
        self.failed: str | None = None
        self.closed = False  # the last exchange's connection was closed (ruling 11)

    @property
    def comparing(self) -> bool:
        return self.failed is None and not self.diverged

    def exchange(
        self,
        connection: KafkaConnection,
        ctx: RequestContext,
        action: str,
        real: Message,
        modelled: Message,
        version: int,
        last_error: ErrorCode = ErrorCode.NONE,
        *,
        shown: bool = True,
    ) -> tuple[m.Candidate | None, Any]:
        """Send `real`, ask the model about `modelled`; the candidate kept and the answer (both
        None when the model cannot follow the target any further). `shown=False` keeps an
        agreed step out of the trace (the sentinel's: it only marks the step before it)."""
        self.closed = False
        if not self.comparing:  # a rule's later request, after its earlier one ended comparing
            return None, None
        body, t0, t1 = self.world.session.io(a.timed(connection, real, version), a.REQUEST_TIMEOUT)
        assert modelled.api_key is not None
        frame = m.as_received(modelled, version, self.client_id)
        candidates = self.model.candidates(ctx, frame, t0, t1)
        seen = m.observed_signature(body) if isinstance(body, Message) else (body,)
        self.world.session.count((action.split("(")[0].split(" ")[0], str(seen[0])))
        expected = [m.signature(c.outcome) for c in candidates]
        what = f"{f'+{t0 - self.started} ms':<9} {action}"
        if seen in expected:
            chosen = candidates[expected.index(seen)]
            self.model.commit(chosen)
            self.history.append(m.Step(ctx, frame, t0, t1, seen))
            note = ""
            if len(candidates) > 1:
                note = "  (within a few ms of an interval boundary: model accepts " + (
                    " or ".join(m.show(s) for s in expected) + ")"
                )
            if shown:
                self.trace.log(f"{what}\n{'':14}-> {m.show(seen)}{note}")
            return chosen, body
        if isinstance(modelled, PushTelemetryRequest) and modelled.metrics is None:
            self._null_metrics(what, action, seen)
            return None, None
        last = m.Step(ctx, frame, t0, t1, seen)
        explained = self._explain(last)
        if explained is not None:
            deviation, adopted, chosen = explained
            if deviation.acceptable:
                self._adopt(deviation, adopted, last, what)
                return chosen, body
            self._mismatch(what, action, seen, expected, deviation.describe(), deviation)
            return None, None
        level = m.ruling_4(modelled.api_key, seen, expected, last_error)
        if level is not None:  # recorded; the model cannot follow the target any further
            self.world.divergences.append(level)
            self.trace.log(f"{what}\n{'':14}-> {m.show(seen)}  [{level}; not compared further]")
            self.diverged = True
            return None, None
        instance_id = getattr(modelled, "client_instance_id", None)
        rule_text = m.rule_for(
            modelled.api_key, expected[0], seen, instance_id in (ZERO_UUID, ONE_UUID)
        )
        if modelled.api_key == 71 and instance_id == ZERO_UUID and seen[0] != "NONE":
            rule_text = f"{m.FRESH_ID_RULE}; an instance that new is never throttled"
        self._mismatch(what, action, seen, expected, rule_text, None)
        return None, None

    def _explain(
        self, last: m.Step
    ) -> tuple[deviations.Deviation, m.TimedModel, m.Candidate] | None:
        """The known deviation whose model gives every answer of this session, `last` included
        (acceptable ones first, each on top of those already adopted), and that model."""
        steps = [*self.history, last]
        for deviation in deviations.STATEFUL:
            if deviation.mutants <= self.adopted:
                continue
            mutants = self.adopted | deviation.mutants
            found = m.replay(steps, self.world.telemetry_max_bytes, self.seed, mutants)
            if found is not None:
                return deviation, *found
        return None

    def _adopt(
        self, deviation: deviations.Deviation, adopted: m.TimedModel, last: m.Step, what: str
    ) -> None:
        """Go on against the model of a deviation a ruling accepts (SHOULD or INFO)."""
        adopted.ambiguous_steps += self.model.ambiguous_steps
        self.model, self.adopted = adopted, adopted.mutants
        self.history.append(last)
        self.world.divergences.append(f"{deviation.level} {deviation.key}: {deviation.rule}")
        self.trace.log(
            f"{what}\n{'':14}-> {m.show(last.seen)}  [{deviation.level}, {deviation.key}; "
            "the model follows it from here]"
        )

    def _null_metrics(self, what: str, action: str, seen: tuple[object, ...]) -> None:
        """Ruling 11: a null Metrics push may be answered anyhow, or its connection closed. The
        model is not told: a broker that closes never handed the request to its manager."""
        if seen == ("closed",):
            self.closed = True
            self.world.divergences.append("INFO ruling 11: the connection was closed")
            self.trace.log(
                f"{what}\n{'':14}-> closed  [{m.NULL_METRICS_RULE}; the instance is forgotten: "
                "Apache 4.x drops it with its connection, 3.x keeps it]"
            )
            return
        if seen[0] in ("hang", "undecodable"):
            self._mismatch(what, action, seen, [], m.NULL_METRICS_RULE, None)
            return
        self.world.divergences.append(f"INFO ruling 11: answered {m.show(seen)}")
        self.trace.log(
            f"{what}\n{'':14}-> {m.show(seen)}  [{m.NULL_METRICS_RULE}; not compared further]"
        )
        self.diverged = True

    def require(self, ok: bool, action: str, problem: str, rule_text: str) -> None:
        if not ok:
            self.trace.log(f"{'':9} {action}: {MISMATCH}: {problem}\n{'':14}rule: {rule_text}")
            self.fail(f"{action}: {problem}")

    def _mismatch(
        self,
        what: str,
        action: str,
        seen: tuple[object, ...],
        expected: list[tuple[object, ...]],
        rule_text: str,
        deviation: deviations.Deviation | None,
    ) -> None:
        wanted = [m.show(s) for s in expected] or ["an answer or a close"]
        self.trace.log(
            f"{what}\n{'':14}-> {m.show(seen)}   {MISMATCH}: the model expects "
            f"{' or '.join(wanted)}\n{'':14}rule: {rule_text}"
        )
        summary = f"{action}: got {m.show(seen)}, model expects {wanted[0]}"
        if deviation is not None:
            summary += f" [{deviation.key} ({deviation.level}); why: {deviation.why}]"
        self.fail(summary)

    def fail(self, summary: str) -> None:
        """Record the finding now; the machine's teardown raises it."""
        if self.failed is not None:
            return
        session = self.world.session
        report = self.trace.report(
            f"{session.case_id} on {session.target_name}: {self.trace.steps} steps; "
            "the last one differs from the reference model"
        )
        session.found(Finding(summary, report, size=self.trace.steps))
        self.failed = summary
