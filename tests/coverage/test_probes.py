"""Probe accounting for the coverage-guided fuzzer (fixtures/coverage/probes.py): which probes
of a dump are new, the union at a moment, and the union written back as an `.exec` that
`wire.split_blocks` (and so `jacococli`) reads as the same probes."""

from __future__ import annotations

import json

from kconform.fixtures.coverage import wire
from kconform.fixtures.coverage.probes import ProbeUnion
from tests.coverage.test_wire import class_block, session_block

MANAGER = "org/apache/kafka/server/ClientMetricsManager"
APIS = "kafka/server/KafkaApis"


def dump(*classes: tuple[int, str, list[bool]]) -> tuple[wire.ClassProbes, ...]:
    data = wire.HEADER + session_block("apache-node-1")
    for class_id, name, probes in classes:
        data += class_block(class_id, name, probes)
    return wire.split_blocks(data).classes


def bits(*hit: int, size: int = 12) -> list[bool]:
    return [i in hit for i in range(size)]


def test_only_probes_no_earlier_dump_set_are_new() -> None:
    union = ProbeUnion()
    assert union.add(dump((-5, MANAGER, bits(0, 2))), at=1.0) == 2
    assert union.add(dump((-5, MANAGER, bits(0, 2))), at=2.0) == 0  # the same probes again
    assert union.add(dump((-5, MANAGER, bits(2, 3)), (7, APIS, bits(1))), at=3.0) == 2
    assert union.add(dump((-5, MANAGER, bits())), at=4.0) == 0  # a dump with nothing set
    assert union.count == 4
    assert [(e.at, e.name, e.probe) for e in union.first] == [
        (1.0, MANAGER, 0), (1.0, MANAGER, 2), (3.0, MANAGER, 3), (3.0, APIS, 1),
    ]  # fmt: skip


def test_a_class_id_is_its_own_class() -> None:
    """Two releases' ClientMetricsManager differ in their CRC64: their probes never merge."""
    union = ProbeUnion()
    union.add(dump((-5, MANAGER, bits(0))), at=1.0)
    assert union.add(dump((-6, MANAGER, bits(0))), at=2.0) == 1


def test_union_at_a_moment() -> None:
    union = ProbeUnion()
    union.add(dump((-5, MANAGER, bits(0))), at=10.0)
    union.add(dump((-5, MANAGER, bits(1, 5))), at=70.0)
    assert union.until(9.9).count == 0
    assert union.until(10.0).count == 1
    assert union.until(69.0).count == 1 and union.until(300.0).count == 3


def test_exec_written_back_reads_as_the_same_probes() -> None:
    union = ProbeUnion()
    big = 2**64 - 5  # as split_blocks reads a negative id: unsigned
    union.add([wire.ClassProbes(big, MANAGER, tuple(bits(0, 11, size=200)))], at=1.0)
    union.add(dump((7, APIS, bits(3, size=4))), at=1.0)
    union.add([wire.ClassProbes(big, MANAGER, tuple(bits(130, size=200)))], at=2.0)
    blocks = wire.split_blocks(union.to_exec())
    assert blocks.sessions == ("kconform-fuzz",)
    read = {(c.class_id, c.name): c.probes for c in blocks.classes}
    assert read[(2**64 - 5, MANAGER)] == tuple(bits(0, 11, 130, size=200))  # 2-byte varint
    assert read[(7, APIS)] == tuple(bits(3, size=4))
    # what a cut leaves out is absent from its exec too
    early = {c.name: c.hit for c in wire.split_blocks(union.until(1.5).to_exec()).classes}
    assert early == {MANAGER: 2, APIS: 1}


def test_json_round_trip_and_merge_keep_first_times() -> None:
    a, b = ProbeUnion(), ProbeUnion()
    a.add(dump((-5, MANAGER, bits(0, 1))), at=5.0)
    b.add(dump((-5, MANAGER, bits(1, 2))), at=3.0)
    again = ProbeUnion.from_json(json.loads(json.dumps(a.to_json())))
    assert again.seen == a.seen and again.sizes == a.sizes and again.first == a.first
    merged = ProbeUnion.merged([again, b])
    assert merged.count == 3
    # probe 1 was first set by b, at 3.0: the merged run reached it then
    assert merged.until(4.0).count == 2 and merged.until(5.0).count == 3
