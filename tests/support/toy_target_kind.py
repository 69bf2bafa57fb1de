"""A toy target kind, declared in this one file and nowhere else (tests/test_kinds.py).

`toy_broker` is the reference broker under another name, one node by default. It joins the
shipped kinds only through `KCONFORM_KINDS=toy_target_kind`.
"""

from __future__ import annotations

from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.targets.kind import Row, TargetKind, TargetSpec


def _create(spec: TargetSpec) -> BrokerTarget:
    from kconform.fixtures.targets.reference import ReferenceTarget

    target = ReferenceTarget(brokers=spec.brokers)
    target.name = "toy_broker"  # the results' subject
    return target


def _availability() -> list[Row]:
    return [("toy_broker", True, "the reference broker under a toy name")]


KIND = TargetKind(
    name="toy_broker",
    syntax="toy_broker",
    summary="the reference broker under a toy name",
    create=_create,
    availability=_availability,
    default_brokers=1,
    embedded=True,
)
