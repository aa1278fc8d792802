"""The optional C record decoder (``aiokafka/record/_cdecode.c``) against the Python loops.

The C function returns the records, or ``None`` to hand the batch to the Python loop
(which then returns the records or raises). So for every input: when C returns records,
the Python loop returns the same records (same types, field for field); when the
Python loop raises, C returned ``None``; and ``decode_batch`` / ``record_tuples`` give
the same records or raise the same error whichever path is switched on. Inputs:
Hypothesis-generated batches, hand-made edge cases, and mutated records sections.
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiokafka.consumer import record_decode
from aiokafka.consumer.record_decode import decode_batch, decode_records_py
from aiokafka.errors import CorruptRecordError
from aiokafka.record import CODEC_GZIP, CODEC_NONE, default_records
from aiokafka.record.default_builder import DefaultRecordBatchBuilder, build_control_batch
from aiokafka.record.default_records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    DefaultRecordBatch,
    decode_records,
)
from aiokafka.record.util import calc_crc32c, encode_varint
from aiokafka.structs import ConsumerRecord

try:
    from aiokafka.record import _cdecode
except ImportError:  # no compiler when the package was installed
    _cdecode = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(
    _cdecode is None,
    reason="aiokafka.record._cdecode was not built (no C compiler at install time); "
    "the pure-Python decoder is covered by test_consumer_records.py and test_record_v2.py",
)

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
TOPIC, PARTITION = "topic", 3


def _fields(rec: ConsumerRecord[Any, Any]) -> tuple[Any, ...]:
    # Types too: bytes not bytearray, the headers a tuple of tuples.
    values = (
        rec.topic, rec.partition, rec.offset, rec.timestamp, rec.timestamp_type, rec.key,
        rec.value, rec.checksum, rec.serialized_key_size, rec.serialized_value_size,
        rec.headers, rec.leader_epoch,
    )  # fmt: skip
    headers = tuple((type(h), tuple(type(x) for x in h)) for h in rec.headers)
    return (type(rec), values, tuple(type(v) for v in values), headers)


def _outcome(fn: Callable[[], list[Any]]) -> tuple[str, Any]:
    try:
        return ("ok", fn())
    except Exception as exc:
        return ("error", (type(exc), str(exc)))


def _compare_section(
    data: bytes,
    count: int,
    base_offset: int = 1000,
    base_ts: int = 1_700_000_000_000,
    append_time: int | None = None,
    epoch: int | None = 7,
    untracked: bool = False,
) -> tuple[str, Any]:
    """Both decoders on one records section, both record shapes; the Python result."""
    ts_type = 0 if append_time is None else 1
    args = (data, count, base_offset, base_ts, append_time, TOPIC, PARTITION, ts_type, epoch)
    py = _outcome(lambda: decode_records_py(*args))
    c = _cdecode.decode_records(*args, ConsumerRecord, untracked)
    if c is None:
        pass  # the Python loop would run
    else:
        assert py[0] == "ok", f"C decoded what Python rejects: {py[1]}"
        assert [_fields(r) for r in c] == [_fields(r) for r in py[1]]
    # The record layer's tuples (the other shape the C loop builds).
    tuple_args = (data, count, base_offset, base_ts, None, *[None] * 5)
    py_t = _outcome(lambda: decode_records(*tuple_args))
    c_t = _cdecode.decode_records(*tuple_args, False)
    assert (py_t[0] == "ok") == (py[0] == "ok")
    if c_t is not None:
        assert py_t[0] == "ok"
        assert c_t == py_t[1]
        assert [tuple(map(type, t)) for t in c_t] == [tuple(map(type, t)) for t in py_t[1]]
        assert [[tuple(map(type, h)) for h in t[4]] for t in c_t] == [
            [tuple(map(type, h)) for h in t[4]] for t in py_t[1]
        ]
    return py


def _both_paths(batch_bytes: bytes) -> list[Any]:
    """decode_batch and record_tuples with the whole-batch C call on, with only the C
    records loop, then all Python: same outcome."""
    results = []
    for c_batch, c_records in ((True, True), (False, True), (False, False)):
        saved = (
            record_decode._c_decode_records,
            default_records._c_decode_records,
            default_records._c_decode_batch,
        )
        fn = _cdecode.decode_records if c_records else None
        record_decode._c_decode_records = fn
        default_records._c_decode_records = fn
        default_records._c_decode_batch = _cdecode.decode_batch if c_batch else None
        try:
            recs = _outcome(
                lambda: [
                    _fields(r) for r in decode_batch(DefaultRecordBatch(batch_bytes), TOPIC, 0)
                ]
            )
            tuples = _outcome(lambda: DefaultRecordBatch(batch_bytes).record_tuples())
            results.append((recs, tuples))
        finally:
            (
                record_decode._c_decode_records,
                default_records._c_decode_records,
                default_records._c_decode_batch,
            ) = saved
    assert results[0] == results[1] == results[2]
    return results[0]


# ------------------------------------------------------------------- generated batches

_bytes_or_none = st.one_of(
    st.none(),
    st.binary(max_size=80),
    st.sampled_from([b"", b"x" * 63, b"y" * 64, b"z" * 8191, b"w" * 8192, b"v" * 20000]),
)
_header = st.tuples(st.text(max_size=12), st.one_of(st.none(), st.binary(max_size=20)))
_record = st.tuples(
    st.integers(-(1 << 40), 1 << 40),  # timestamp delta
    _bytes_or_none,
    _bytes_or_none,
    st.one_of(st.just([]), st.lists(_header, max_size=4)),
)


@settings(max_examples=300, deadline=None)
@given(
    records=st.lists(_record, min_size=1, max_size=40),
    base_offset=st.sampled_from([0, 1, 1 << 31, (1 << 62), INT64_MAX - 3_000_000]),
    offset_gap=st.integers(1, 70_000),
    first_ts=st.sampled_from([0, 1_700_000_000_000, -1, 1 << 50]),
    ts_type=st.sampled_from([0, 1]),
    codec=st.sampled_from([CODEC_NONE, CODEC_GZIP]),
    epoch=st.sampled_from([-1, 0, 5, (1 << 31) - 1]),
)
def test_generated_batches(
    records: list[Any],
    base_offset: int,
    offset_gap: int,
    first_ts: int,
    ts_type: int,
    codec: int,
    epoch: int,
) -> None:
    b = DefaultRecordBatchBuilder(
        compression_type=codec, base_offset=base_offset, batch_size=1 << 26, timestamp_type=ts_type
    )
    for i, (delta, key, value, headers) in enumerate(records):
        b.append(i * offset_gap, timestamp=first_ts + delta, key=key, value=value,
                 headers=headers)  # fmt: skip
    data = bytearray(b.build())
    struct.pack_into(">i", data, 12, epoch)  # partitionLeaderEpoch (not under the CRC)
    recs, tuples = _both_paths(bytes(data))
    assert recs[0] == "ok" and len(recs[1]) == len(records)
    assert tuples[0] == "ok" and len(tuples[1]) == len(records)
    batch = DefaultRecordBatch(bytes(data))
    # And the C loop itself returned them (no silent fallback on well-formed data).
    append_time = batch.max_timestamp if ts_type else None
    got = _cdecode.decode_records(
        batch.records_data(), batch.records_count, batch.base_offset, batch.first_timestamp,
        append_time, TOPIC, PARTITION, ts_type, None if epoch < 0 else epoch, ConsumerRecord,
        True,
    )  # fmt: skip
    assert got is not None and len(got) == len(records)
    _compare_section(
        batch.records_data(), batch.records_count, batch.base_offset, batch.first_timestamp,
        append_time,
    )  # fmt: skip


def test_control_batches() -> None:
    for control_type in (CONTROL_ABORT, CONTROL_COMMIT):
        data = bytes(build_control_batch(control_type, base_offset=77, producer_id=9,
                                         producer_epoch=1, coordinator_epoch=3))  # fmt: skip
        recs, tuples = _both_paths(data)
        assert recs[0] == "ok" and len(recs[1]) == 1
        assert tuples[0] == "ok"


# ------------------------------------------------------------------- hand-made records


def _raw(
    length: int | None = None,
    ts: bytes | None = None,
    off: bytes | None = None,
    key: bytes | None = None,
    value: bytes | None = None,
    headers: bytes = b"\x00",
) -> bytes:
    """One record's bytes, each field given raw (default: a small valid record)."""
    body = (
        b"\x00"
        + (encode_varint(5) if ts is None else ts)
        + (encode_varint(0) if off is None else off)
        + (encode_varint(1) + b"k" if key is None else key)
        + (encode_varint(1) + b"v" if value is None else value)
        + headers
    )
    return (encode_varint(len(body)) if length is None else encode_varint(length)) + body


def _hdrs(*pairs: tuple[bytes, bytes]) -> bytes:
    return encode_varint(len(pairs)) + b"".join(k + v for k, v in pairs)


def _ten_byte(value: int) -> bytes:
    """``value`` as a 10-byte varint (non-minimal when small)."""
    z = ((value << 1) ^ (value >> 63)) & ((1 << 64) - 1)
    out = bytearray()
    for _ in range(9):
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


EDGE_CASES: list[tuple[str, bytes, int]] = [
    ("empty", b"", 0),
    ("negative count, no data", b"", -3),
    ("negative count, data", _raw(), -1),
    ("count too big", _raw(), 2),
    ("count huge", _raw(), (1 << 31) - 1),
    ("trailing byte", _raw() + b"\x00", 1),
    ("null key and value", _raw(key=b"\x01", value=b"\x01"), 1),
    ("empty key and value", _raw(key=b"\x00", value=b"\x00"), 1),
    ("-1 key as two bytes", _raw(key=b"\x81\x00"), 1),
    ("-1 value as two bytes", _raw(value=b"\x81\x00"), 1),
    ("-2 key", _raw(key=b"\x03"), 1),
    ("-2 value", _raw(value=b"\x03"), 1),
    ("non-minimal key length", _raw(key=b"\x82\x00k"), 1),
    ("non-minimal value length", _raw(value=b"\x82\x80\x00v"), 1),
    ("10-byte timestamp delta", _raw(ts=_ten_byte(-5)), 1),
    ("10-byte max delta", _raw(ts=_ten_byte(INT64_MAX)), 1),
    ("10-byte min delta", _raw(ts=_ten_byte(INT64_MIN)), 1),
    ("varint past 64 bits", _raw(ts=b"\xff" * 9 + b"\x02"), 1),
    ("11-byte varint", _raw(off=b"\x80" * 10 + b"\x00"), 1),
    ("offset delta past int64", _raw(off=encode_varint(INT64_MAX)), 1),
    ("negative offset delta", _raw(off=encode_varint(-3)), 1),
    ("zero length", _raw(length=0), 1),
    ("negative length", _raw(length=-5), 1),
    ("huge length", _raw(length=INT64_MAX), 1),
    ("length one short", _raw(length=8), 1),
    ("headers", _raw(headers=_hdrs((b"\x02a", b"\x02x"), (b"\x00", b"\x01"))), 1),
    ("header value -1 as two bytes", _raw(headers=_hdrs((b"\x02a", b"\x81\x00"))), 1),
    ("header value -2", _raw(headers=_hdrs((b"\x02a", b"\x03"))), 1),
    ("header key -1", _raw(headers=_hdrs((b"\x01", b"\x00"))), 1),
    ("header key bad utf-8", _raw(headers=_hdrs((b"\x02\xff", b"\x00"))), 1),
    ("header key surrogate", _raw(headers=_hdrs((b"\x06\xed\xa0\x80", b"\x00"))), 1),
    (
        "header key 4-byte utf-8",
        _raw(headers=_hdrs((b"\x08" + "\U0001f389".encode(), b"\x00"))),
        1,
    ),
    ("header count non-minimal zero", _raw(headers=b"\x80\x00"), 1),
    ("header count negative", _raw(headers=b"\x03"), 1),
    ("header count huge", _raw(headers=encode_varint(1 << 40)), 1),
    ("header value past end", _raw(headers=_hdrs((b"\x02a", b"\x20x"))), 1),
    ("key past end", _raw(key=b"\x7ek"), 1),
    ("value past end", _raw(value=encode_varint(9000) + b"v"), 1),
    ("cut in the length", b"\x80", 1),
    ("cut after the length", encode_varint(20), 1),
    ("two records", _raw() + _raw(off=encode_varint(1)), 2),
]


@pytest.mark.parametrize(
    ("data", "count"), [c[1:] for c in EDGE_CASES], ids=[c[0] for c in EDGE_CASES]
)
@pytest.mark.parametrize("append_time", [None, 1_800_000_000_000])
def test_edge_cases(data: bytes, count: int, append_time: int | None) -> None:
    _compare_section(data, count, append_time=append_time)
    _compare_section(
        data, count, base_offset=INT64_MAX, base_ts=INT64_MIN, epoch=None, untracked=True
    )


def test_well_formed_edges_are_decoded_in_c() -> None:
    """Non-minimal varints and header shapes the Python loop accepts: C takes them too
    (a fallback would be correct but slow)."""
    for name, data, count in EDGE_CASES:
        if name in ("null key and value", "empty key and value", "non-minimal key length",
                    "non-minimal value length", "10-byte timestamp delta", "headers",
                    "header value -1 as two bytes", "header count non-minimal zero",
                    "two records", "empty", "negative offset delta"):  # fmt: skip
            got = _cdecode.decode_records(
                data, count, 0, 0, None, "t", 0, 0, None, ConsumerRecord, False
            )
            assert got is not None, name
            assert _compare_section(data, count, base_offset=0, base_ts=0)[0] == "ok"


# ------------------------------------------------------------------- mutated sections


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        pos = rng.randrange(len(buf) + 1) if buf else 0
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[pos:pos] = bytes([rng.randrange(256)])
        elif op == 2 and buf:
            del buf[min(pos, len(buf) - 1)]
        elif op == 3:
            del buf[pos:]
        elif op == 4:
            buf[pos:pos] = rng.choice([b"\xff" * 9 + b"\x01", b"\x80\x00", b"\x01", b"\x7f"])
        elif op == 5 and buf:
            buf[min(pos, len(buf) - 1)] = rng.choice([0x00, 0x01, 0x7E, 0x7F, 0x80, 0xFF])
    return bytes(buf)


def _sample_section(rng: random.Random) -> tuple[bytes, int]:
    b = DefaultRecordBatchBuilder(base_offset=10, batch_size=1 << 24)
    n = rng.randint(1, 6)
    offset = 0
    for _ in range(n):
        offset += rng.choice([1, 100])
        key = None if rng.random() < 0.3 else rng.randbytes(rng.choice([0, 3, 70]))
        value = None if rng.random() < 0.2 else rng.randbytes(rng.choice([0, 10, 100, 300]))
        headers = [("h", b"v"), ("n", None)] if rng.random() < 0.3 else []
        b.append(offset, timestamp=1000 + rng.randint(-5000, 5000),
                 key=key, value=value, headers=headers)  # fmt: skip
    return DefaultRecordBatch(bytes(b.build())).records_data(), n


def test_mutated_sections() -> None:
    rng = random.Random(20261125)
    decoded = rejected = 0
    for _ in range(6000):
        section, n = _sample_section(rng)
        data = _mutate(rng, section)
        count = n + rng.choice([0, 0, 0, -1, 1])
        status = _compare_section(data, count)[0]
        decoded += status == "ok"
        rejected += status == "error"
    # Both outcomes were exercised.
    assert decoded > 100 and rejected > 1000


def test_mutated_batches_through_decode_batch() -> None:
    """Whole batches: C and Python paths give the same records or the same error."""
    rng = random.Random(7)
    outcomes = set()
    for _ in range(300):
        b = DefaultRecordBatchBuilder(base_offset=5, batch_size=1 << 20)
        for i in range(rng.randint(1, 4)):
            b.append(i, timestamp=1000 + i, key=rng.randbytes(4), value=rng.randbytes(50),
                     headers=[("a", b"b")] if i % 2 else [])  # fmt: skip
        data = bytearray(b.build())
        data[61:] = _mutate(rng, bytes(data[61:]))  # the records, after the 61-byte header
        # A consistent batch around them: batchLength and the CRC-32C of the rest.
        struct.pack_into(">i", data, 8, len(data) - 12)
        struct.pack_into(">I", data, 17, calc_crc32c(memoryview(data)[21:]))
        recs, tuples = _both_paths(bytes(data))
        outcomes.add((recs[0], tuples[0]))
    assert outcomes == {("ok", "ok"), ("error", "error")}


def test_mutated_headers_through_decode_batch() -> None:
    """Batch headers with a flipped bit or byte (CRC kept or recomputed): the
    whole-batch C call, the C records loop and Python agree, errors included."""
    rng = random.Random(11)
    outcomes = set()
    for _ in range(600):
        b = DefaultRecordBatchBuilder(base_offset=rng.choice([0, 7, 1 << 40]), batch_size=1 << 20)
        for i in range(rng.randint(1, 3)):
            b.append(i, timestamp=1000 + i, key=b"k", value=rng.randbytes(20), headers=[])
        data = bytearray(b.build())
        pos = rng.randrange(61)
        data[pos] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(1, 256)
        if rng.random() < 0.5 and len(data) >= 21:
            struct.pack_into(">I", data, 17, calc_crc32c(memoryview(data)[21:]))
        try:
            DefaultRecordBatch(bytes(data))
        except CorruptRecordError:
            continue  # refused before decoding: nothing to compare
        recs, _ = _both_paths(bytes(data))
        outcomes.add(recs[0])
    assert outcomes == {"ok", "error"}


def _batch(**attrs: Any) -> bytearray:
    b = DefaultRecordBatchBuilder(base_offset=100, batch_size=1 << 20, **attrs)
    for i in range(3):
        b.append(i, timestamp=5000 + i, key=b"k%d" % i, value=b"v" * 30,
                 headers=[("h", b"x")] if i == 1 else [])  # fmt: skip
    return bytearray(b.build())


def test_whole_batch_call_decodes_in_c() -> None:
    """Uncompressed batches are decoded by the one C call (a fallback would be
    correct but slow), as Python decodes them, from any buffer; what it must not
    decode (compressed, bad CRC or header) it hands back."""
    crc = default_records.crc32c_function()
    data = _batch()
    struct.pack_into(">i", data, 12, 9)  # leader epoch 9
    struct.pack_into(">I", data, 17, calc_crc32c(memoryview(data)[21:]))
    want = [_fields(r) for r in DefaultRecordBatch(bytes(data)).decode_as(
        ConsumerRecord, TOPIC, PARTITION, accelerated=False)]  # fmt: skip
    assert want[0][1][11] == 9 and want[1][1][10] == (("h", b"x"),)
    for buf in (bytes(data), data, memoryview(data), bytes(data) + b"trailing"):
        got = _cdecode.decode_batch(buf, crc, ConsumerRecord, TOPIC, PARTITION, False)
        assert got is not None
        assert [_fields(r) for r in got] == want
    tuples = _cdecode.decode_batch(bytes(data), crc, None, None, None, False)
    assert tuples == DefaultRecordBatch(bytes(data)).decode_as(None, None, None, accelerated=False)

    bad_crc = bytearray(data)
    bad_crc[17] ^= 1  # the stored CRC-32C
    assert _cdecode.decode_batch(bytes(bad_crc), crc, ConsumerRecord, TOPIC, 0, False) is None
    # Not checked (check_crcs=False): decoded.
    assert _cdecode.decode_batch(bytes(bad_crc), None, ConsumerRecord, TOPIC, 0, False)
    with pytest.raises(CorruptRecordError, match="CRC"):
        decode_batch(DefaultRecordBatch(bytes(bad_crc)), TOPIC, 0)
    short = bytes(data[:60])
    too_long = bytearray(data)
    struct.pack_into(">i", too_long, 8, len(data))
    old_magic = bytearray(data)
    old_magic[16] = 1
    for refused in (short, bytes(too_long), bytes(old_magic), b""):
        assert _cdecode.decode_batch(refused, None, ConsumerRecord, TOPIC, 0, False) is None
    gz = bytes(_batch(compression_type=CODEC_GZIP))
    assert _cdecode.decode_batch(gz, crc, ConsumerRecord, TOPIC, 0, False) is None
    assert [r.value for r in decode_batch(DefaultRecordBatch(gz), TOPIC, 0)] == [b"v" * 30] * 3


def test_whole_batch_call_log_append_time() -> None:
    data = _batch()
    data[22] |= 0x08  # timestampType: LogAppendTime
    struct.pack_into(">q", data, 35, 777)  # maxTimestamp
    struct.pack_into(">I", data, 17, calc_crc32c(memoryview(data)[21:]))
    crc = default_records.crc32c_function()
    got = _cdecode.decode_batch(bytes(data), crc, ConsumerRecord, TOPIC, 0, True)
    assert got is not None
    assert {(r.timestamp, r.timestamp_type, r.leader_epoch) for r in got} == {(777, 1, None)}
    assert [_fields(r) for r in got] == [
        _fields(r)
        for r in DefaultRecordBatch(bytes(data)).decode_as(
            ConsumerRecord, TOPIC, 0, accelerated=False
        )
    ]


def test_same_error_message_on_corrupt_records() -> None:
    good = _raw() + _raw(off=encode_varint(1))
    for end in range(len(good)):
        section = good[:end]
        with pytest.raises(CorruptRecordError) as py_err:
            decode_records_py(section, 2, 0, 0, None, "t", 0, 0, None)
        assert (
            _cdecode.decode_records(section, 2, 0, 0, None, "t", 0, 0, None, ConsumerRecord, False)
            is None
        )
        assert "records the batch declares" in str(py_err.value)


# ------------------------------------------------------------------- objects and refs


def test_record_class_laid_out_differently_falls_back() -> None:
    class Plain:
        pass

    data = _raw()
    assert _cdecode.decode_records(data, 1, 0, 0, None, "t", 0, 0, None, Plain, False) is None
    assert _cdecode.decode_records(data, 1, 0, 0, None, "t", 0, 0, None, 42, False) is None
    assert (
        _cdecode.decode_records(bytearray(data), 1, 0, 0, None, "t", 0, 0, None, None, False)
        is None
    )
    assert _cdecode.decode_records(data, 1, 1 << 64, 0, None, "t", 0, 0, None, None, False) is None
    with pytest.raises(TypeError):
        _cdecode.decode_records(data, 1)  # type: ignore[call-arg]


def test_records_are_ordinary_objects() -> None:
    data = _raw(headers=_hdrs((b"\x02a", b"\x02x")))
    (rec,) = _cdecode.decode_records(data, 1, 0, 0, None, "t", 0, 0, None, ConsumerRecord, False)
    assert rec == ConsumerRecord("t", 0, 0, 5, 0, b"k", b"v", None, 1, 1, (("a", b"x"),), None)
    rec.key = "deserialized"  # the fetcher assigns deserialized keys and values
    assert rec.key == "deserialized"
    assert "ConsumerRecord(topic='t'" in repr(rec)
    import gc

    assert gc.is_tracked(rec)


def test_untracked_records() -> None:
    """untracked=True leaves the records out of the cyclic collector (and only then);
    reference counting still frees them."""
    import gc
    import weakref

    good = _raw(headers=_hdrs((b"\x02a", b"\x02x"))) + _raw(off=encode_varint(1))
    tracked = _cdecode.decode_records(good, 2, 0, 0, None, "t", 0, 0, None, ConsumerRecord, False)
    untracked = _cdecode.decode_records(good, 2, 0, 0, None, "t", 0, 0, None, ConsumerRecord, 1)
    assert tracked is not None and untracked is not None
    assert all(gc.is_tracked(r) for r in tracked)
    assert not any(gc.is_tracked(r) for r in untracked)
    assert [_fields(r) for r in tracked] == [_fields(r) for r in untracked]
    # Still freed by reference counting: the list's last reference frees the records.

    class Box:
        pass

    untracked[0].value = box = Box()
    ref = weakref.ref(box)
    del box, untracked
    assert ref() is None
    with pytest.raises(ValueError):
        _cdecode.decode_records(good, 2, 0, 0, None, "t", 0, 0, None, ConsumerRecord, BadBool())


class BadBool:
    def __bool__(self) -> bool:
        raise ValueError("no truth value")


def test_fetcher_tracks_records_that_get_collectable_values() -> None:
    """Records stay untracked while they hold atoms, and are tracked as soon as a
    deserializer gives them an object that could refer back to them."""
    if record_decode._c_decode_batch is None:
        # Only the C decoder leaves records untracked (the Python one makes them the
        # ordinary way); the module imports, but AIOKAFKA_NO_EXTENSIONS keeps it unused.
        pytest.skip("AIOKAFKA_NO_EXTENSIONS is set: the consumer decodes in Python")
    import gc

    from aiokafka.consumer.fetch_records import PartitionRecords
    from aiokafka.consumer.subscription import PartitionState
    from aiokafka.structs import TopicPartition

    b = DefaultRecordBatchBuilder(batch_size=1 << 20)
    for i in range(3):
        b.append(i, timestamp=1, key=b"k" if i else None, value=b"v", headers=[])
    data = bytes(b.build())

    def take(**deserializers: Any) -> list[Any]:
        state = PartitionState()
        state.seek(0)
        return PartitionRecords(TopicPartition("t", 0), state, 0, data, **deserializers).take(None)

    for kwargs in ({}, {"key_deserializer": bytes.decode}, {"value_deserializer": len}):
        recs = take(**kwargs)
        assert len(recs) == 3 and not any(gc.is_tracked(r) for r in recs), kwargs
    recs = take(key_deserializer=bytes.decode, value_deserializer=list)
    assert [r.key for r in recs] == [None, "k", "k"] and recs[0].value == [118]
    assert all(gc.is_tracked(r) for r in recs)
    recs = take(key_deserializer=lambda k: {"k": k})
    assert [gc.is_tracked(r) for r in recs] == [False, True, True]  # the first key is None


def _logged(fn: Any, tag: str, calls: list[str]) -> Any:
    if fn is None:
        return None

    def call(data: bytes) -> Any:
        calls.append(f"{tag}{data!r}")
        return fn(data)

    return call


def _deserialize_once(
    section: bytes, count: int, kd: Any, vd: Any, c_on: bool
) -> tuple[tuple[str, Any], list[str]]:
    calls: list[str] = []
    recs = _cdecode.decode_records(section, count, 0, 0, None, "t", 0, 0, None,
                                   ConsumerRecord, True)  # fmt: skip
    assert recs is not None
    saved = record_decode._c_deserialize
    record_decode._c_deserialize = _cdecode.deserialize if c_on else None
    try:
        record_decode.deserialize(recs, _logged(kd, "k", calls), _logged(vd, "v", calls))
        outcome: tuple[str, Any] = ("ok", [_fields(r) for r in recs])
    except Exception as exc:
        outcome = ("error", (type(exc), str(exc)))
    finally:
        record_decode._c_deserialize = saved
    return outcome, calls


def _deserialize_both_ways(
    section: bytes, count: int, kd: Any, vd: Any
) -> tuple[tuple[str, Any], list[str]]:
    """record_decode.deserialize over C-decoded records with the C and the Python
    loops: same fields or same exception, and the same deserializer calls in order."""
    c = _deserialize_once(section, count, kd, vd, True)
    assert c == _deserialize_once(section, count, kd, vd, False)
    return c


def _fail_on(bad: bytes) -> Any:
    def fn(data: bytes) -> Any:
        if data == bad:
            raise ValueError(f"cannot deserialize {data!r}")
        return data.decode()

    return fn


def test_deserialize_same_as_python_loops() -> None:
    section = (
        _raw(key=b"\x02a", value=b"\x02x")
        + _raw(off=encode_varint(1), key=b"\x01", value=b"\x02y")
        + _raw(off=encode_varint(2), key=b"\x02b", value=b"\x01")
    )
    cases: list[tuple[Any, Any, str]] = [
        (None, None, "ok"),
        (bytes.decode, None, "ok"),
        (None, bytes.decode, "ok"),
        (bytes.decode, lambda v: {"v": v}, "ok"),
        (_fail_on(b"b"), _fail_on(b"x"), "error"),  # keys first: b's error, after a
        (bytes.decode, _fail_on(b"y"), "error"),
        (lambda k: 1 / 0, None, "error"),
    ]
    for kd, vd, expected in cases:
        outcome, calls = _deserialize_both_ways(section, 3, kd, vd)
        assert outcome[0] == expected
        if kd is not None:
            assert calls[0] == "kb'a'"
        if expected == "error":
            assert outcome[1][0] in (ValueError, ZeroDivisionError)
    # The key error wins over the value error of an earlier record (keys go first).
    outcome, calls = _deserialize_both_ways(section, 3, _fail_on(b"b"), _fail_on(b"x"))
    assert "b'b'" in outcome[1][1] and calls == ["kb'a'", "kb'b'"]


def test_deserialize_refuses_other_records() -> None:
    import dataclasses

    recs = _cdecode.decode_records(_raw(), 1, 0, 0, None, "t", 0, 0, None, ConsumerRecord, True)
    assert recs is not None
    other = [dataclasses.replace(recs[0])]
    assert _cdecode.deserialize([*recs, 5], bytes.decode, None, ConsumerRecord) is False
    assert recs[0].key == b"k"  # nothing done
    assert _cdecode.deserialize(other, bytes.decode, None, ConsumerRecord) is True
    assert other[0].key == "k"

    class Plain:
        pass

    assert _cdecode.deserialize(recs, bytes.decode, None, Plain) is False
    with pytest.raises(TypeError):
        _cdecode.deserialize(tuple(recs), None, None, ConsumerRecord)  # type: ignore[arg-type]
    del recs[0].key
    assert _cdecode.deserialize(recs, bytes.decode, None, ConsumerRecord) is False
    with pytest.raises(AttributeError):
        record_decode.deserialize(recs, bytes.decode, None)


def test_deserialize_no_reference_leaks() -> None:
    value = b"".join([b"leak", b"check"])
    result = object()
    section = _raw(value=encode_varint(len(value)) + value)
    before = sys.getrefcount(result)
    for _ in range(2000):
        recs = _cdecode.decode_records(section, 1, 0, 0, None, "t", 0, 0, None, ConsumerRecord,
                                       True)  # fmt: skip
        _cdecode.deserialize(recs, None, lambda v: result, ConsumerRecord)
        del recs
        recs = _cdecode.decode_records(section, 1, 0, 0, None, "t", 0, 0, None, ConsumerRecord,
                                       True)  # fmt: skip
        with pytest.raises(ZeroDivisionError):
            _cdecode.deserialize(recs, lambda k: 1 / 0, None, ConsumerRecord)
        del recs
    assert sys.getrefcount(result) == before


def test_no_reference_leaks() -> None:
    topic = "".join(["leak", "check"])  # a fresh object whose count we can watch
    epoch = 10**20  # likewise (not a cached small int)
    append = 10**19
    good = _raw(headers=_hdrs((b"\x02a", b"\x02x"))) + _raw(off=encode_varint(1))
    bad = [good[:-1], good + b"\x00", _raw(headers=_hdrs((b"\x02\xff", b"\x00")))]
    before = (sys.getrefcount(topic), sys.getrefcount(epoch), sys.getrefcount(append))
    decoded = fallbacks = 0
    # No assert inside the loop: pytest's assertion rewriting keeps the operands.
    for _ in range(2000):
        for cls in (ConsumerRecord, None):
            for at in (None, append):
                recs = _cdecode.decode_records(good, 2, 0, 0, at, topic, 0, 0, epoch, cls, False)
                decoded += recs is not None
                del recs
                for data in bad:
                    got = _cdecode.decode_records(data, 2, 0, 0, at, topic, 0, 0, epoch, cls, False)
                    fallbacks += got is None
    del at, got  # the loop variable held one reference to ``append``
    assert (decoded, fallbacks) == (8000, 24000)
    assert (sys.getrefcount(topic), sys.getrefcount(epoch), sys.getrefcount(append)) == before


def test_no_extensions_env_forces_python() -> None:
    code = (
        "from aiokafka.consumer import record_decode\n"
        "from aiokafka.record import default_records\n"
        "print(record_decode._c_decode_records is None, default_records._c_decode_records is None)"
    )
    env = dict(os.environ, AIOKAFKA_NO_EXTENSIONS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=60)  # fmt: skip
    assert out.stdout.split() == ["True", "True"]
    env["AIOKAFKA_NO_EXTENSIONS"] = "0"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=60)  # fmt: skip
    assert out.stdout.split() == ["False", "False"]
