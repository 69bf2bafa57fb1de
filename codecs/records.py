"""Record batch headers: how many records and bytes a Produce or Fetch carries per partition.

The volume checks (KIP-977 meters, end offsets) need counts, not record contents, so only the
61-byte RecordBatch v2 header is read (`DefaultRecordBatch` layout); compressed records are never
inflated. Legacy message sets (magic 0/1) are counted one entry per message; a compressed
legacy wrapper hides its inner count, which `LegacyEntry.wrapper` flags.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import crc32c

from kconform.codecs.wire import DecodeError

__all__ = [
    "BATCH_HEADER_SIZE",
    "LegacyEntry",
    "PartitionVolume",
    "RecordBatchHeader",
    "produce_volumes",
    "read_batches",
]

_BATCH = struct.Struct(">qiibIhiqqqhii")
BATCH_HEADER_SIZE = _BATCH.size  # 61
_LOG_OVERHEAD = 12  # baseOffset int64 + batchLength int32
_CRC_START = 21  # attributes onwards is covered by the CRC32C
_LEGACY = struct.Struct(">qiIbb")


@dataclass(frozen=True)
class RecordBatchHeader:
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    crc_valid: bool

    @property
    def size_in_bytes(self) -> int:
        """Bytes the batch occupies in the log (what a broker's BytesIn/Size counts)."""
        return _LOG_OVERHEAD + self.batch_length

    @property
    def compression_type(self) -> int:
        return self.attributes & 0x07

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & 0x10)


@dataclass(frozen=True)
class LegacyEntry:
    offset: int
    size_in_bytes: int
    magic: int
    wrapper: bool  # compressed: the count of inner messages is not read


def read_batches(
    records: bytes | memoryview | None,
) -> Iterator[RecordBatchHeader | LegacyEntry]:
    """Batch headers in a `records` field. A partial batch at the end (Fetch may return one) is
    skipped, as Kafka's consumer does; a malformed header raises DecodeError."""
    if not records:
        return
    buf = records if isinstance(records, memoryview) else memoryview(records)
    pos, end = 0, len(buf)
    while end - pos >= _LOG_OVERHEAD:
        base_offset, length = struct.unpack_from(">qi", buf, pos)
        if length < 0:
            raise DecodeError(f"negative batch length {length}", offset=pos + 8, path=("Records",))
        if pos + _LOG_OVERHEAD + length > end:
            return  # partial trailing batch
        if end - pos < 17:
            raise DecodeError("batch too short for its magic byte", offset=pos, path=("Records",))
        magic = buf[pos + 16]
        if magic >= 2:
            if length + _LOG_OVERHEAD < BATCH_HEADER_SIZE:
                raise DecodeError(
                    f"batch length {length} shorter than a v2 header", offset=pos + 8,
                    path=("Records",),
                )  # fmt: skip
            (_, _, epoch, _, crc, attributes, last_delta, base_ts, max_ts, producer_id,
             producer_epoch, base_sequence, count) = _BATCH.unpack_from(buf, pos)  # fmt: skip
            batch_end = pos + _LOG_OVERHEAD + length
            yield RecordBatchHeader(
                base_offset, length, epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
                producer_id, producer_epoch, base_sequence, count,
                crc_valid=crc32c.crc32c(buf[pos + _CRC_START : batch_end]) == crc,
            )  # fmt: skip
        else:
            _, _, _, legacy_magic, attributes = _LEGACY.unpack_from(buf, pos)
            yield LegacyEntry(
                base_offset, _LOG_OVERHEAD + length, legacy_magic, bool(attributes & 7)
            )
        pos += _LOG_OVERHEAD + length


@dataclass(frozen=True)
class PartitionVolume:
    topic: str  # the name, or the topic id's Kafka string form for Produce v13+
    partition: int
    records: int
    bytes: int
    batches: int


def produce_volumes(request: object) -> list[PartitionVolume]:
    """Records and bytes per partition carried by a decoded ProduceRequest (any version)."""
    from kconform.codecs.wire import ZERO_UUID, kafka_uuid_str

    volumes: list[PartitionVolume] = []
    for topic in getattr(request, "topic_data", []):
        topic_id = getattr(topic, "topic_id", ZERO_UUID)
        name = topic.name or (kafka_uuid_str(topic_id) if topic_id != ZERO_UUID else "")
        for partition in topic.partition_data:
            records = nbytes = batches = 0
            for batch in read_batches(partition.records):
                batches += 1
                nbytes += batch.size_in_bytes
                if isinstance(batch, RecordBatchHeader):
                    records += batch.records_count
                else:
                    records += 1
            volumes.append(PartitionVolume(name, partition.index, records, nbytes, batches))
    return volumes
