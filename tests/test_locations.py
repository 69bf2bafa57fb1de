"""Where kconform finds its data and keeps its caches (kconform.locations), in a checkout and as
an installed wheel would: the README's promises, one function each."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform import locations
from kconform.engine.fuzz import corpus
from kconform.engine.fuzz.budget import CORPUS_ENV
from kconform.fixtures import lockfiles
from kconform.fixtures.targets import kafka_dist

ROOT = Path(__file__).resolve().parents[1]


def test_the_data_folders_are_the_packages_folders() -> None:
    assert locations.baselines() == ROOT / "baselines"
    assert locations.fuzz_regressions() == ROOT / "suites" / "fuzz" / "regressions"
    assert locations.checkout() == ROOT  # this test runs from the editable checkout


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"KCONFORM_CACHE": "/k", "XDG_CACHE_HOME": "/x"}, Path("/k")),
        ({"XDG_CACHE_HOME": "/x"}, Path("/x/kconform")),
        ({}, Path.home() / ".cache" / "kconform"),
    ],
)
def test_the_cache_is_kconform_cache_else_xdg_else_home(
    env: dict[str, str], expected: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("KCONFORM_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert locations.cache_root() == kafka_dist.cache_root() == expected


def test_an_installed_kconform_keeps_fuzz_findings_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The committed corpus is written only from a checkout; installed, it is site-packages."""
    monkeypatch.delenv(CORPUS_ENV, raising=False)
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path))
    assert corpus.corpus_root("apache:4.4.0") == locations.fuzz_regressions()
    monkeypatch.setattr(locations, "checkout", lambda: None)
    assert corpus.corpus_root("apache:4.4.0") == tmp_path / "fuzz-regressions"


def test_an_installed_kconform_writes_dependency_locks_to_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kconform clients lock` wrote into site-packages when installed and $KCONFORM_LOCKFILES
    was unset; a checkout still writes the committed folder."""
    monkeypatch.delenv(lockfiles.SEARCH_ENV, raising=False)
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path))
    assert lockfiles.write_root() == lockfiles.COMMITTED
    monkeypatch.setattr(locations, "checkout", lambda: None)
    assert lockfiles.write_root() == tmp_path / "lockfiles"
    assert lockfiles.search_path() == [tmp_path / "lockfiles", lockfiles.COMMITTED]
