"""The regression corpus: where fuzz findings are kept, and how later runs get them back.

Two forms of every finding, both under one root (`suites/fuzz/regressions/` by default):

- `hypothesis-db/<case id>/<target>/`: Hypothesis' own example database. Every later run of the
  case on that target replays what is there before generating anything new (the "reuse" phase).
  One per target, because Hypothesis drops an entry that no longer fails: a reference run must
  not erase what the librdkafka mock still fails on.
- `<case id>-<target>-<hash>.txt`: the readable report of the shrunk finding (request described
  field by field plus hex, or the step-by-step trace). Request cases also store the input as one
  JSON line, which later runs replay as an explicit `@example`, so a finding survives changes to
  the test code that would orphan the database entry.

Self-test runs against `reference:<mutant>` targets find violations on purpose; their findings go
to a temporary directory, never into the committed corpus. `KCONFORM_FUZZ_CORPUS` moves the root
(the mutant self-test points it at a fresh directory, so each run must find the mutant anew).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase

from kconform import locations
from kconform.engine.fuzz.budget import CORPUS_ENV
from kconform.fixtures.targets.registry import mutants_of

COMMITTED = locations.fuzz_regressions()
"""The corpus in the repository, next to the fuzz cases (suites/fuzz/regressions): findings on
real targets, replayed by every run. Installed, the same folder is package data of
kconform.suites.fuzz."""
REPLAY_PREFIX = "replay: "
"""Marks the machine-readable line of a trace file."""


def is_selftest(target_name: str) -> bool:
    """A target with mutants switched on breaks rules on purpose: its findings are not bugs."""
    return bool(mutants_of(target_name))


def corpus_root(target_name: str) -> Path:
    """Where this target's findings go (see the module docstring). An installed (not editable)
    kconform keeps them in the user's cache: site-packages is no place to write to."""
    override = os.environ.get(CORPUS_ENV)
    if override:
        return Path(override)
    if is_selftest(target_name):
        return Path(tempfile.gettempdir()) / "kconform-fuzz-selftest"
    if locations.checkout() is None:
        return locations.cache_root() / "fuzz-regressions"
    return COMMITTED


def database(root: Path, case_id: str, target_name: str) -> DirectoryBasedExampleDatabase:
    """The Hypothesis database of one case on one target (per case: the inner test functions
    of different cases look alike to Hypothesis; per target: see the module docstring)."""
    return DirectoryBasedExampleDatabase(root / "hypothesis-db" / case_id / _slug(target_name))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", text)


def save_trace(
    root: Path, case_id: str, target_name: str, text: str, replay: dict[str, Any] | None = None
) -> Path:
    """Write the readable report of a finding (and its replay line); returns the path.

    The name hashes the finding (the input, or the deviation a trace ends in, without its clock
    readings, ids and ports), so the same finding saved by two runs is one file.
    """
    body = text.rstrip() + "\n"
    identity = _stable(_deviation(text))
    if replay is not None:
        identity = json.dumps(replay, sort_keys=True)
        body += REPLAY_PREFIX + identity + "\n"
    digest = hashlib.sha256(identity.encode()).hexdigest()[:10]
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{case_id}-{_slug(target_name)}-{digest}.txt"
    if not path.exists():  # the first record stays: a rerun's timings must not dirty a checkout
        path.write_text(body, encoding="utf-8")
    return path


MISMATCH = "MISMATCH"
"""Marks the step of a stateful trace where the target and the model differ."""


def _deviation(trace: str) -> str:
    """What a stateful finding is, apart from the steps that led to it: the answer at the step
    that differed, what the model expected, and the rule or known deviation it names (its name
    only: the prose around it is edited over time). Shrinking ends in a different short trace
    on almost every run against a real broker; one deviation is still one finding, and a
    committed corpus must not grow by a file per run. A trace with no such step is its own
    identity."""
    lines = [line.strip() for line in trace.splitlines()]
    for index, line in enumerate(lines):
        if MISMATCH in line:
            rule = next((r for r in lines[index + 1 :] if r.startswith("rule:")), "")
            return "\n".join([line.split("->", 1)[-1].strip(), rule.split(" (", 1)[0]])
    return trace


_VOLATILE = (
    re.compile(r"\+\d+ ms"),  # clock readings in a trace
    re.compile(r"\d+ ms later"),  # how long a subscription change took to arrive
    re.compile(r"\([A-Za-z0-9_-]{6}…\)"),  # the random part of a ClientInstanceId
    re.compile(r"f?z-[A-Za-z0-9_-]+"),  # per-run client ids, subscription names, match values
    re.compile(r"\d+ B OTLP"),  # payload sizes, which vary with the timestamps inside
    re.compile(r"127\.0\.0\.1:\d+"),  # ports
)


def _stable(text: str) -> str:
    for pattern in _VOLATILE:
        text = pattern.sub("", text)
    return text


def replays(root: Path, case_id: str) -> list[dict[str, Any]]:
    """The replay lines of every trace file this case saved, on any target, oldest first."""
    found = []
    paths = sorted(root.glob(f"{case_id}-*.txt"), key=lambda p: (p.stat().st_mtime, p.name))
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(REPLAY_PREFIX):
                try:
                    found.append(json.loads(line[len(REPLAY_PREFIX) :]))
                except json.JSONDecodeError:
                    continue  # a hand-edited file: its readable part still documents the bug
    return found
