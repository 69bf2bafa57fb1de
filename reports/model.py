"""The result model: what one run found, as plain data, and its JSON form (the source of truth).

Every report (HTML, JUnit, summaries) is rendered from `RunResults`; the JSON file validates
against `reports/schema/results.schema.json`. Writing is atomic and happens after every case,
so a crash or Ctrl-C never loses what was already found.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kconform.engine.results import CaseResult
from kconform.errors import UsageError
from kconform.outputs import atomic_write
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
    """One baseline file, read once: whose verdicts, for which cluster size (None: any)."""

    subject: str
    brokers: int | None
    verdicts: dict[str, str]
    why: dict[str, str]
    bundles: dict[str, str] = field(default_factory=dict)
    """The release of each library the subject bundled in the run measured, as the subject
    described itself (`subjects[].bundles` of results.json): {"librdkafka": "2.5.0"}."""


def read_baseline(path: Path) -> Baseline:
    """A verdict baseline file. ValueError naming the file if it is malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"baseline {path}: unreadable ({exc})") from None
    verdicts = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(verdicts, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and set(baseline_verdicts(v)) <= set(VERDICTS)
        for k, v in verdicts.items()
    ):
        raise UsageError(
            f"baseline {path}: expected {{'verdicts': {{case_id: verdict}}}}, a verdict being "
            f"one of {', '.join(VERDICTS)} or several joined by '{ALTERNATIVES}'"
        )
    why = data.get("why", {})
    if not isinstance(why, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in why.items()
    ):
        raise UsageError(f"baseline {path}: 'why' must map case ids to text")
    bundles = data.get("bundles", {})
    if not isinstance(bundles, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in bundles.items()
    ):
        raise UsageError(f"baseline {path}: 'bundles' must map library names to releases")
    brokers = data.get("brokers")
    return Baseline(
        subject=str(data.get("subject") or path.stem),
        brokers=brokers if isinstance(brokers, int) else None,
        verdicts=dict(verdicts),
        why=dict(why),
        bundles=dict(bundles),
    )


def bundles_of(run: RunResults, subject: str) -> dict[str, str]:
    """What `subject` said it bundles in `run` (its `subjects[]` entry), {} if nothing."""
    for described in run.subjects:
        if described.get("name") == subject and isinstance(described.get("bundles"), dict):
            return {str(k): str(v) for k, v in sorted(described["bundles"].items())}
    return {}


def load_baseline(path: Path) -> dict[str, str]:
    """A verdict baseline: {case_id: verdict}. ValueError naming the file if it is malformed."""
    return read_baseline(path).verdicts


def load_baseline_why(path: Path) -> dict[str, str]:
    """The baseline's optional `why`: {case_id: the source that explains its expected verdict}."""
    return read_baseline(path).why


def layered_baselines(
    paths: list[Path], brokers: int
) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """{subject: (verdicts, why)} for a run on `brokers` nodes: each subject's general baselines,
    then the ones naming that cluster size on top (they list just the cases whose verdict
    depends on the size); baselines for another size are left out."""
    read = [read_baseline(path) for path in paths]
    out: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
    for baseline in sorted(read, key=lambda b: b.brokers is not None):
        if baseline.brokers not in (None, brokers):
            continue
        verdicts, why = out.setdefault(baseline.subject, ({}, {}))
        verdicts.update(baseline.verdicts)
        why.update(baseline.why)
    return out


def write_baseline(
    path: Path,
    subject: str,
    results: list[CaseResult],
    earlier: Baseline | None = None,
    *,
    keep_unrun: bool = False,
    bundles: dict[str, str] | None = None,
) -> None:
    """Record the verdicts of `subject` as its baseline (sorted, one line per case). From an
    earlier baseline it keeps the `why` of each case still listed, and an entry with
    alternatives that accepts the new verdict (one run shows one of them; it does not narrow
    what is known to vary). `keep_unrun`: a run of some cases only (`--cases`) keeps the
    earlier verdicts of the others. `bundles`: what the subject bundled in this run
    (`bundles_of`), recorded so a bug of a bundled library is held to the release it names."""
    before = earlier.verdicts if earlier else {}
    ran = {r.case_id for r in results if r.subject == subject}
    verdicts = {k: v for k, v in before.items() if keep_unrun and k not in ran}
    for r in sorted(results, key=lambda r: r.case_id):
        if r.subject == subject:
            old = before.get(r.case_id)
            varies = old is not None and ALTERNATIVES in old and baseline_allows(old, r.verdict)
            verdicts[r.case_id] = old if varies and old else r.verdict
    verdicts = dict(sorted(verdicts.items()))
    why = earlier.why if earlier else {}
    body: dict[str, Any] = {
        "subject": subject,
        **({"bundles": bundles} if bundles else {}),
        "verdicts": verdicts,
    }
    kept = {k: v for k, v in sorted(why.items()) if k in verdicts}
    if kept:
        body["why"] = kept
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(body, indent=1, sort_keys=False, ensure_ascii=False) + "\n", encoding="utf-8"
    )
