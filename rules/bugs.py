"""The bug record's vocabulary (issue 31): public KIP-511 / KIP-714 bugs and deviations of the
brokers and clients kconform can run, each a `Known` with a `bug` id.

A bug that breaks a rule of the book is filed on that rule's `known`, beside the rule it breaks,
and names the case meant to catch it. A bug no rule covers yet is here, in `AWAITING_RULE`, with
the rule id it proposes: a rule is only added with a case that judges it.

`who` is "<system> <affected releases>", the system one of `SYSTEMS`. The releases are a
comma-separated list of terms that `affected_ranges` reads: "3.7.0", "3.7.0-3.9.x" (".x": every
patch release of that line), "2.5.0+" (that release and later) or "up to v1.19.0"; a system
kconform does not run may say it in words ("builds since commit 7f436c34").
"""

from __future__ import annotations

import re

from kconform.errors import HarnessDefect
from kconform.rules.model import Known


class BadBugRecord(HarnessDefect, ValueError):
    """A bug of the record that the rule book declares wrongly."""


__all__ = ["AWAITING_RULE", "SYSTEMS", "Version", "affected_ranges", "split_who"]

SYSTEMS = (
    "Apache",  # the broker
    "Java client",
    "librdkafka",
    "confluent-kafka-python",
    "confluent-kafka-javascript",
    "confluent-kafka-dotnet",
    "franz-go",
    "Sarama",
    "Redpanda Console",
)

Version = tuple[int, ...]
_ANY = 10**9  # ".x", "+": every later release
_VERSION = r"v?\d+\.\d+(?:\.(?:\d+|x))?"
_TERM = re.compile(
    rf"^(?:(?P<lo>{_VERSION})(?:-(?P<hi>{_VERSION})|(?P<plus>\+))?|up to (?P<upto>{_VERSION}))$"
)


def split_who(who: str) -> tuple[str, str]:
    """(system, affected releases) of a bug's `who`; HarnessDefect (a ValueError too) if no
    system of `SYSTEMS` starts it: the rule book itself is wrong."""
    for system in sorted(SYSTEMS, key=len, reverse=True):
        if who.startswith(system + " "):
            return system, who[len(system) + 1 :].strip()
    raise BadBugRecord(f"{who!r} does not start with a system of the bug record")


def _version(text: str, top: bool) -> Version:
    parts = text.lstrip("v").split(".")
    numbers = [(_ANY if top else 0) if p == "x" else int(p) for p in parts]
    return tuple(numbers + [_ANY if top else 0] * (3 - len(numbers)))


def affected_ranges(affected: str) -> list[tuple[Version, Version]] | None:
    """The affected releases as inclusive (lowest, highest) version ranges, or None when they
    are not written as version terms."""
    ranges: list[tuple[Version, Version]] = []
    for term in (t.strip() for t in affected.split(",")):
        match = _TERM.match(term)
        if match is None:
            return None
        if match["upto"]:
            ranges.append(((0, 0, 0), _version(match["upto"], top=True)))
        elif match["plus"]:
            ranges.append((_version(match["lo"], top=False), (_ANY, _ANY, _ANY)))
        else:
            top = match["hi"] or match["lo"]
            ranges.append((_version(match["lo"], top=False), _version(top, top=True)))
    return ranges


_NOT_ON_WIRE = "shows only as an exception inside the client; nothing distinct reaches the wire"

AWAITING_RULE: tuple[Known, ...] = (
    Known("Java client 3.7.0-3.9.x", "with the new consumer (group.protocol=consumer), a "
          "Terminating push scheduled once the reporter is TERMINATED makes the background "
          "thread throw IllegalStateException during close", "KAFKA-17040 (apache/kafka#18143)",
          bug="java-new-consumer-telemetry-after-terminated", fixed_in="4.0.0",
          uncaught=_NOT_ON_WIRE, rule="kip714.client.close.clean"),
    Known("librdkafka 2.6.0-2.10.1", "the poll idle ratio is worked out per client instead of "
          "per queue, so it is wrong once queues are forwarded",
          "librdkafka CHANGELOG v2.11.0 (issue #5109, PR #5017)", bug="rdk-poll-idle-ratio-wrong",
          fixed_in="2.11.0", rule="kip714.client.payload.values_plausible",
          uncaught="the ratio goes wrong only while the application polls a per-partition queue "
          "taken off the consumer queue (rd_kafka_queue_get_partition, as Rust rdkafka's "
          "split_partition_queue does), and no driver kconform ships polls one; such a driver "
          "would need the rule proposed here first"),
)  # fmt: skip
"""Bugs no rule of the book covers yet, each with the rule it proposes."""
