"""pytest plugin for the mutation self-test: on a `reference:<mutant>` target, only the cases
that claim the mutant's rule run. Only they can kill or detect it (tests/suites/test_mutants.py
counts nothing else), so the other cases' runs against each mutant were time spent on nothing."""

from __future__ import annotations

import pytest

from kconform.engine.model import CaseInfo
from kconform.fixtures.reference.mutants import MUTANTS
from kconform.plugin.items import case_info, subject_label


def claimed(info: CaseInfo, target_label: str) -> bool:
    """Whether a case on this target can catch what the target's mutants break (a pristine
    target: every case)."""
    kind, _, names = target_label.partition(":")
    if kind != "reference" or not names:
        return True
    return any(MUTANTS[name].rule in info.rules for name in names.split("+"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        info = case_info(item)
        if info is None or claimed(info, subject_label(item)):
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
