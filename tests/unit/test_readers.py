"""aiokafka._readers.slot_reader: a read-only, documented view of one slot."""

from __future__ import annotations

import pytest

from aiokafka._readers import slot_reader
from aiokafka.record.default_builder import DefaultRecordBatchBuilder
from aiokafka.record.default_records import DefaultRecordBatch


class _Point:
    __slots__ = ("_x",)

    x = slot_reader("_x", int, "The x coordinate.")

    def __init__(self, x: int) -> None:
        self._x = x


def test_reads_the_slot_and_follows_it() -> None:
    point = _Point(3)
    assert point.x == 3
    point._x = 4
    assert point.x == 4


def test_is_read_only_and_documented() -> None:
    point = _Point(3)
    with pytest.raises(AttributeError):
        point.x = 5  # type: ignore[misc]
    assert isinstance(vars(_Point)["x"], property)
    assert _Point.x.__doc__ == "The x coordinate."


def test_record_classes_expose_their_header_fields() -> None:
    builder = DefaultRecordBatchBuilder(producer_id=7, producer_epoch=2, base_sequence=5)
    assert (builder.producer_id, builder.producer_epoch, builder.base_sequence) == (7, 2, 5)
    builder.append(0, 1000, b"k", b"v")
    assert builder.record_count == 1
    batch = DefaultRecordBatch(bytes(builder.build()))
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (7, 2, 5)
    assert (batch.base_offset, batch.records_count, batch.first_timestamp) == (0, 1, 1000)
    assert batch.max_timestamp == 1000
    assert batch.crc == int.from_bytes(bytes(builder.build())[17:21], "big")
    assert DefaultRecordBatch.producer_id.__doc__
