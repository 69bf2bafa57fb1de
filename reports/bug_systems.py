"""Which subjects speak for a system of the bug record, and whether a bug covers one: what the
bug page (reports/bugs.py) and the expectations (reports/expectations.py) both ask."""

from __future__ import annotations

import re
from collections.abc import Mapping

from kconform.fixtures.targets.registry import target_kinds
from kconform.rules import Known
from kconform.rules.bugs import Version, affected_ranges, split_who

__all__ = ["BUNDLED", "CLIENT_KINDS", "SUBJECT_KINDS", "affects", "release_of", "split_subject"]

CLIENT_KINDS: dict[str, tuple[str, ...]] = {
    "Java client": ("java",),
    "librdkafka": (
        "confluent-kafka",
        "confluent-kafka-go",
        "confluent-kafka-javascript",
        "rdkafka",
    ),
    "confluent-kafka-python": ("confluent-kafka",),
    "franz-go": ("franz-go",),
    "Sarama": ("sarama",),
    "confluent-kafka-javascript": ("confluent-kafka-javascript",),
}
"""The client kinds whose baselines speak for a system."""


def _subject_kinds() -> dict[str, tuple[str, ...]]:
    """The target kinds running a system's broker code (`TargetKind.implements`), then the
    client kinds (`CLIENT_KINDS`)."""
    systems: dict[str, tuple[str, ...]] = {}
    for kind in target_kinds():
        if kind.implements:
            systems[kind.implements] = (*systems.get(kind.implements, ()), kind.name)
    return systems | CLIENT_KINDS


SUBJECT_KINDS = _subject_kinds()
"""The subject kinds whose baselines speak for a system; a system missing has no driver."""
BUNDLED = {"librdkafka": "librdkafka"}
"""Systems run inside another's subjects, whose release the subject's name does not give: the
library's name in a baseline's `bundles`, which gives it."""


def release_of(text: str) -> Version | None:
    """A release as a version: "v2.5.0" -> (2, 5, 0), "2.16" -> (2, 16, 0); None if not one."""
    if not re.fullmatch(r"v?\d+(\.\d+)*", text):
        return None
    numbers = tuple(int(n) for n in text.lstrip("v").split("."))
    return numbers + (0,) * (3 - len(numbers))


def split_subject(subject: str) -> tuple[str, Version | None]:
    """(kind, release) of a subject: "apache:3.7.0" -> ("apache", (3, 7, 0)); "confluent-kafka"
    (the installed package) -> ("confluent-kafka", None)."""
    parts = re.split(r"[:@]", subject, maxsplit=1)
    return parts[0], release_of(parts[1]) if len(parts) == 2 else None


def affects(bug: Known, subject: str, bundles: Mapping[str, str]) -> bool:
    """Whether `bug` is known to affect `subject`: a subject of its system, whose release (its
    own, or the bundled library's its baseline records) the affected releases cover."""
    system, affected = split_who(bug.who)
    kind, version = split_subject(subject)
    if kind not in SUBJECT_KINDS.get(system, ()):
        return False
    library = BUNDLED.get(system, "")
    if library:
        version = release_of(bundles.get(library, ""))
    ranges = affected_ranges(affected)
    return (
        ranges is not None and version is not None and any(lo <= version <= hi for lo, hi in ranges)
    )
