"""The result model: what one run found, as plain data, and its JSON form (the source of truth).

Every report (HTML, JUnit, summaries) is rendered from `RunResults`; the JSON file validates
against `reports/schema/results.schema.json`. Writing is atomic and happens after every case,
so a crash or Ctrl-C never loses what was already found.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from kconform.engine.results import CaseResult
from kconform.errors import UsageError
from kconform.fixtures.types import Shown
from kconform.outputs import atomic_write
from kconform.reports.expectations import (
    Expectations,
    Layer,
    case_requirements,
    layered,
    read_expectations,
    write_expectations,
)
from kconform.rules import Level, Verdict

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).parent / "schema" / "results.schema.json"

VERDICTS = tuple(str(v) for v in Verdict)  # the one definition is kconform.rules.Verdict
LEVELS = tuple(str(level) for level in Level)
ALTERNATIVES = "|"


def baseline_verdicts(entry: str) -> tuple[str, ...]:
    """The verdicts one baseline entry accepts. Usually one; several joined by '|'
    ('not-applicable|pass') for a subject whose behaviour varies from run to run, which the
    entry's `why` then explains."""
    return tuple(entry.split(ALTERNATIVES))


def baseline_allows(entry: str, verdict: str) -> bool:
    """Whether a verdict is one the baseline entry expects."""
    return verdict in baseline_verdicts(entry)


@dataclass
class RunResults:
    kconform_version: str
    started: float
    finished: float | None = None
    subjects: list[dict[str, Any]] = field(default_factory=list)  # targets/clients described
    results: list[CaseResult] = field(default_factory=list)
    interrupted: bool = False
    schema_version: int = SCHEMA_VERSION
    # the subjects the selected cases run against ({"name", "kind"}), known once pytest has
    # collected: an interrupted run still lists a subject none of whose cases had started
    planned: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResults:
        data = dict(data)
        data["results"] = [CaseResult.from_dict(r) for r in data.get("results", [])]
        return cls(**data)

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(VERDICTS, 0)
        for result in self.results:
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
        return counts

    def write(self, path: Path) -> None:
        """Atomically replace `path` with this run as JSON (the report files' mode)."""

        def dump(tmp: Path) -> None:
            with tmp.open("w", encoding="utf-8") as out:
                json.dump(self.to_dict(), out, indent=1, default=_json_default)

        atomic_write(path, dump)

    @classmethod
    def read(cls, path: Path) -> RunResults:
        """Read a results file; ValueError with the path and reason if it is not one."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"{path}: not a readable results file ({exc})") from None
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
            raise UsageError(f"{path}: not a kconform results file (schema_version)")
        try:
            return cls.from_dict(data)
        except TypeError as exc:
            raise UsageError(f"{path}: malformed results file ({exc})") from None


def merge_runs(runs: list[RunResults]) -> RunResults:
    """Several runs as one (CI matrix cells, `-j` workers): every result and subject, the
    earliest start, the latest end; interrupted if any part was."""
    merged = runs[0]
    for other in runs[1:]:
        merged.subjects += [s for s in other.subjects if s not in merged.subjects]
        merged.planned += [p for p in other.planned if p not in merged.planned]
        merged.results += other.results
        merged.started = min(merged.started, other.started)
        merged.finished = max(filter(None, (merged.finished, other.finished)), default=None)
        merged.interrupted = merged.interrupted or other.interrupted
    return merged


def _json_default(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


@dataclass(frozen=True)
class Baseline:
    """One baseline file, read once: whose exceptions, for which cluster size (None: any). The
    full expectation of a subject is `layered_baselines` (reports.expectations)."""

    subject: str
    brokers: int | None
    verdicts: dict[str, str]  # the exceptions the file lists (its soak section's included)
    why: dict[str, str]
    bundles: dict[str, str] = field(default_factory=dict)
    """The release of each library the subject bundled in the run measured, as the subject
    described itself (`subjects[].bundles` of results.json): {"librdkafka": "2.5.0"}."""
    lacks: dict[str, str] = field(default_factory=dict)  # capability -> why


def read_baseline(path: Path) -> Baseline:
    """A verdict baseline file. UsageError naming the file if it is malformed."""
    exp = read_expectations(path)
    return Baseline(
        subject=exp.subject,
        brokers=exp.only_size,
        verdicts=exp.general.verdicts | exp.soak.verdicts,
        why=exp.general.why | exp.soak.why,
        bundles=exp.bundles,
        lacks=exp.lacks,
    )


def capabilities_of(run: RunResults, subject: str) -> list[str] | None:
    """The capabilities `subject` said it has in `run` (None: it did not say)."""
    for described in run.subjects:
        if described.get("name") == subject and isinstance(described.get("capabilities"), list):
            return [str(c) for c in described["capabilities"]]
    return None


SHOWN = frozenset(str(s) for s in Shown)


def _lacking(
    subject: str, mine: list[CaseResult], has: Collection[str] | None, known: Mapping[str, str]
) -> dict[str, str]:
    """What `subject` lacks that the run confirms: a capability not among those it said it has,
    or something a case needs it to show (`Shown`), whose every case in the run ended
    unsupported. The why of a shown lack is what its first such case measured. `has`: the
    capabilities it said it has (None: it did not say, so only shown lacks are found)."""
    requires = case_requirements()
    found = {}
    for capability in sorted({c for r in mine for c in requires.get(r.case_id, ())}):
        if capability in known or (capability not in SHOWN and (has is None or capability in has)):
            continue
        # the cases needing the least else first: their message is about this lack alone
        needing = sorted(
            (r for r in mine if capability in requires.get(r.case_id, ())),
            key=lambda r: len(requires.get(r.case_id, frozenset()) & SHOWN),
        )
        if not all(r.verdict == "unsupported" for r in needing):
            continue
        if capability in SHOWN and needing[0].message:
            found[capability] = needing[0].message
        else:
            found[capability] = (f"{subject} reported no {capability} capability when measured "
                                 "(its probe or --describe): every case that requires it was "
                                 "unsupported")  # fmt: skip
    return found


def _contradicted(mine: list[CaseResult], lacks: Mapping[str, str]) -> set[str]:
    """The lacks the run shows wrong: a case that requires one ended other than unsupported."""
    requires = case_requirements()
    return {
        lack
        for lack in lacks
        for r in mine
        if lack in requires.get(r.case_id, ()) and r.verdict != "unsupported"
    }


def bundles_of(run: RunResults, subject: str) -> dict[str, str]:
    """What `subject` said it bundles in `run` (its `subjects[]` entry), {} if nothing."""
    for described in run.subjects:
        if described.get("name") == subject and isinstance(described.get("bundles"), dict):
            return {str(k): str(v) for k, v in sorted(described["bundles"].items())}
    return {}


def load_baseline(path: Path) -> dict[str, str]:
    """A baseline's exceptions: {case_id: verdict}. UsageError naming a malformed file."""
    return read_baseline(path).verdicts


def load_baseline_why(path: Path) -> dict[str, str]:
    """The baseline's `why`: {case_id: the source that explains its expected verdict}."""
    return read_baseline(path).why


def layered_baselines(
    paths: list[Path], brokers: int
) -> dict[str, tuple[Mapping[str, str], Mapping[str, str]]]:
    """{subject: (verdicts, why)} expected on `brokers` nodes, for any case id (pass when
    nothing says otherwise): the one API runs, certify, soak and the truth tests read."""
    return dict(layered(paths, brokers))


def write_baseline(
    path: Path,
    subject: str,
    results: list[CaseResult],
    earlier: Baseline | None = None,
    *,
    keep_unrun: bool = False,
    bundles: dict[str, str] | None = None,
    brokers: int = 1,
    capabilities: Collection[str] | None = None,
) -> None:
    """Record what `subject` gave that its facts do not derive, as exceptions (sorted, one line
    per case); a pass that nothing contradicts is no entry. From the file's earlier content it
    keeps the facts (`lacks`, the soak's section when no soak case ran), the `why` of each case
    still listed and an entry with
    alternatives that accepts the new verdict (one run shows one of them; it does not narrow
    what is known to vary). `keep_unrun`: a run of some cases only (`--cases`) keeps the earlier
    entries of the others. `bundles`: what the subject bundled in this run (`bundles_of`).
    `brokers` > 1 records what differs from the 1-node expectation in that size's section.
    `capabilities`: what the subject said it has in this run (`capabilities_of`): a capability
    it lacks whose every case ran unsupported becomes a fact, not one entry per case.
    `earlier` is the file as read before, for callers that read it already (unused else)."""
    del earlier  # the file itself is read: it holds the facts the exceptions are measured on
    old = read_expectations(path) if path.is_file() else Expectations(subject, Layer())
    mine = [r for r in sorted(results, key=lambda r: r.case_id) if r.subject == subject]
    ran = {r.case_id for r in mine}
    if brokers == 1:
        kept = {k: v for k, v in old.lacks.items() if k not in _contradicted(mine, old.lacks)}
        old = replace(old, lacks=kept | _lacking(subject, mine, capabilities, kept))

    def target(case_id: str) -> Layer:
        if brokers != 1:
            return old.sizes.get(brokers, Layer())
        return old.soak if case_id.startswith("soak.") else old.general

    new: dict[str, Layer] = {"general": Layer(), "soak": Layer(), "size": Layer()}

    def slot(case_id: str) -> Layer:
        return new["size" if brokers != 1 else "soak" if case_id.startswith("soak.") else
                   "general"]  # fmt: skip

    if keep_unrun:
        for key, layer in (("general", old.general), ("soak", old.soak),
                           ("size", old.sizes.get(brokers, Layer()))):  # fmt: skip
            if key == "size" and brokers == 1:
                continue
            for case_id, entry in layer.verdicts.items():
                if case_id not in ran:
                    new[key].verdicts[case_id] = entry
                    if case_id in layer.why:
                        new[key].why[case_id] = layer.why[case_id]
    for r in mine:
        before, _ = old.expected(r.case_id, brokers)
        varies = ALTERNATIVES in before and baseline_allows(before, r.verdict)
        entry = before if varies else r.verdict
        underneath = old.expected(r.case_id, 1)[0] if brokers != 1 else old.derived(r.case_id)
        explained = target(r.case_id).verdicts.get(r.case_id) == entry and (
            r.case_id in target(r.case_id).why
        )  # its own why, kept while the verdict holds
        if entry != underneath or explained:
            slot(r.case_id).verdicts[r.case_id] = entry
            why = target(r.case_id).why.get(r.case_id)
            if why is not None:
                slot(r.case_id).why[r.case_id] = why
    sizes = dict(old.sizes)
    if brokers != 1:
        sizes[brokers] = new["size"]
    soak_ran = any(c.startswith("soak.") for c in ran)
    other_ran = any(not c.startswith("soak.") for c in ran)
    write_expectations(path, Expectations(
        subject=subject,
        general=new["general"] if brokers == 1 and other_ran else old.general,
        lacks=old.lacks,
        sizes=sizes,
        soak=new["soak"] if brokers == 1 and soak_ran else old.soak,
        bundles=(bundles or {}) if brokers == 1 else old.bundles,
        soak_note=old.soak_note,
    ))  # fmt: skip
