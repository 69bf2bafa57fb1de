"""Coverage-guided request fuzzing (`kconform fuzz --target apache:<v> --coverage-guided`).

The request cases' own fuzzer, with a corpus. After each example (a batch of requests) every
node's JaCoCo agent is dumped and reset over its TCP port (`wire.dump`, a socket round trip).
The batch joins the corpus when it set a probe no earlier batch set (AFL's rule, on JaCoCo
probes: `ProbeUnion.add`). Once the corpus holds anything, three examples in four are led
by up to 16 requests derived from a corpus entry, then the usual example (cut at the batch's
depth): malformed cases break the entry's requests again with the same mutations
(`mutations.MUTATIONS`, stacked on what the entry already is); well-formed cases re-draw one
field of an entry's body, at any depth (one config's value, keeping the resource type and the
other configs that got the entry kept), and re-encode it, at its version or another. The usual
examples come from the usual strategies (`stream.examples`), so the requests, the oracle and
the verdicts are the usual ones; only which requests get sent changes.

`--coverage-unguided` is the same fuzzer with the same seeds, instrumented and read the same
way, keeping no corpus: its examples are the usual strategy's, unchanged, so for a seed it
sends what the plain fuzzer sends. That is the baseline guidance is measured against
(`benchmarks/fuzz_coverage.py`).

Both modes search on past a finding a known deviation explains (`deviations.py`; on Apache the
configs cases meet one at their first example): it is reported as always, and what it explains
is not sent again, so the budget goes to reach. Once a case has any other finding the corpus is
frozen, so Hypothesis' shrinking replays its choices against the same corpus. The counters
each dump read are handed back to the agent (`CoverageAgent.saved`), so the `--coverage`
report of the run still holds everything.
"""

from __future__ import annotations

import functools
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from hypothesis import strategies as st
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.data import ConjectureData

from kconform.codecs.framing import decode_request
from kconform.codecs.messages import REQUESTS
from kconform.codecs.schema import Field, Message, Struct
from kconform.codecs.wire import DecodeError
from kconform.engine.fuzz import stream
from kconform.engine.fuzz.inputs import (
    FAMILY_MAX,
    SESSION_NOTE,
    FuzzRequest,
    assemble,
    body_strategy,
    unusual,
)
from kconform.engine.fuzz.mutations import MUTATIONS, changes_state
from kconform.fixtures.coverage import wire
from kconform.fixtures.coverage.agent import CoverageAgent
from kconform.fixtures.coverage.probes import ProbeUnion

Deriver = Callable[[st.DrawFn, list[FuzzRequest]], list[FuzzRequest]]
Place = tuple[Struct, type[Struct], Field]
"""A field of a decoded body, and the struct (instance, class) that holds it."""

GUIDED_ENV = "KCONFORM_FUZZ_GUIDED"
"""`guided` or `unguided` (set by `kconform fuzz --coverage-guided/--coverage-unguided`)."""
REACH_ENV = "KCONFORM_FUZZ_REACH"
"""The folder each case writes its probes to (`reach-<case>.json`)."""
MODES = ("guided", "unguided")
DERIVED_SHARE = 3  # of 4 examples, once the corpus holds an entry
REACH_FILE = "reach-{case}.json"
ELEMENTS_SEEN = 8  # of an array, the elements whose fields a re-draw may land on
NESTING_SEEN = 4  # structs within structs
FAST_BATCH_S = 0.05  # a batch's seconds below which speed no longer weighs
SLOW_BATCH_S = 1.0  # a batch slower than this is not kept (a pipelined batch takes ~0.1 s)
_unusual = functools.cache(unusual)  # building a strategy costs more than drawing from it


def mode() -> str | None:
    value = os.environ.get(GUIDED_ENV, "")
    return value if value in MODES else None


def guide_for(target: object) -> Guide | None:
    """A Guide on `target`'s JaCoCo agents when the run is guided or measured (a mode is set
    and the plugin put agents on the target's nodes: `--coverage`); None otherwise."""
    chosen, agent = mode(), getattr(target, "jvm_agent", None)
    if chosen is None or not isinstance(agent, CoverageAgent):
        return None
    return Guide(agent, chosen)


def reach_folder() -> Path | None:
    value = os.environ.get(REACH_ENV, "")
    return Path(value) if value else None


@dataclass
class Corpus:
    """Batches that set a probe no earlier batch set (`keeping` False: none are kept), each
    with the seconds it took."""

    keeping: bool
    entries: list[list[FuzzRequest]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    frozen: bool = False

    def offer(self, batch: list[FuzzRequest], new_probes: int, seconds: float = 0.0) -> bool:
        """AFL's rule: keep `batch` when it set a new probe (and the corpus may still grow),
        unless it took over `SLOW_BATCH_S` (AFL queues no input that timed out): whatever is
        derived from a batch that keeps the broker busy for seconds keeps that cost."""
        if new_probes <= 0 or not self.keeping or self.frozen or seconds > SLOW_BATCH_S:
            return False
        self.entries.append(list(batch))
        self.seconds.append(seconds)
        return True

    def weights(self) -> list[float]:
        """How often each entry is picked to derive from: the faster, the more (AFL favours
        fast entries too)."""
        return [1.0 / (FAST_BATCH_S + s) for s in self.seconds]


@dataclass
class Guide:
    """One request case's probes, corpus and timeline on one target's agents."""

    agent: CoverageAgent
    mode: str
    union: ProbeUnion = field(default_factory=ProbeUnion)
    corpus: Corpus = field(init=False)
    samples: list[tuple[float, int, int, int]] = field(default_factory=list)
    derived: int = 0
    fresh: int = 0
    dumps: int = 0
    dump_seconds: float = 0.0
    started: float = field(default_factory=time.time)  # wall clock: cases share one time axis

    def __post_init__(self) -> None:
        self.corpus = Corpus(keeping=self.mode == "guided")

    def read(self) -> list[wire.ClassProbes]:
        """Every node's probes since the last read, reset; the bytes go back to the agent so
        the run's `--coverage` dumps keep them. A node that cannot be read is noted there."""
        started = time.monotonic()
        classes: list[wire.ClassProbes] = []
        for node_id in sorted(self.agent.ports):
            try:
                data = wire.dump(self.agent.ports[node_id], reset=True)
            except OSError as exc:
                self.agent.lost.append(f"node {node_id} (guided fuzzing): {exc}")
                continue
            self.agent.saved.setdefault(node_id, bytearray()).extend(data)
            classes.extend(wire.split_blocks(data).classes)
        self.dumps += 1
        self.dump_seconds += time.monotonic() - started
        return classes

    def after(
        self, batch: list[FuzzRequest], examples: int, *, frozen: bool, seconds: float = 0.0
    ) -> int:
        """After a batch ran (in `seconds`): its new probes (kept in the corpus when there
        are any)."""
        self.corpus.frozen = self.corpus.frozen or frozen
        now = time.time()
        new = self.union.add(self.read(), now)
        self.corpus.offer(batch, new, seconds)
        if new or not self.samples:
            self.samples.append((now, examples, self.union.count, len(self.corpus.entries)))
        return new

    def examples(
        self, group: str, broken: bool, pipelining: stream.Pipelining
    ) -> st.SearchStrategy[list[FuzzRequest]]:
        """The case's usual example, led (guided, corpus not empty, three times in four) by
        requests derived from a corpus entry, cut at the batch's depth.

        Hypothesis checks that the same choices always lead to the same kinds of draws, and
        the corpus grows between examples: so every example makes the same draws (a share,
        a seed, the usual example), and the derived requests are drawn from the seed on a
        private `ConjectureData`, outside Hypothesis' record of choices."""
        fresh = stream.examples(group, broken, pipelining)
        if not self.corpus.keeping:  # unguided: the usual examples, not one choice more
            return fresh.map(self._counted)
        derive = derive_broken if broken else derive_well_formed

        @st.composite
        def pick(draw: st.DrawFn) -> list[FuzzRequest]:
            share, seed = draw(st.integers(0, 3)), draw(st.integers(0, 2**32 - 1))
            usual = draw(fresh)
            if share >= DERIVED_SHARE or not self.corpus.entries:
                self.fresh += 1
                return usual
            made = derived(seed, self.corpus.entries, derive, self.corpus.weights())
            self.derived += bool(made)
            self.fresh += not made
            return [*made, *usual][: pipelining.depth]

        return pick()

    def _counted(self, usual: list[FuzzRequest]) -> list[FuzzRequest]:
        self.fresh += 1
        return usual

    def summary(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "probes": self.union.count,
            "corpus": len(self.corpus.entries),
            "derived": self.derived,
            "fresh": self.fresh,
            "dumps": self.dumps,
            "dump_ms": round(1000 * self.dump_seconds / max(self.dumps, 1), 2),
        }

    def write(self, folder: Path, case_id: str) -> Path:
        """The case's probes (each with when it was first set) and samples, for the report."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / REACH_FILE.format(case=case_id)
        data = {**self.summary(), "case": case_id, "started": self.started, "ended": time.time(),
                "union": self.union.to_json(), "samples": self.samples}  # fmt: skip
        path.write_text(json.dumps(data), "utf-8")
        return path


# --- deriving examples from a corpus entry -----------------------------------------------------


def _applies(kind: str, r: FuzzRequest) -> bool:
    """Can mutation `kind` break `r` further? (Some need a payload, or a header naming an
    api the codec knows.)"""
    if not r.payload:
        return kind in ("size_prefix", "trailing_bytes", "wrong_api_key")
    if kind in ("wrong_version", "garbage_tags"):
        claimed = r.claimed()
        return claimed is not None and claimed[0] in REQUESTS
    return True


def derived(
    seed: int,
    entries: list[list[FuzzRequest]],
    derive: Deriver,
    weights: list[float] | None = None,
) -> list[FuzzRequest]:
    """Requests derived from one corpus entry (picked by `weights`, or evenly), both chosen by
    `seed` alone (inside a Hypothesis test: the strategies need its build context)."""
    rng = random.Random(seed)
    base = rng.choices(entries, weights)[0] if weights else entries[rng.randrange(len(entries))]
    try:
        return derive(cast(st.DrawFn, ConjectureData(random=rng).draw), base)
    except StopTest:  # the private data gave up (a filter that kept rejecting): nothing derived
        return []


def derive_broken(draw: st.DrawFn, base: list[FuzzRequest]) -> list[FuzzRequest]:
    """1 to `FAMILY_MAX` requests, each a request of `base` broken once more."""
    out = []
    for _ in range(draw(st.integers(1, FAMILY_MAX))):
        parent = draw(st.sampled_from(base))
        kinds = [k for k in MUTATIONS if _applies(k, parent)]
        child = MUTATIONS[draw(st.sampled_from(kinds))](draw, parent)
        if child is not None and not changes_state(child):
            out.append(child)
    return out


def _places(body: Struct, cls: type[Struct], version: int, depth: int = 0) -> list[Place]:
    """Every field of `body` present at `version`, and every field of the structs it holds
    (the first `ELEMENTS_SEEN` of an array), each with the struct that holds it: the places a
    re-draw can land. A whole resource list is one place; so is each resource's type, name and
    each of its configs' name and value."""
    found: list[Place] = []
    for f in cls.schema_fields:
        if not f.present(version):
            continue
        found.append((body, cls, f))
        if not f.is_struct or depth >= NESTING_SEEN:
            continue
        value, inner = getattr(body, f.attr, None), cls.structs[f.element_type]
        held = value[:ELEMENTS_SEEN] if isinstance(value, list) else [value]
        for item in held:
            if isinstance(item, Struct):
                found.extend(_places(item, inner, version, depth + 1))
    return found


def _donor(draw: st.DrawFn, cls: type[Struct], version: int) -> Any:
    """A freshly drawn instance of `cls` at `version`, as the well-formed strategies draw it."""
    if cls.owner is cls:  # the request body itself
        return draw(body_strategy(cast(type[Message], cls), version))[0]
    return draw(_unusual(cls, version))


def _respliced(
    draw: st.DrawFn, parent: FuzzRequest, donors: dict[tuple[type[Struct], int], Any]
) -> FuzzRequest | None:
    """`parent`'s body with one field re-drawn, at any depth (a config's value, a resource's
    type, the whole resource list), taken from a freshly drawn instance of the struct holding
    it (one per struct and version in `donors`: drawing costs more than re-encoding), then
    re-encoded at its version or another. Keeping the rest is what lets a kept entry's
    progress (a CLIENT_METRICS resource with an `interval.ms` config) carry over."""
    try:
        frame = decode_request(parent.payload, strict=False)
    except DecodeError:
        return None
    body, cls = frame.body, REQUESTS.get(frame.api_key)
    if body is None or cls is None:
        return None
    version = frame.api_version
    places = _places(body, cls, version)
    if not places:
        return None
    holder, holder_cls, f = draw(st.sampled_from(places))
    if (holder_cls, version) not in donors:
        donors[(holder_cls, version)] = _donor(draw, holder_cls, version)
    setattr(holder, f.attr, getattr(donors[(holder_cls, version)], f.attr))
    at = draw(st.sampled_from([version, *cls.versions()]))
    note = f"{SESSION_NOTE if parent.session else ''}a corpus entry with {f.attr} re-drawn"
    header = frame.header
    return assemble(cls, at, (body, note), int(header.correlation_id), header.client_id)


def derive_well_formed(draw: st.DrawFn, base: list[FuzzRequest]) -> list[FuzzRequest]:
    """1 to `FAMILY_MAX` valid requests, each a request of `base` with one field re-drawn."""
    out: list[FuzzRequest] = []
    donors: dict[tuple[type[Struct], int], Any] = {}
    for _ in range(draw(st.integers(1, FAMILY_MAX))):
        child = _respliced(draw, draw(st.sampled_from(base)), donors)
        if child is not None:
            out.append(child)
    return out
