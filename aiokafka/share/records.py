"""Share-consumer records and the decoding of one ShareFetch partition (no asyncio).

Records are decoded by the consumer's own batch decoder; only the records inside this
member's acquired ranges are kept (a batch may also hold records acquired by others).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiokafka.consumer.record_decode import decode_batch, deserialize
from aiokafka.record import MemoryRecords
from aiokafka.record.default_records import DefaultRecordBatch
from aiokafka.structs import KT, VT, ConsumerRecord, TopicPartition

if TYPE_CHECKING:
    from aiokafka.protocol.messages import AcquiredRecords


@dataclass(slots=True)
class ShareConsumerRecord(ConsumerRecord[KT, VT]):
    """A record delivered to a share-group member: every field of
    :class:`~aiokafka.structs.ConsumerRecord` plus ``delivery_count``.

    Attributes:
        delivery_count: How many times the broker has delivered this record (1 the
            first time; it grows each time the record is released or its
            acquisition lock runs out).
    """

    delivery_count: int = 1


def acquired_records(
    tp: TopicPartition,
    data: bytes | bytearray | memoryview | None,
    acquired: list[AcquiredRecords],
    key_deserializer: Callable[[bytes], object] | None,
    value_deserializer: Callable[[bytes], object] | None,
) -> tuple[list[ShareConsumerRecord[Any, Any]], list[int]]:
    """The acquired records of one partition, and the acquired offsets with no record
    (to acknowledge as gaps).

    Raises:
        aiokafka.errors.CorruptRecordError: a batch fails its checks.
    """
    counts: dict[int, int] = {}
    for span in acquired:
        for offset in range(span.first_offset, span.last_offset + 1):
            counts[offset] = span.delivery_count
    out: list[ShareConsumerRecord[Any, Any]] = []
    if data:
        for batch in MemoryRecords(data):
            if not isinstance(batch, DefaultRecordBatch) or batch.is_control_batch:
                continue
            recs = decode_batch(batch, tp.topic, tp.partition)
            kept = [r for r in recs if r.offset in counts]
            if key_deserializer is not None or value_deserializer is not None:
                deserialize(kept, key_deserializer, value_deserializer)
            for r in kept:
                out.append(
                    ShareConsumerRecord(
                        r.topic,
                        r.partition,
                        r.offset,
                        r.timestamp,
                        r.timestamp_type,
                        r.key,
                        r.value,
                        r.checksum,
                        r.serialized_key_size,
                        r.serialized_value_size,
                        r.headers,
                        r.leader_epoch,
                        counts[r.offset],
                    )
                )
    seen = {r.offset for r in out}
    gaps = [o for o in counts if o not in seen]
    return out, gaps
