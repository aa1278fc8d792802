"""MemoryRecords: batch iteration over a Fetch ``records`` blob."""

from __future__ import annotations

import struct

import pytest

from aiokafka.errors import CorruptRecordError
from aiokafka.record import (
    CODEC_GZIP,
    CODEC_NONE,
    CODEC_ZSTD,
    DefaultRecordBatchBuilder,
    LegacyRecordBatchBuilder,
    MemoryRecords,
)


def _v2(base_offset: int, count: int, codec: int = CODEC_NONE) -> bytes:
    builder = DefaultRecordBatchBuilder(compression_type=codec, base_offset=base_offset)
    for i in range(count):
        builder.append(i, 1000 + i, b"k%d" % (base_offset + i), b"v%d" % (base_offset + i))
    return bytes(builder.build())


def _blob() -> bytes:
    return _v2(0, 3) + _v2(3, 2, CODEC_GZIP) + _v2(5, 4, CODEC_ZSTD)


def _offsets(records: MemoryRecords) -> list[int]:
    return [r.offset for batch in records for r in batch]


def test_iterates_all_batches() -> None:
    blob = _blob()
    records = MemoryRecords(blob)
    assert records.size_in_bytes() == len(blob)
    batches = list(records)
    assert [b.base_offset for b in batches] == [0, 3, 5]
    assert [b.records_count for b in batches] == [3, 2, 4]
    assert sum(b.size_in_bytes for b in batches) == len(blob)
    assert _offsets(MemoryRecords(blob)) == list(range(9))
    assert records.valid_bytes() == len(blob)


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview], ids=lambda t: t.__name__)
def test_accepts_bytes_like(wrap: type) -> None:
    assert _offsets(MemoryRecords(wrap(_blob()))) == list(range(9))


def test_batches_are_views_not_copies() -> None:
    blob = bytearray(_blob())
    batches = list(MemoryRecords(blob))
    assert batches[-1].validate_crc()
    blob[-1] ^= 0xFF  # visible through the batch: it shares the buffer
    assert not batches[-1].validate_crc()
    assert batches[0].validate_crc()


def test_next_batch_and_has_next() -> None:
    records = MemoryRecords(_blob())
    seen = []
    while records.has_next():
        assert records.has_next()  # idempotent
        batch = records.next_batch()
        assert batch is not None
        seen.append(batch.base_offset)
    assert seen == [0, 3, 5]
    assert records.next_batch() is None
    assert not records.has_next()


@pytest.mark.parametrize("data", [b"", None])
def test_empty_blob(data: bytes | None) -> None:
    records = MemoryRecords(data)
    assert not records.has_next()
    assert records.next_batch() is None
    assert list(records) == []
    assert records.size_in_bytes() == 0


def test_every_partial_trailing_batch_is_skipped() -> None:
    first = _v2(0, 3)
    last = _v2(3, 5, CODEC_GZIP)
    for cut in range(len(last)):
        records = MemoryRecords(first + last[:cut])
        assert _offsets(records) == [0, 1, 2], cut
        assert records.valid_bytes() == len(first)


def test_partial_legacy_trailing_message_is_skipped() -> None:
    builder = LegacyRecordBatchBuilder(1, CODEC_NONE)
    for i in range(3):
        builder.append(i, 0, None, b"value")
    blob = bytes(builder.build())
    assert _offsets(MemoryRecords(blob[:-1])) == [0, 1]


def test_records_are_decoded_lazily() -> None:
    # A batch with broken records still iterates as a batch; the error comes
    # only when its records are decoded.
    good = _v2(0, 2)
    bad = bytearray(_v2(2, 2))
    bad[-5:] = b"\xff" * 5
    batches = list(MemoryRecords(good + bytes(bad)))
    assert len(batches) == 2
    assert [r.offset for r in batches[0]] == [0, 1]
    with pytest.raises(CorruptRecordError):
        batches[1].record_tuples()


def test_check_crc_is_passed_to_batches() -> None:
    blob = bytearray(_v2(0, 1))
    blob[-2] ^= 0x01  # inside the value
    with pytest.raises(CorruptRecordError, match="CRC"):
        _offsets(MemoryRecords(blob))
    assert _offsets(MemoryRecords(blob, check_crc=False)) == [0]


def test_max_decompressed_size_is_passed_to_batches() -> None:
    builder = DefaultRecordBatchBuilder(compression_type=CODEC_GZIP, batch_size=1 << 30)
    builder.append(0, 0, None, bytes(100_000))
    blob = bytes(builder.build())
    with pytest.raises(CorruptRecordError, match="limit"):
        _offsets(MemoryRecords(blob, max_decompressed_size=50_000))


def test_unknown_magic() -> None:
    blob = bytearray(_v2(0, 1))
    blob[16] = 7
    with pytest.raises(CorruptRecordError, match="magic"):
        list(MemoryRecords(blob))


@pytest.mark.parametrize("length", [-1, 0, 48])
def test_impossible_length(length: int) -> None:
    blob = bytearray(_v2(0, 1))
    struct.pack_into(">i", blob, 8, length)
    with pytest.raises(CorruptRecordError, match="length"):
        list(MemoryRecords(blob))
