"""Magic v2 record batches: builder and reader round trips, header fields, control batches."""

from __future__ import annotations

import struct

import pytest

from aiokafka.errors import CorruptRecordError, IllegalStateError
from aiokafka.record import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    ControlRecord,
    DefaultRecord,
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
    build_control_batch,
)
from aiokafka.record.default_records import HEADER_SIZE, parse_control_key
from aiokafka.record.util import size_of_varint

CODECS = [CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD]

# (key, value, headers) shapes every round trip covers.
SHAPES = [
    (b"key", b"value", []),
    (None, b"value", []),
    (b"key", None, []),
    (None, None, []),
    (b"", b"", []),
    (b"k", b"v" * 300, [("h1", b"x"), ("h2", None), ("", b""), ("ключ", b"\x00\xff")]),
    (b"k" * 70, b"v" * 9000, [("big", b"y" * 200)]),
]


def _build(
    codec: int, records: list[tuple[int, int, bytes | None, bytes | None, list]], **kwargs: object
) -> bytearray:
    builder = DefaultRecordBatchBuilder(compression_type=codec, batch_size=1 << 30, **kwargs)
    for offset, timestamp, key, value, headers in records:
        assert builder.append(offset, timestamp, key, value, headers) is not None
    return builder.build()


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_round_trip_shapes(codec: int, shape: int) -> None:
    key, value, headers = SHAPES[shape]
    records = [(i, 1_700_000_000_000 + i * 7, key, value, headers) for i in range(5)]
    data = _build(codec, records)
    batch = DefaultRecordBatch(bytes(data))
    assert batch.compression_type == codec
    assert batch.records_count == 5
    assert batch.validate_crc()
    got = list(batch)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in got] == records
    assert all(type(r) is DefaultRecord and r.timestamp_type == 0 for r in got)
    assert all(r.checksum is None for r in got)
    assert [t[:5] for t in batch.record_tuples()] == records


@pytest.mark.parametrize("codec", CODECS)
def test_many_records_exercise_multibyte_varints(codec: int) -> None:
    # Offsets past 63 and timestamp deltas past 63 and large negative deltas
    # take the two-byte and general varint paths of the decoder.
    records = []
    for i in range(3000):
        ts = 1_700_000_000_000 + (i * 1009 if i % 2 else -i * 100_003)
        records.append((i, ts, b"%d" % i, b"x" * (i % 200), []))
    batch = DefaultRecordBatch(_build(codec, records))
    assert [t[:5] for t in batch.record_tuples()] == records
    assert batch.first_timestamp == records[0][1]
    assert batch.max_timestamp == max(r[1] for r in records)
    assert batch.last_offset_delta == 2999
    assert batch.next_offset == 3000


def test_offset_gaps_and_base_offset() -> None:
    records = [(0, 10, b"a", b"1", []), (5, 11, b"b", b"2", []), (900, 9, b"c", b"3", [])]
    batch = DefaultRecordBatch(_build(CODEC_NONE, records, base_offset=1000))
    assert [r.offset for r in batch] == [1000, 1005, 1900]
    assert batch.base_offset == 1000
    assert batch.last_offset == 1900
    assert batch.max_timestamp == 11
    assert batch.first_timestamp == 10


def test_header_fields_and_producer_state() -> None:
    builder = DefaultRecordBatchBuilder(
        compression_type=CODEC_LZ4,
        is_transactional=True,
        producer_id=77,
        producer_epoch=3,
        base_sequence=10,
        batch_size=1024,
    )
    for i in range(4):
        builder.append(i, 1000 + i, None, b"v", None)
    batch = DefaultRecordBatch(builder.build())
    assert batch.magic == 2
    assert batch.is_transactional and not batch.is_control_batch
    assert batch.producer_id == 77 and batch.has_producer_id
    assert batch.producer_epoch == 3
    assert batch.base_sequence == 10 and batch.has_sequence
    assert batch.last_sequence == 13
    assert batch.partition_leader_epoch == -1
    assert batch.timestamp_type == 0
    assert not batch.has_delete_horizon and batch.delete_horizon_ms is None

    # Producer state changes before a rebuild (a retry with a new epoch);
    # only the header and CRC change.
    builder.set_producer_state(78, 4, 2_147_483_646)
    rebuilt = DefaultRecordBatch(builder.build())
    assert (rebuilt.producer_id, rebuilt.producer_epoch, rebuilt.base_sequence) == (
        78,
        4,
        2**31 - 2,
    )
    assert rebuilt.last_sequence == 1  # wraps at 2**31
    assert rebuilt.validate_crc()
    assert [r.value for r in rebuilt] == [b"v"] * 4


def test_defaults_mean_no_producer() -> None:
    builder = DefaultRecordBatchBuilder()
    builder.append(0, 1, b"k", b"v")
    batch = DefaultRecordBatch(builder.build())
    assert batch.producer_id == -1 and not batch.has_producer_id
    assert batch.base_sequence == -1 and not batch.has_sequence
    assert batch.last_sequence == -1
    assert not batch.is_transactional


def test_build_is_repeatable() -> None:
    for codec in CODECS:
        builder = DefaultRecordBatchBuilder(compression_type=codec)
        for i in range(10):
            builder.append(i, 1000, b"k", b"value %d" % i, [("h", b"1")])
        first = bytes(builder.build())
        second = bytes(builder.build())
        assert first == second, codec


def test_append_after_build_is_refused() -> None:
    builder = DefaultRecordBatchBuilder()
    builder.append(0, 1, None, b"v")
    builder.build()
    with pytest.raises(IllegalStateError):
        builder.append(1, 1, None, b"v")


def test_batch_full_returns_none_but_first_record_always_fits() -> None:
    builder = DefaultRecordBatchBuilder(batch_size=100)
    meta = builder.append(0, 5, None, b"x" * 500, None)
    assert meta is not None
    assert meta.offset == 0 and meta.timestamp == 5 and meta.crc is None
    assert meta.size == builder.size_in_bytes() - HEADER_SIZE
    assert builder.append(1, 5, None, b"y", None) is None
    assert builder.record_count == 1
    assert [r.value for r in DefaultRecordBatch(builder.build())] == [b"x" * 500]


def test_batch_size_limit_is_respected() -> None:
    builder = DefaultRecordBatchBuilder(batch_size=1000)
    accepted = 0
    while builder.append(accepted, 0, b"key", b"v" * 40, None) is not None:
        accepted += 1
    assert builder.size_in_bytes() <= 1000
    assert builder.size_in_bytes() + 50 > 1000  # the refused record would not fit
    assert len(list(DefaultRecordBatch(builder.build()))) == accepted


def test_metadata_size_sums_to_buffer() -> None:
    builder = DefaultRecordBatchBuilder()
    total = 0
    for i, (key, value, headers) in enumerate(SHAPES):
        meta = builder.append(i, 1000 + i, key, value, headers)
        assert meta is not None
        total += meta.size
    assert total + HEADER_SIZE == builder.size_in_bytes()
    sizes = [r.size_in_bytes for r in DefaultRecordBatch(builder.build())]
    assert sum(sizes) == total


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_size_estimators_are_upper_bounds(shape: int) -> None:
    key, value, headers = SHAPES[shape]
    builder = DefaultRecordBatchBuilder()
    builder.append(0, 0, b"first", b"x", None)
    meta = builder.append(2**31 - 2, 2**40, key, value, headers)  # worst-case deltas
    assert meta is not None
    assert meta.size <= DefaultRecordBatchBuilder.size_of(key, value, headers)
    single = DefaultRecordBatchBuilder()
    single.append(0, 0, key, value, headers)
    assert len(single.build()) <= DefaultRecordBatchBuilder.estimate_size_in_bytes(
        key, value, headers
    )


@pytest.mark.parametrize("length", [0, 1, 63, 64, 65, 8191, 8192, 8193, 2**20])
def test_size_of_inlined_varints_match_size_of_varint(length: int) -> None:
    # size_of() counts the length varints of keys and values below 8192 bytes inline.
    data = b"x" * length
    expected = 1 + 10 + 5 + 1 + 2 * (size_of_varint(length) + length)  # + no headers
    assert DefaultRecordBatchBuilder.size_of(data, data) == 5 + expected
    assert DefaultRecordBatchBuilder.size_of(None, data) == 5 + expected - length - (
        size_of_varint(length) - 1
    )


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("transactional", [False, True])
def test_empty_like_builds_what_the_constructor_builds(codec: int, transactional: bool) -> None:
    template = DefaultRecordBatchBuilder(
        2, codec, transactional, batch_size=0, compression_level=None
    )
    made = DefaultRecordBatchBuilder(2, codec, transactional, batch_size=500)
    copied = template.empty_like(500)
    for builder in (made, copied):
        for i, (key, value, headers) in enumerate(SHAPES[:5]):
            assert builder.append(i, 1000 + i, key, value, headers) is not None
        builder.set_producer_state(7, 1, 42)
    assert copied.size_limit == made.size_limit
    assert bytes(copied.build()) == bytes(made.build())
    assert template.record_count == 0 and template.producer_id == -1


def test_empty_like_never_copies_the_control_bit() -> None:
    template = DefaultRecordBatchBuilder(is_transactional=True)
    template._mark_control()
    copied = template.empty_like(100)
    copied.append(0, 0, b"k", b"v", None)
    assert not DefaultRecordBatch(copied.build()).is_control_batch


def test_none_timestamp_means_now() -> None:
    import time

    before = time.time_ns() // 1_000_000
    builder = DefaultRecordBatchBuilder()
    meta = builder.append(0, None, None, b"v")
    after = time.time_ns() // 1_000_000
    assert meta is not None and before <= meta.timestamp <= after
    (record,) = DefaultRecordBatch(builder.build())
    assert record.timestamp == meta.timestamp


def test_bytes_like_inputs_are_accepted() -> None:
    builder = DefaultRecordBatchBuilder()
    builder.append(0, 1, bytearray(b"k"), memoryview(b"v"), [("h", bytearray(b"x"))])
    (record,) = DefaultRecordBatch(builder.build())
    assert (record.key, record.value, record.headers) == (b"k", b"v", [("h", b"x")])


@pytest.mark.parametrize(
    ("key", "value", "headers"),
    [
        ("text", b"v", None),
        (b"k", 42, None),
        (b"k", b"v", [(b"bytes-key", b"x")]),
        (b"k", b"v", [("h", "text")]),
        (b"k", b"v", [("only-key",)]),
    ],
)
def test_bad_field_types_raise_without_side_effects(
    key: object, value: object, headers: object
) -> None:
    builder = DefaultRecordBatchBuilder()
    builder.append(0, 1, b"ok", b"ok")
    size = builder.size_in_bytes()
    with pytest.raises(TypeError):
        builder.append(1, 1, key, value, headers)  # type: ignore[arg-type]
    assert builder.size_in_bytes() == size
    assert builder.record_count == 1
    builder.append(1, 1, b"next", b"next")
    assert [r.key for r in DefaultRecordBatch(builder.build())] == [b"ok", b"next"]


def test_offsets_must_increase() -> None:
    builder = DefaultRecordBatchBuilder()
    builder.append(3, 1, None, b"v")
    with pytest.raises(ValueError, match="offset"):
        builder.append(3, 1, None, b"v")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"magic": 1},
        {"compression_type": 9},
        {"compression_type": "gzip"},
        {"batch_size": -1},
        {"timestamp_type": 2},
    ],
)
def test_constructor_validation(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        DefaultRecordBatchBuilder(**kwargs)  # type: ignore[arg-type]


def test_log_append_time_uses_max_timestamp() -> None:
    records = [(i, 100 + i, None, b"v", []) for i in range(3)]
    data = _build(CODEC_NONE, records, timestamp_type=1)
    batch = DefaultRecordBatch(data)
    assert batch.timestamp_type == 1
    assert [(r.timestamp, r.timestamp_type) for r in batch] == [(102, 1)] * 3
    assert [t[1] for t in batch.record_tuples()] == [102] * 3


def test_delete_horizon_bit() -> None:
    data = bytearray(_build(CODEC_NONE, [(0, 5000, b"k", None, [])]))
    attributes = struct.unpack_from(">h", data, 21)[0] | 0x40
    struct.pack_into(">h", data, 21, attributes)
    batch = DefaultRecordBatch(data, check_crc=False)
    assert batch.has_delete_horizon
    assert batch.delete_horizon_ms == 5000


@pytest.mark.parametrize(
    ("control_type", "abort", "commit"),
    [(CONTROL_ABORT, True, False), (CONTROL_COMMIT, False, True)],
)
def test_control_batches(control_type: int, abort: bool, commit: bool) -> None:
    data = build_control_batch(
        control_type,
        producer_id=4242,
        producer_epoch=7,
        coordinator_epoch=12,
        timestamp=999,
        base_offset=55,
    )
    batch = DefaultRecordBatch(data)
    assert batch.is_control_batch and batch.is_transactional
    assert batch.producer_id == 4242 and batch.producer_epoch == 7
    (record,) = list(batch)
    assert isinstance(record, ControlRecord)
    assert record.offset == 55 and record.timestamp == 999
    assert (record.abort, record.commit) == (abort, commit)
    assert record.type == control_type and record.version == 0
    assert record.coordinator_epoch == 12
    assert record.key == struct.pack(">hh", 0, control_type)
    assert record.value == struct.pack(">hi", 0, 12)


def test_control_record_with_short_key_is_corrupt() -> None:
    record = ControlRecord(0, 0, 0, b"\x00", None, [], 10)
    with pytest.raises(CorruptRecordError):
        _ = record.type
    short_value = ControlRecord(0, 0, 0, struct.pack(">hh", 0, 1), b"\x00", [], 10)
    with pytest.raises(CorruptRecordError):
        _ = short_value.coordinator_epoch
    other = ControlRecord(0, 0, 0, struct.pack(">hh", 0, 2), b"anything", [], 10)
    assert other.type == 2 and other.coordinator_epoch is None
    assert not other.abort and not other.commit


def test_parse_control_key_leaves_short_keys_to_the_caller() -> None:
    # ControlRecord raises for these (above); the consumer's abort filter treats them
    # as "not an ABORT marker".
    assert parse_control_key(None) is None
    assert parse_control_key(b"\x00\x00\x00") is None
    assert parse_control_key(struct.pack(">hhi", 1, 5, 0)) == (1, 5)


def test_control_type_validation() -> None:
    with pytest.raises(ValueError):
        build_control_batch(5, producer_id=1, producer_epoch=0, coordinator_epoch=0)


def test_empty_batch_builds_and_reads() -> None:
    batch = DefaultRecordBatch(DefaultRecordBatchBuilder().build())
    assert batch.records_count == 0
    assert list(batch) == []


def test_longer_buffer_is_cut_to_declared_length() -> None:
    data = bytes(_build(CODEC_NONE, [(0, 1, b"k", b"v", [])]))
    batch = DefaultRecordBatch(data + b"trailing garbage")
    assert batch.size_in_bytes == len(data)
    assert [r.key for r in batch] == [b"k"]


def test_crc_mismatch_raises_unless_disabled() -> None:
    data = bytearray(_build(CODEC_NONE, [(0, 1, b"k", b"value", [])]))
    data[-3] ^= 0x01  # inside the value
    batch = DefaultRecordBatch(data)
    assert not batch.validate_crc()
    with pytest.raises(CorruptRecordError, match="CRC"):
        list(batch)
    (record,) = DefaultRecordBatch(data, check_crc=False)
    assert record.value != b"value"


def test_construction_parses_only_the_header() -> None:
    # Garbage records do not fail construction; the batch is decoded lazily.
    data = bytearray(_build(CODEC_NONE, [(0, 1, b"k", b"v", [])]))
    data[HEADER_SIZE:] = b"\xff" * (len(data) - HEADER_SIZE)
    batch = DefaultRecordBatch(data, check_crc=False)
    assert batch.records_count == 1
    with pytest.raises(CorruptRecordError):
        batch.record_tuples()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d[:40], "at least"),
        (lambda d: d[:16] + b"\x01" + d[17:], "magic"),
        (lambda d: d[:8] + struct.pack(">i", 10) + d[12:], "length"),
        (lambda d: d[:8] + struct.pack(">i", len(d)) + d[12:], "declares"),
        (lambda d: d[:57] + struct.pack(">i", -1) + d[61:], "negative"),
    ],
)
def test_bad_headers_raise(mutate: object, message: str) -> None:
    data = bytes(_build(CODEC_NONE, [(0, 1, b"k", b"v", [])]))
    with pytest.raises(CorruptRecordError, match=message):
        DefaultRecordBatch(mutate(data))  # type: ignore[operator]


def _with_records(records: bytes, count: int) -> bytes:
    """A valid header around hand-written record bytes."""
    header = bytearray(_build(CODEC_NONE, [])[:HEADER_SIZE])
    struct.pack_into(">i", header, 8, HEADER_SIZE - 12 + len(records))
    struct.pack_into(">i", header, 57, count)
    return bytes(header) + records


# length 8: attributes 0, timestamp delta 0, offset delta 0, key "k", value "v", no headers
VALID_RECORD = b"\x10\x00\x00\x00\x02k\x02v\x00"


@pytest.mark.parametrize(
    ("records", "count"),
    [
        (b"", 1),  # fewer records than declared
        (VALID_RECORD, 2),  # second record missing
        (VALID_RECORD + b"\x00", 1),  # trailing byte after the records
        (b"\x12" + VALID_RECORD[1:], 1),  # record length too large
        (b"\x0e" + VALID_RECORD[1:], 1),  # record length too small
        (b"\x7f" + VALID_RECORD[1:], 1),  # negative record length
        (b"\x10\x00\x00\x00\x05\x02v\x00", 1),  # key length -3
        (b"\x10\x00\x00\x00\x02k\x05\x00", 1),  # value length -3
        (b"\x10\x00\x00\x00\x02k\x02v\x04", 1),  # 2 headers, none present
        (b"\x16\x00\x00\x00\x02k\x02v\x02\x02\xff\x01", 1),  # header key not UTF-8
        (b"\x10\x00\x00\x00\x02k\x02v\x01", 1),  # negative header count
        (b"\x10\x00" + b"\xff" * 11 + b"\x00", 1),  # varint longer than 10 bytes
        (b"\x10\x00\x00\x00\x82\x80\x80\x80\x80\x80\x01", 1),  # huge key length
        (VALID_RECORD[:-1], 1),  # cut inside the record
    ],
)
def test_malformed_records_raise_corrupt(records: bytes, count: int) -> None:
    batch = DefaultRecordBatch(_with_records(records, count), check_crc=False)
    with pytest.raises(CorruptRecordError):
        batch.record_tuples()


def test_hand_written_record_decodes() -> None:
    batch = DefaultRecordBatch(_with_records(VALID_RECORD * 2, 2), check_crc=False)
    # The empty builder's header has base timestamp -1 (no records yet).
    assert batch.record_tuples() == [(0, -1, b"k", b"v", [], 9)] * 2


@pytest.mark.parametrize(
    ("offset", "timestamp"),
    [(2**31, 0), (-1, 0), (0, 2**63), (0, -(2**63) - 1)],
)
def test_out_of_range_append_arguments(offset: int, timestamp: int) -> None:
    builder = DefaultRecordBatchBuilder()
    with pytest.raises(ValueError, match=r"offset|timestamp"):
        builder.append(offset, timestamp, None, b"v")
    assert builder.record_count == 0


def test_bytes_subclass_is_accepted() -> None:
    class Payload(bytes):
        pass

    builder = DefaultRecordBatchBuilder()
    builder.append(0, 0, Payload(b"k"), Payload(b"v"))
    (record,) = DefaultRecordBatch(builder.build())
    assert (record.key, record.value) == (b"k", b"v")


@pytest.mark.parametrize(
    ("producer_id", "producer_epoch", "base_sequence", "name"),
    [(2**63, 0, 0, "producer_id"), (1, 2**15, 0, "producer_epoch"), (1, 0, 2**31, "base_sequence")],
)
def test_producer_state_ranges(
    producer_id: int, producer_epoch: int, base_sequence: int, name: str
) -> None:
    with pytest.raises(ValueError, match=name):
        DefaultRecordBatchBuilder(
            producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence
        )
    builder = DefaultRecordBatchBuilder()
    with pytest.raises(ValueError, match=name):
        builder.set_producer_state(producer_id, producer_epoch, base_sequence)
