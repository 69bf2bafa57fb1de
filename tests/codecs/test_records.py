"""Record batch headers: counts the volume checks rely on, read without decompressing."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kconform.codecs.messages import ProduceRequest
from kconform.codecs.records import (
    BATCH_HEADER_SIZE,
    LegacyEntry,
    RecordBatchHeader,
    produce_volumes,
    read_batches,
)
from kconform.codecs.wire import DecodeError


def batch(records: int, value_size: int = 10, compression: int = 0, base_offset: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=compression, is_transactional=False, producer_id=7,
        producer_epoch=1, base_sequence=0, batch_size=1 << 20,
    )  # fmt: skip
    for i in range(records):
        builder.append(
            i, timestamp=1_700_000_000_000 + i, key=None, value=b"v" * value_size, headers=[]
        )
    data = bytearray(builder.build())
    data[0:8] = base_offset.to_bytes(8, "big")  # the base offset is not covered by the CRC
    return bytes(data)


def test_header_fields_and_size() -> None:
    data = batch(5)
    (header,) = read_batches(data)
    assert isinstance(header, RecordBatchHeader)
    assert BATCH_HEADER_SIZE == 61
    assert header.records_count == 5 and header.last_offset_delta == 4
    assert header.size_in_bytes == len(data)
    assert header.producer_id == 7 and header.crc_valid
    assert header.compression_type == 0 and not header.is_transactional


# snappy (2) is left out: kafka-python builds snappy batches only with python-snappy installed.
@pytest.mark.parametrize("compression", [1, 3, 4])
def test_compressed_batches_are_counted_without_inflating(compression: int) -> None:
    (header,) = read_batches(batch(50, value_size=100, compression=compression))
    assert isinstance(header, RecordBatchHeader)
    assert header.records_count == 50 and header.compression_type == compression


def test_corrupted_crc_is_flagged_not_fatal() -> None:
    data = bytearray(batch(3))
    data[-1] ^= 0xFF
    (header,) = read_batches(bytes(data))
    assert isinstance(header, RecordBatchHeader) and not header.crc_valid


def test_partial_trailing_batch_is_skipped() -> None:
    data = batch(3) + batch(4)[:-10]
    assert [h.records_count for h in read_batches(data) if isinstance(h, RecordBatchHeader)] == [3]


def test_negative_length_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="negative batch length"):
        list(read_batches(b"\x00" * 8 + b"\xff\xff\xff\xfe" + b"\x00" * 60))


def test_legacy_message_sets_count_one_per_entry() -> None:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(3):
        builder.append(i, timestamp=1, key=None, value=b"x")
    entries = list(read_batches(bytes(builder.build())))
    assert len(entries) == 3 and all(isinstance(e, LegacyEntry) and e.magic == 1 for e in entries)


@pytest.mark.parametrize("version", [3, 8, 9, 12])
def test_produce_volumes_per_partition(version: int) -> None:
    P = ProduceRequest
    request = P(
        acks=-1, timeout_ms=1000,
        topic_data=[P.TopicProduceData(name="orders", partition_data=[
            P.PartitionProduceData(index=0, records=batch(3) + batch(2)),
            P.PartitionProduceData(index=1, records=batch(7, value_size=50)),
        ])],
    )  # fmt: skip
    decoded = P.decode(request.encode(version), version)
    volumes = {(v.topic, v.partition): v for v in produce_volumes(decoded)}
    assert volumes["orders", 0].records == 5 and volumes["orders", 0].batches == 2
    assert volumes["orders", 0].bytes == len(batch(3)) + len(batch(2))
    assert volumes["orders", 1].records == 7
