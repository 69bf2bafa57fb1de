"""What each subject is expected to give, kept once (issue 44): the one API every consumer of
the baselines reads through.

A subject's expected verdict on a case is, in order: a per-subject exception its baseline file
lists; else `unsupported` when the case requires a capability the subject lacks (the `lacks`
facts of its file: what its probe or `--describe` reported missing when measured, such as
KIP-977 on every Apache release, each with its why); else the deviation a bug of the rule
book's record (`Known` with a case, a system and affected releases) gives on a release it
covers; else what the case's level gives a case without deviation (`pass`, `informational`
for an INFO case). A new case every subject passes therefore touches no baseline file, and a
new release a recorded bug covers is expected to deviate without an edit.

Files: `baselines/<kind>/<version>.json` (`installed.json` for a subject without a version),
holding `subject`, optional `bundles`, `lacks` {capability: why}, `verdicts` and `why` (the
exceptions), `brokers` {"3": {verdicts, why}} for what differs on a bigger cluster and `soak`
{note, verdicts, why} for the soak's SLO cases. Each `why` is the id of a text in
`baselines/whys.json`, written there once; a why that is no id there is its own text (a
user's baseline elsewhere). An older flat file (`"brokers": 3` at the top, inline whys) still
reads: the whole file is then that size's layer.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import pkgutil
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconform import locations
from kconform.errors import UsageError
from kconform.rules import Verdict

__all__ = [
    "UNVERSIONED",
    "WHYS",
    "Expectations",
    "ExpectedVerdicts",
    "Layer",
    "case_requirements",
    "expectation_files",
    "layered",
    "prune_whys",
    "read_expectations",
    "read_whys",
    "subject_path",
    "why_id",
    "write_expectations",
]

WHYS = "whys.json"
UNVERSIONED = "installed"  # the file of a subject with no version (a package installed here)
ALTERNATIVES = "|"
SOAK_PREFIX = "soak."  # the soak's SLO cases, kept in a file's `soak` section
VERDICTS = tuple(str(v) for v in Verdict)
PASS = str(Verdict.PASS)
UNSUPPORTED = str(Verdict.UNSUPPORTED)


def subject_path(folder: Path, subject: str) -> Path:
    """`<folder>/<kind>/<version>.json` of a subject: "apache:4.4.0" -> apache/4.4.0.json,
    "kafkajs@2.2.4" -> kafkajs/2.2.4.json, "kafka-python" -> kafka-python/installed.json."""
    parts = re.split(r"[:@]", subject, maxsplit=1)
    kind, version = parts[0], parts[1] if len(parts) == 2 else ""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", kind) or (version and "/" in version):
        raise UsageError(f"subject {subject!r} names no file under {folder}")
    return folder / kind / f"{version or UNVERSIONED}.json"


def expectation_files(folder: Path) -> list[Path]:
    """Every subject file under `folder` (`<kind>/<version>.json`)."""
    return sorted(p for p in folder.glob("*/*.json") if p.parent.name != "__pycache__")


def read_whys(folder: Path) -> dict[str, str]:
    """`<folder>/whys.json`: {id: text}; {} when there is none."""
    path = folder / WHYS
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"whys {path}: unreadable ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise UsageError(f"whys {path}: expected {{id: text}}")
    return dict(data)


def why_id(text: str) -> str:
    """A stable, readable id for a why: its first words, then a digest of the whole."""
    words = re.findall(r"[a-z0-9]+", text.lower())[:6]
    return "-".join(words) + "-" + hashlib.sha256(text.encode()).hexdigest()[:6]


@dataclass(frozen=True)
class Layer:
    """Exceptions: {case id: verdict entry} and {case id: why text}."""

    verdicts: dict[str, str] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Expectations:
    """One subject's file, read: the facts and exceptions expected() derives from."""

    subject: str
    general: Layer
    lacks: dict[str, str] = field(default_factory=dict)  # capability -> why text
    sizes: dict[int, Layer] = field(default_factory=dict)  # cluster size -> what differs
    soak: Layer = field(default_factory=Layer)
    bundles: dict[str, str] = field(default_factory=dict)
    only_size: int | None = None  # an older flat file for one cluster size
    soak_note: str = ""  # under which conditions the soak verdicts were measured

    def expected(self, case_id: str, brokers: int = 1) -> tuple[str, str | None]:
        """(verdict entry, why) expected of this subject on `case_id`: an exception, else what
        a lacking capability derives, else what the case's level gives (`by_level`)."""
        layers = [self.sizes[brokers]] if brokers in self.sizes else []
        layers.append(self.soak if case_id.startswith(SOAK_PREFIX) else self.general)
        for layer in layers:
            if case_id in layer.verdicts:
                return layer.verdicts[case_id], layer.why.get(case_id)
        return self.derived_with_why(case_id)

    def derived_with_why(self, case_id: str) -> tuple[str, str | None]:
        """What the facts alone give (no exception), and why: a lacking capability the case
        requires makes it unsupported; a bug of the rule book's record (`Known` with the case,
        its system and affected releases) that covers this subject makes it the verdict the
        case's level gives a deviation, unless the record says the case misses it there."""
        for capability in sorted(case_requirements().get(case_id, ())):
            if capability in self.lacks:
                return UNSUPPORTED, self.lacks[capability]
        bug = known_bug(case_id, self.subject, self.bundles)
        if bug is not None:
            return bug
        return by_level(case_id), None

    def derived(self, case_id: str) -> str:
        """The verdict the facts alone give: what an exception is measured against."""
        return self.derived_with_why(case_id)[0]

    def listed(self, brokers: int = 1) -> set[str]:
        """The case ids whose expectation is not a plain pass by default: the exceptions and
        the known cases a lacking capability makes unsupported."""
        ids = set(self.general.verdicts) | set(self.soak.verdicts)
        ids |= set(self.sizes[brokers].verdicts) if brokers in self.sizes else set()
        ids |= {c for c, needs in case_requirements().items() if needs & set(self.lacks)}
        ids |= {c for c in bug_cases() if self.derived(c) != PASS}
        return ids


class ExpectedVerdicts(Mapping[str, str]):
    """{case id: expected verdict entry} of a subject on `brokers` nodes, for ANY case id (pass
    when nothing says otherwise); iterating lists the ones that are not pass by default."""

    def __init__(self, expectations: list[Expectations], brokers: int) -> None:
        self._layers = expectations
        self._brokers = brokers
        self._listed: list[set[str]] = []

    def _find(self, case_id: str) -> tuple[str, str | None]:
        if not self._listed:
            self._listed = [exp.listed(self._brokers) for exp in self._layers]
        for exp, listed in reversed(list(zip(self._layers, self._listed, strict=True))):
            if case_id in listed:  # later files layer over earlier ones
                return exp.expected(case_id, self._brokers)
        return by_level(case_id), None

    def __getitem__(self, case_id: str) -> str:
        return self._find(case_id)[0]

    def __iter__(self) -> Iterator[str]:
        if not self._listed:
            self._listed = [exp.listed(self._brokers) for exp in self._layers]
        return iter(sorted(set().union(*self._listed)))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def why(self, case_id: str) -> str | None:
        return self._find(case_id)[1]


def layered(
    paths: Iterable[Path], brokers: int
) -> dict[str, tuple[ExpectedVerdicts, dict[str, str]]]:
    """{subject: (verdicts, whys)} expected on `brokers` nodes from the files named: each
    subject's general files, then those for that cluster size on top; files for another size
    are left out."""
    by_subject: dict[str, list[Expectations]] = {}
    read = [read_expectations(path) for path in paths]
    for exp in sorted(read, key=lambda e: e.only_size is not None):
        if exp.only_size not in (None, brokers):
            continue
        by_subject.setdefault(exp.subject, []).append(exp)
    out = {}
    for subject, exps in by_subject.items():
        verdicts = ExpectedVerdicts(exps, brokers)
        whys = {c: w for c in verdicts if (w := verdicts.why(c)) is not None}
        out[subject] = (verdicts, whys)  # the why of whatever it expects, if any
    return out


def by_level(case_id: str) -> str:
    """What a case that ran to its end without a deviation gives: pass, or `informational` for
    an INFO case (it records, it never passes), so no subject lists that as an exception."""
    from kconform.engine.model import CASES
    from kconform.rules import Level

    case_requirements()  # the declarations are imported
    info = CASES.get(case_id)
    return str(Verdict.INFORMATIONAL) if info and info.level is Level.INFO else PASS


def bug_cases() -> set[str]:
    """The cases the rule book's bug record names as catching a bug."""
    from kconform.rules import BUGS

    return {bug.case for _, bug in BUGS if bug.case}


def known_bug(case_id: str, subject: str, bundles: Mapping[str, str]) -> tuple[str, str] | None:
    """(verdict, why) of the first bug of the record that `case_id` catches on `subject` (its
    release, or the bundled library's, in the affected range; no `missed`), else None."""
    from kconform.engine.model import CASES, verdict_for
    from kconform.reports.bug_systems import affects
    from kconform.rules import BUGS

    info = CASES.get(case_id)
    for _, bug in BUGS:
        if bug.case == case_id and not bug.missed and info and affects(bug, subject, bundles):
            verdict = str(verdict_for(info.level, violated=True))
            return verdict, f"{bug.bug}: {bug.does} ({bug.source}; fixed in {bug.fixed_in})"
    return None


_REQUIRES: dict[str, frozenset[str]] = {}


def case_requirements() -> dict[str, frozenset[str]]:
    """{case id: the capabilities it requires and what it needs the subject to show}, from the
    case declarations (the installed suites are imported once if nothing has imported them
    yet)."""
    from kconform.engine.model import CASES

    if not CASES:
        suites = locations.suites()
        with warnings.catch_warnings():
            # pytest's configure stage shows every DeprecationWarning; kafka-python's schema
            # loader (imported by the KIP-977 suite) gave 327 per process, which filled the
            # stderr pipe of a `-j N` worker whose reader waited on stdout (CI hung on it)
            warnings.simplefilter("ignore", DeprecationWarning)
            for info in pkgutil.walk_packages([str(suites)], "kconform.suites."):
                if info.name.rsplit(".", 1)[-1].startswith("test_"):
                    importlib.import_module(info.name)
    if len(_REQUIRES) != len(CASES):
        _REQUIRES.clear()
        _REQUIRES.update({c.id: frozenset(str(r) for r in c.requires) | c.needs_shown
                          for c in CASES.values()})  # fmt: skip
    return _REQUIRES


def _layer(path: Path, data: Any, whys: Mapping[str, str], where: str) -> Layer:
    if not isinstance(data, dict):
        raise UsageError(f"baseline {path}: {where} must be an object")
    verdicts = data.get("verdicts", {})
    if not isinstance(verdicts, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and set(v.split(ALTERNATIVES)) <= set(VERDICTS)
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
    return Layer(dict(verdicts), {k: whys.get(v, v) for k, v in why.items()})


def read_expectations(path: Path) -> Expectations:
    """A subject's baseline file, its why ids resolved. UsageError naming a malformed file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"baseline {path}: unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"baseline {path}: expected a JSON object")
    whys = read_whys(path.parent.parent) | read_whys(path.parent)
    flat = _layer(path, data, whys, "the file")
    soak_ids = {c for c in flat.verdicts if c.startswith(SOAK_PREFIX)}  # an older -soak file
    general = Layer({k: v for k, v in flat.verdicts.items() if k not in soak_ids},
                    {k: v for k, v in flat.why.items() if k not in soak_ids})  # fmt: skip
    bundles = data.get("bundles", {})
    if not isinstance(bundles, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in bundles.items()
    ):
        raise UsageError(f"baseline {path}: 'bundles' must map library names to releases")
    lacks = data.get("lacks", {})
    if not isinstance(lacks, dict) or not all(isinstance(v, str) for v in lacks.values()):
        raise UsageError(f"baseline {path}: 'lacks' must map capabilities to a why")
    sizes_data = data.get("brokers")
    only_size = sizes_data if isinstance(sizes_data, int) else None
    sizes: dict[int, Layer] = {}
    if isinstance(sizes_data, dict):
        for size, body in sizes_data.items():
            if not str(size).isdigit():
                raise UsageError(f"baseline {path}: 'brokers' keys are cluster sizes")
            sizes[int(size)] = _layer(path, body, whys, f"brokers {size}")
    soak = _layer(path, data["soak"], whys, "soak") if "soak" in data else Layer()
    soak.verdicts.update({k: flat.verdicts[k] for k in soak_ids})
    soak.why.update({k: v for k, v in flat.why.items() if k in soak_ids})
    note = data["soak"].get("note", "") if "soak" in data else ""
    return Expectations(
        subject=str(data.get("subject") or path.stem),
        general=general,
        lacks={str(k): whys.get(str(v), str(v)) for k, v in lacks.items()},
        sizes=sizes,
        soak=soak,
        bundles=dict(bundles),
        only_size=only_size,
        soak_note=str(note),
    )


def referenced(path: Path) -> set[str]:
    """The why values a subject's file cites (ids, or texts of its own)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    sections = [
        data,
        *data.get("brokers", {}).values(),
        *([data["soak"]] if "soak" in data else []),
    ]
    return {
        *data.get("lacks", {}).values(),
        *(w for s in sections for w in s.get("why", {}).values()),
    }


def prune_whys(folder: Path) -> list[str]:
    """Drop from `<folder>/whys.json` the whys no subject's file cites any more (an entry a run
    no longer needs took its why with it); the ids dropped."""
    whys = read_whys(folder)
    cited = set().union(*(referenced(p) for p in expectation_files(folder)))
    dropped = sorted(set(whys) - cited)
    if dropped:
        kept = {k: v for k, v in sorted(whys.items()) if k in cited}
        (folder / WHYS).write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n",
                                   encoding="utf-8")  # fmt: skip
    return dropped


def _shared_ref(text: str, whys: dict[str, str]) -> str:
    """The id of `text` in `whys`, added there if new."""
    for key, known in whys.items():
        if known == text:
            return key
    key = why_id(text)
    whys[key] = text
    return key


def write_expectations(path: Path, exp: Expectations) -> None:
    """Write a subject's file, its whys as ids into the whys.json of the folder above when it
    has one (the `<folder>/<kind>/<version>.json` layout), else as their own text."""
    whys_folder = path.parent.parent
    shared = (whys_folder / WHYS).is_file()
    whys = read_whys(whys_folder) if shared else {}

    def _ref(text: str, whys: dict[str, str]) -> str:
        return _shared_ref(text, whys) if shared else text

    def layer(body: Layer) -> dict[str, Any]:
        out: dict[str, Any] = {"verdicts": dict(sorted(body.verdicts.items()))}
        kept = {k: _ref(v, whys) for k, v in sorted(body.why.items()) if k in body.verdicts}
        if kept:
            out["why"] = kept
        return out

    doc: dict[str, Any] = {"subject": exp.subject}
    if exp.bundles:
        doc["bundles"] = dict(sorted(exp.bundles.items()))
    if exp.lacks:
        doc["lacks"] = {k: _ref(v, whys) for k, v in sorted(exp.lacks.items())}
    doc |= layer(exp.general)
    sizes = {str(n): layer(body) for n, body in sorted(exp.sizes.items()) if body.verdicts}
    if sizes:
        doc["brokers"] = sizes
    if exp.soak.verdicts:
        doc["soak"] = {**({"note": exp.soak_note} if exp.soak_note else {}), **layer(exp.soak)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if shared:
        (whys_folder / WHYS).write_text(
            json.dumps(dict(sorted(whys.items())), indent=1, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
