"""The byte tolerance is sound: real record batches of any split always land inside it.

Batches are built by kafka-python's own RecordBatch v2 builder (the format a broker's BytesIn
and log Size count), with arbitrary keys, values, timestamps and batch boundaries, uncompressed
and with every codec it has; the ledger's view (key + value bytes, record count) must bound
them. No Spark here: the bound is arithmetic and the Spark job only evaluates it.
"""

from __future__ import annotations

import os

import cramjam
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kconform.codecs.records import read_batches
from kconform.engine.volumes.model import Tolerance, quantity_of

CODECS = {"none": 0, "gzip": 1, "lz4": 3, "zstd": 4}  # kafka-python has no snappy here

record = st.tuples(
    st.one_of(st.none(), st.binary(max_size=24)),
    st.one_of(st.binary(max_size=3000), st.integers(0, 3000).map(lambda n: b"a" * n)),
    st.integers(0, 10**9),  # ms after the first record: timestampDelta up to 5 varint bytes
)


def batch_bytes(records: list[tuple[bytes | None, bytes, int]], cuts: list[int], codec: int) -> int:
    """Bytes of the batches `records` make when split before each index in `cuts`."""
    total, start = 0, 0
    for end in [*sorted(set(c for c in cuts if 0 < c < len(records))), len(records)]:
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=codec,
            is_transactional=False,
            producer_id=1,
            producer_epoch=0,
            base_sequence=start,
            batch_size=1 << 30,
        )
        for offset, (key, value, delta) in enumerate(records[start:end]):
            builder.append(
                offset, timestamp=1_800_000_000_000 + delta, key=key, value=value, headers=[]
            )
        built = bytes(builder.build())
        assert sum(b.size_in_bytes for b in read_batches(built)) == len(built)
        total, start = total + len(built), end
    return total


@given(
    records=st.lists(record, min_size=1, max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=40),
    codec=st.sampled_from(sorted(CODECS)),
)
def test_real_batches_lie_within_the_byte_bounds(
    records: list[tuple[bytes | None, bytes, int]], cuts: list[int], codec: str
) -> None:
    payload = sum(len(k or b"") + len(v) for k, v, _ in records)
    low, high = Tolerance().byte_bounds(len(records), payload, compressed=codec != "none")
    assert low <= batch_bytes(records, cuts, CODECS[codec]) <= high


def test_one_batch_per_record_reaches_the_uncompressed_top_only_with_wide_varints() -> None:
    # the top assumes every varint at its widest; a realistic worst case stays well below
    records = [(b"k" * 10, b"v" * 100, i) for i in range(50)]
    low, high = Tolerance().byte_bounds(50, 50 * 110, compressed=False)
    single = batch_bytes(records, [], 0)
    each = batch_bytes(records, list(range(50)), 0)
    assert low <= single < each <= high
    framing = [overhead(10, 100, timestamp_delta=i, offset_delta=i) for i in range(50)]
    assert single - 50 * 110 == 61 + sum(framing)  # what the interval's bottom approximates
    assert all(7 <= f <= 36 for f in framing)


def varint(value: int) -> int:
    """Bytes of a zig-zag varint, as the v2 record format writes every length and delta."""
    zigzag, size = (value << 1) ^ (value >> 63), 1
    while zigzag >= 0x80:
        zigzag, size = zigzag >> 7, size + 1
    return size


def overhead(key: int, value: int, *, timestamp_delta: int, offset_delta: int) -> int:
    """A record's framing: length, attributes, the deltas, key/value lengths, header count."""
    body = (
        1
        + varint(timestamp_delta)
        + varint(offset_delta)
        + varint(key)
        + key
        + varint(value)
        + value
        + varint(0)
    )
    return varint(body) + body - key - value


def test_snappy_growth_stays_under_the_expansion_factor() -> None:
    """Snappy's documented worst case is 32 + n + n/6; random bytes come close to n."""
    for size in (0, 1, 100, 65536, 300_000):
        data = os.urandom(size)
        compressed = len(bytes(cramjam.snappy.compress_raw(data)))
        assert compressed <= 32 + size + size / 6
        assert compressed <= Tolerance().compressed_expansion * size + 64


def test_no_records_no_bytes() -> None:
    assert Tolerance().byte_bounds(0, 0, compressed=False) == (0, 0)
    assert Tolerance().byte_bounds(0, 0, compressed=True) == (0, 0)


def test_quantities() -> None:
    assert quantity_of("kip977", "MessagesInPerSec") == "records"
    assert quantity_of("kip977", "BytesOutPerSec") == "bytes_out"
    assert quantity_of("list_offsets", "end_offset") == "records"
    assert quantity_of(
        "client_telemetry", "org.apache.kafka.producer.partition.record.success"
    ) == ("records")
    assert quantity_of("kip977", "TotalProduceRequestsPerSec") is None
    assert (
        quantity_of("client_telemetry", "org.apache.kafka.producer.record.queue.time.avg") is None
    )
