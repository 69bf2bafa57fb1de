"""pytest plugin for the mutation self-test: on a `reference:<mutant>` target, only the cases
that claim the mutant's rule run. Only they can kill or detect it (tests/suites/test_mutants.py
counts nothing else), so the other cases' runs against each mutant were time spent on nothing."""

from __future__ import annotations

import pytest

from kconform.engine.model import CaseInfo
from kconform.fixtures.reference.mutants import MUTANTS


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
        marker = item.get_closest_marker("kconform_case")
        spec = getattr(item, "callspec", None)
        target = spec.params.get("target") if spec is not None else None
        if marker is None or target is None:
            keep.append(item)
        else:
            (keep if claimed(marker.args[0], str(target.label)) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
