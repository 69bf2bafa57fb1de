"""What a collected pytest item is about: the conformance case it runs and the target or client
it runs against. Also for plugins that select cases, such as the mutation self-test's."""

from __future__ import annotations

import pytest

from kconform.engine.model import CaseInfo

__all__ = ["case_info", "subject_label"]


def case_info(item: pytest.Item) -> CaseInfo | None:
    """The conformance case an item runs (None for a harness test)."""
    marker = item.get_closest_marker("kconform_case")
    return marker.args[0] if marker is not None else None


def subject_label(item: pytest.Item) -> str:
    """The target or client label an item runs against ("" for harness tests)."""
    spec = getattr(item, "callspec", None)
    for name in ("target", "client"):
        if spec is not None and name in spec.params:
            return str(spec.params[name].label)
    return ""
