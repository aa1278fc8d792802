"""Legacy magic v0/v1 message sets: builder, reader, wrapper semantics, corruption."""

from __future__ import annotations

import struct
import zlib

import lz4.frame
import pytest

from aiokafka.errors import CorruptRecordError, IllegalStateError
from aiokafka.record import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    NO_TIMESTAMP_TYPE,
    LegacyRecord,
    LegacyRecordBatch,
    LegacyRecordBatchBuilder,
    MemoryRecords,
)
from aiokafka.record.compression import compress

CODECS = [CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4]


def _message(
    offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None
) -> bytes:
    """One legacy message written by hand from the protocol description."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    crc = zlib.crc32(body) & 0xFFFFFFFF
    return struct.pack(">qiI", offset, len(body) + 4, crc) + body


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", CODECS)
def test_round_trip(magic: int, codec: int) -> None:
    builder = LegacyRecordBatchBuilder(magic, codec, batch_size=1 << 20)
    expected = []
    for i in range(20):
        key = None if i % 3 == 0 else b"k%d" % i
        value = None if i % 7 == 3 else b"v" * i
        meta = builder.append(i, 1000 + i, key, value)
        assert meta is not None and meta.offset == i
        assert meta.timestamp == (1000 + i if magic else -1)
        expected.append((i, 1000 + i if magic else -1, key, value))
    batches = list(MemoryRecords(builder.build()))
    assert len(batches) == (1 if codec else 20)
    records = [r for b in batches for r in b]
    assert all(isinstance(r, LegacyRecord) for r in records)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in records] == expected
    assert all(r.headers == [] for r in records)
    assert all(r.timestamp_type == (0 if magic else NO_TIMESTAMP_TYPE) for r in records)
    tuples = [t for b in batches for t in b.record_tuples()]
    assert [t[:4] for t in tuples] == expected
    assert [t[5] for t in tuples] == [r.size_in_bytes for r in records]


def test_batch_fields() -> None:
    data = _message(41, 1, CODEC_NONE, 777, b"k", b"v")
    batch = LegacyRecordBatch(data)
    assert (batch.magic, batch.base_offset, batch.last_offset, batch.next_offset) == (1, 41, 41, 42)
    assert batch.timestamp == 777 and batch.timestamp_type == 0
    assert batch.size_in_bytes == len(data)
    assert batch.compression_type == CODEC_NONE
    assert batch.validate_crc()
    assert not batch.is_transactional and not batch.is_control_batch
    assert batch.producer_id == -1
    (record,) = batch
    assert record.checksum == batch.crc == struct.unpack_from(">I", data, 12)[0]


def test_v0_wrapper_inner_offsets_are_absolute() -> None:
    inner = b"".join(_message(10 + i, 0, 0, -1, None, b"m%d" % i) for i in range(3))
    wrapper = _message(12, 0, CODEC_GZIP, -1, None, compress(CODEC_GZIP, inner))
    assert [(r.offset, r.value) for r in LegacyRecordBatch(wrapper)] == [
        (10, b"m0"),
        (11, b"m1"),
        (12, b"m2"),
    ]


def test_v1_wrapper_inner_offsets_are_relative() -> None:
    inner = b"".join(_message(i, 1, 0, 500 + i, None, b"m%d" % i) for i in range(3))
    wrapper = _message(102, 1, CODEC_SNAPPY, 502, None, compress(CODEC_SNAPPY, inner))
    records = list(LegacyRecordBatch(wrapper))
    assert [(r.offset, r.timestamp, r.timestamp_type) for r in records] == [
        (100, 500, 0),
        (101, 501, 0),
        (102, 502, 0),
    ]


def test_v1_log_append_time_wrapper_overrides_inner_timestamps() -> None:
    inner = b"".join(_message(i, 1, 0, 500 + i, None, b"m") for i in range(3))
    wrapper = _message(2, 1, CODEC_LZ4 | 0x08, 9999, None, compress(CODEC_LZ4, inner))
    batch = LegacyRecordBatch(wrapper)
    assert batch.timestamp_type == 1
    assert [(r.timestamp, r.timestamp_type) for r in batch] == [(9999, 1)] * 3
    assert [t[1] for t in batch.record_tuples()] == [9999] * 3


def test_nested_compression_is_corrupt() -> None:
    inner_inner = _message(0, 1, 0, 0, None, b"deep")
    inner = _message(0, 1, CODEC_GZIP, 0, None, compress(CODEC_GZIP, inner_inner))
    wrapper = _message(0, 1, CODEC_GZIP, 0, None, compress(CODEC_GZIP, inner))
    with pytest.raises(CorruptRecordError, match="nests"):
        list(LegacyRecordBatch(wrapper))


@pytest.mark.parametrize(
    "value",
    [None, b"", compress(CODEC_GZIP, b"not a message set")],
    ids=["null", "empty", "garbage"],
)
def test_bad_wrapper_payloads(value: bytes | None) -> None:
    wrapper = _message(0, 1, CODEC_GZIP, 0, None, value)
    with pytest.raises(CorruptRecordError):
        list(LegacyRecordBatch(wrapper))


def test_crc_mismatch() -> None:
    data = bytearray(_message(0, 1, 0, 5, b"key", b"value"))
    data[-1] ^= 0x20
    batch = LegacyRecordBatch(data)
    assert not batch.validate_crc()
    with pytest.raises(CorruptRecordError, match="CRC"):
        list(batch)
    assert [r.value for r in LegacyRecordBatch(data, check_crc=False)] == [b"valuE"]


def test_inner_crc_mismatch() -> None:
    inner = bytearray(_message(0, 1, 0, 0, None, b"inner"))
    inner[-1] ^= 0x01
    wrapper = _message(0, 1, CODEC_GZIP, 0, None, compress(CODEC_GZIP, bytes(inner)))
    with pytest.raises(CorruptRecordError, match="CRC"):
        list(LegacyRecordBatch(wrapper))


@pytest.mark.parametrize(
    "data",
    [
        _message(0, 1, 0, 0, b"k", b"v")[:20],  # shorter than any message
        _message(0, 1, 0, 0, b"k", b"v")[:-1],  # shorter than declared
        _message(0, 3, 0, 0, b"k", b"v"),  # magic 3
        struct.pack(">qiIbb", 0, 6, 0, 0, 0) + b"\x00" * 20,  # size below minimum
    ],
)
def test_bad_messages(data: bytes) -> None:
    with pytest.raises(CorruptRecordError):
        LegacyRecordBatch(data)


@pytest.mark.parametrize(
    "fields",
    [
        struct.pack(">i", 50) + b"k" + struct.pack(">i", -1),  # key longer than message
        struct.pack(">i", -7) + struct.pack(">i", -1),  # negative length
        struct.pack(">i", -1) + struct.pack(">i", -1) + b"xx",  # trailing bytes
    ],
)
def test_bad_key_value_fields(fields: bytes) -> None:
    body = struct.pack(">bbq", 1, 0, 0) + fields
    data = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    with pytest.raises(CorruptRecordError):
        list(LegacyRecordBatch(data))


def test_builder_rules() -> None:
    with pytest.raises(ValueError):
        LegacyRecordBatchBuilder(2)
    with pytest.raises(ValueError):
        LegacyRecordBatchBuilder(1, CODEC_ZSTD)
    builder = LegacyRecordBatchBuilder(1, batch_size=60)
    with pytest.raises(ValueError, match="headers"):
        builder.append(0, 0, None, b"v", [("h", b"x")])
    assert builder.append(0, 0, None, b"v" * 100) is not None  # first always fits
    assert builder.append(1, 0, None, b"v") is None
    with pytest.raises(ValueError, match="offset"):
        builder.append(0, 0, None, b"v")
    builder.build()
    with pytest.raises(IllegalStateError):
        builder.append(2, 0, None, b"v")


def test_v0_lz4_is_written_and_read_with_the_broken_checksum() -> None:
    builder = LegacyRecordBatchBuilder(0, CODEC_LZ4)
    builder.append(0, None, None, b"eight-oh")
    data = builder.build()
    assert [r.value for r in LegacyRecordBatch(data)] == [b"eight-oh"]
    # The wrapper value (after crc, magic, attributes, null key, value length)
    # is an lz4 frame that standard decoders reject for its header checksum.
    frame = bytes(data[12 + 4 + 2 + 4 + 4 :])
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(frame)
