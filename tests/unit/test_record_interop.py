"""Cross-client batches: kafka-python 3.0.12 reads ours, we read kafka-python's.

kafka-python is an independent implementation of the same formats, so a batch
both sides agree on (contents, header fields, CRC) is strong evidence that the
bytes follow the protocol, not just our own reading of it.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from aiokafka.record import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
    LegacyRecordBatch,
    LegacyRecordBatchBuilder,
    MemoryRecords,
    build_control_batch,
)

with warnings.catch_warnings():
    # kafka-python's package import trips a stdlib DeprecationWarning
    # (importlib.resources.open_text) that pytest would turn into an error.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder as KafkaV2Builder
    from kafka.record.legacy_records import LegacyRecordBatchBuilder as KafkaLegacyBuilder
    from kafka.record.memory_records import MemoryRecords as KafkaMemoryRecords

V2_CODECS = [CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD]
LEGACY_CODECS = [CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4]


def _records(count: int) -> list[tuple[int, int, bytes | None, bytes | None, list[Any]]]:
    out: list[tuple[int, int, bytes | None, bytes | None, list[Any]]] = []
    for i in range(count):
        key = None if i % 4 == 0 else b"key-%d" % i
        value = None if i % 9 == 4 else (b"value-%d-" % i) * (i % 30)
        headers = [("trace", b"%d" % i), ("empty", b""), ("null", None)] if i % 5 == 1 else []
        out.append((i, 1_600_000_000_000 + i * 37, key, value, headers))
    return out


def _kafka_records(batch: Any) -> list[tuple[Any, ...]]:
    return [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in batch]


@pytest.mark.parametrize("codec", V2_CODECS)
def test_kafka_python_reads_our_v2(codec: int) -> None:
    records = _records(300)
    builder = DefaultRecordBatchBuilder(
        compression_type=codec,
        is_transactional=True,
        producer_id=123456789,
        producer_epoch=5,
        base_sequence=1000,
        batch_size=1 << 30,
    )
    for offset, ts, key, value, headers in records:
        builder.append(offset, ts, key, value, headers)
    data = bytes(builder.build())

    theirs = KafkaMemoryRecords(data)
    batch = theirs.next_batch()
    assert theirs.next_batch() is None
    assert batch.validate_crc()
    assert batch.compression_type == codec
    assert batch.is_transactional and not batch.is_control_batch
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (123456789, 5, 1000)
    assert batch.last_offset_delta == 299
    assert batch.max_timestamp == records[-1][1]
    assert _kafka_records(batch) == records


@pytest.mark.parametrize("codec", V2_CODECS)
def test_we_read_kafka_python_v2(codec: int) -> None:
    records = _records(300)
    theirs = KafkaV2Builder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=42,
        producer_epoch=1,
        base_sequence=7,
        batch_size=1 << 30,
    )
    for offset, ts, key, value, headers in records:
        assert theirs.append(offset, ts, key, value, headers) is not None
    data = bytes(theirs.build())

    (batch,) = list(MemoryRecords(data))
    assert isinstance(batch, DefaultRecordBatch)
    assert batch.validate_crc()
    assert batch.compression_type == codec
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (42, 1, 7)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in batch] == records


def test_identical_bytes_uncompressed() -> None:
    # Same records, same header fields: the uncompressed batches must be
    # byte-identical except the partition leader epoch, which Java producers
    # (and we) send as -1 and kafka-python as 0; it is outside the CRC.
    records = _records(50)
    ours = DefaultRecordBatchBuilder(compression_type=CODEC_NONE, batch_size=1 << 30)
    theirs = KafkaV2Builder(2, CODEC_NONE, False, -1, -1, -1, 1 << 30)
    for offset, ts, key, value, headers in records:
        ours.append(offset, ts, key, value, headers)
        theirs.append(offset, ts, key, value, headers)
    mine, other = bytes(ours.build()), bytes(theirs.build())
    assert mine[12:16] == b"\xff\xff\xff\xff" and other[12:16] == b"\x00\x00\x00\x00"
    assert mine[:12] + mine[16:] == other[:12] + other[16:]


@pytest.mark.parametrize("control_type", [CONTROL_ABORT, CONTROL_COMMIT])
def test_kafka_python_reads_our_control_batch(control_type: int) -> None:
    data = build_control_batch(
        control_type, producer_id=9, producer_epoch=2, coordinator_epoch=31, timestamp=5
    )
    batch = KafkaMemoryRecords(bytes(data)).next_batch()
    assert batch.is_control_batch and batch.is_transactional
    (record,) = list(batch)
    assert (record.abort, record.commit) == (
        control_type == CONTROL_ABORT,
        control_type == CONTROL_COMMIT,
    )


def _legacy_expected(
    magic: int, records: list[tuple[int, int, bytes | None, bytes | None, list[Any]]]
) -> list[tuple[int, int, bytes | None, bytes | None]]:
    return [(o, ts if magic else -1, k, v) for (o, ts, k, v, _) in records]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_we_read_kafka_python_legacy(magic: int, codec: int) -> None:
    if codec == CODEC_LZ4 and magic == 0:
        pytest.importorskip("xxhash")  # kafka-python needs it for the v0 lz4 framing
    records = [(o, ts, k, v, []) for (o, ts, k, v, _) in _records(120)]
    theirs = KafkaLegacyBuilder(magic, codec, 1 << 30)
    for offset, ts, key, value, _ in records:
        assert theirs.append(offset, ts, key, value) is not None
    data = bytearray(theirs.build())
    if codec and magic == 1:
        # A producer sends the v1 wrapper with offset 0; the broker stamps it
        # with the absolute offset of the last inner message (inner offsets
        # are relative). Do what the broker does; the CRC does not cover it.
        data[:8] = (len(records) - 1).to_bytes(8, "big")

    batches = list(MemoryRecords(data))
    assert all(isinstance(b, LegacyRecordBatch) and b.magic == magic for b in batches)
    assert len(batches) == (1 if codec else len(records))
    got = [(r.offset, r.timestamp, r.key, r.value) for b in batches for r in b]
    assert got == _legacy_expected(magic, records)
    assert all(b.validate_crc() for b in batches)
    assert all(r.headers == [] for b in batches for r in b)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_kafka_python_reads_our_legacy(magic: int, codec: int) -> None:
    records = [(o, ts, k, v, []) for (o, ts, k, v, _) in _records(120)]
    ours = LegacyRecordBatchBuilder(magic, codec, 1 << 30)
    for offset, ts, key, value, _ in records:
        assert ours.append(offset, ts, key, value) is not None
    data = bytes(ours.build())

    reader = KafkaMemoryRecords(data)
    got = []
    while (batch := reader.next_batch()) is not None:
        got.extend((r.offset, r.timestamp, r.key, r.value) for r in batch)
    expected = [(o, ts if magic else None, k, v) for (o, ts, k, v, _) in records]
    assert got == expected


def test_mixed_blob_from_both_clients() -> None:
    # A fetch response may carry old-format batches followed by v2 ones.
    legacy = KafkaLegacyBuilder(1, CODEC_GZIP, 1 << 30)
    for i in range(3):
        legacy.append(i, 1000 + i, None, b"old-%d" % i)
    v2 = DefaultRecordBatchBuilder(compression_type=CODEC_SNAPPY, base_offset=3)
    for i in range(3):
        v2.append(i, 2000 + i, b"k", b"new-%d" % i)
    old = legacy.build()
    old[:8] = (2).to_bytes(8, "big")  # the broker-assigned wrapper offset
    blob = bytes(old) + bytes(v2.build())
    values = [r.value for batch in MemoryRecords(blob) for r in batch]
    assert values == [b"old-0", b"old-1", b"old-2", b"new-0", b"new-1", b"new-2"]
    offsets = [r.offset for batch in MemoryRecords(blob) for r in batch]
    assert offsets == list(range(6))
