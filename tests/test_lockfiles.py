"""Every subject the Makefile builds has its committed lock: `make test`'s client gate
(`GATE_CLIENTS`) and `make matrix` (`MATRIX_CLIENTS`) build only from locks, so a version added
there without `kconform clients lock` would be a skipped subject, not a judged one.

Generic over kinds: any kind that declares `lock` (Go, Cargo, pip, npm, Maven...) is checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kconform.fixtures import lockfiles
from kconform.fixtures.clients import parse_clients
from kconform.fixtures.clients.registry import lockers

MAKEFILE = Path(__file__).parents[1] / "Makefile"
LISTS = ("GATE_CLIENTS", "MATRIX_CLIENTS")


def make_list(text: str, name: str) -> list[str]:
    """The words of a Makefile variable assigned with `?=`, `:=` or `=`, backslash lines
    joined."""
    joined = text.replace("\\\n", " ")
    match = re.search(rf"^{name}\s*[?:]?=(.*)$", joined, re.MULTILINE)
    if match is None:
        raise LookupError(f"the Makefile assigns no {name}")
    return match.group(1).split()


def test_make_list_joins_continued_lines() -> None:
    text = "A ?= x@1 \\\n  y@2\nGATE_CLIENTS ?= a@1 b@v2 \\\n  c@3\nB = z\n"
    assert make_list(text, "GATE_CLIENTS") == ["a@1", "b@v2", "c@3"]
    with pytest.raises(LookupError):
        make_list(text, "MATRIX_CLIENTS")


def _subjects() -> list[str]:
    text = MAKEFILE.read_text()
    return sorted({s for name in LISTS for s in make_list(text, name)})


def test_the_makefile_lists_the_subjects_it_builds() -> None:
    subjects = _subjects()
    assert "franz-go@v1.22.3" in subjects and "confluent-kafka@2.16.1" in subjects
    assert all("@" in s for s in subjects)


@pytest.mark.parametrize("subject", _subjects())
def test_each_built_subject_has_a_committed_lock(
    subject: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(lockfiles.SEARCH_ENV, raising=False)  # a user's folder does not count
    (spec,) = parse_clients(subject)
    # every kind the Makefile builds from a registry locks it: one that cannot is a build
    # that would resolve on the day, so it fails here rather than being skipped
    assert spec.kind in lockers(), f"{spec.kind} declares no `lock`"
    folder = lockfiles.find(spec.kind, spec.version)
    assert folder.is_relative_to(lockfiles.COMMITTED)
    assert all(p.stat().st_size > 0 for p in lockfiles.files(folder)), folder
