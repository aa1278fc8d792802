"""PartitionRecords and the aborted-transaction filter, fed with bytes from the builder."""

from __future__ import annotations

import random

import pytest

from aiokafka.consumer.fetch_records import AbortedTransactionFilter, PartitionRecords
from aiokafka.consumer.subscription import PartitionState
from aiokafka.errors import CorruptRecordError
from aiokafka.record import (
    CODEC_GZIP,
    CODEC_NONE,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
    build_control_batch,
)
from aiokafka.structs import ConsumerRecord, TopicPartition

TP = TopicPartition("t", 0)


def batch(
    base: int,
    values: list[bytes],
    *,
    pid: int = -1,
    transactional: bool = False,
    codec: int = CODEC_NONE,
    key: bytes | None = None,
) -> bytes:
    b = DefaultRecordBatchBuilder(
        compression_type=codec,
        is_transactional=transactional,
        producer_id=pid,
        producer_epoch=0 if pid >= 0 else -1,
        base_sequence=0 if pid >= 0 else -1,
        base_offset=base,
        batch_size=1 << 20,
    )
    for i, v in enumerate(values):
        b.append(i, timestamp=1000 + i, key=key, value=v, headers=[("h", b"x")])
    return bytes(b.build())


def marker(offset: int, pid: int, control: int) -> bytes:
    return bytes(
        build_control_batch(
            control, producer_id=pid, producer_epoch=0, coordinator_epoch=0, base_offset=offset
        )
    )


def state_at(offset: int) -> PartitionState:
    s = PartitionState()
    s.seek(offset)
    return s


def values(recs: list) -> list[bytes]:  # type: ignore[type-arg]
    return [r.value for r in recs]


def test_take_all_fields_and_position() -> None:
    data = batch(0, [b"a", b"bb"], key=b"k") + batch(2, [b"c"])
    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, data)
    assert pr.next_fetch_offset == 3
    recs = pr.take(None)
    assert values(recs) == [b"a", b"bb", b"c"]
    r = recs[1]
    assert (r.topic, r.partition, r.offset, r.timestamp, r.timestamp_type) == ("t", 0, 1, 1001, 0)
    assert (r.key, r.serialized_key_size, r.serialized_value_size) == (b"k", 1, 2)
    assert recs[2].key is None and recs[2].serialized_key_size == -1
    assert list(r.headers) == [("h", b"x")]
    assert r.checksum is None
    assert st.position == 3
    assert pr.is_drained


def test_max_records_splits_batches_and_positions() -> None:
    data = batch(0, [b"0", b"1", b"2"]) + batch(3, [b"3", b"4"])
    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, data)
    assert values(pr.take(2)) == [b"0", b"1"]
    assert st.position == 2
    assert values(pr.take(2)) == [b"2", b"3"]
    assert st.position == 4
    assert pr.take_one().value == b"4"  # type: ignore[union-attr]
    assert st.position == 5
    assert pr.take(10) == [] and pr.take_one() is None


def test_lazy_decoding_only_touches_pulled_batches() -> None:
    good = batch(0, [b"a"])
    bad = bytearray(batch(1, [b"b"]))
    bad[-1] ^= 0xFF  # corrupt the second batch's records (CRC mismatch)
    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, good + bytes(bad))
    assert values(pr.take(1)) == [b"a"]  # the corrupt batch is not decoded yet
    with pytest.raises(CorruptRecordError):
        pr.take(1)
    # The error stays until the user seeks; the position did not move past it.
    with pytest.raises(CorruptRecordError):
        pr.take(1)
    assert st.position == 1


def test_skips_records_before_fetch_offset_in_compressed_batch() -> None:
    data = batch(10, [b"a", b"b", b"c", b"d"], codec=CODEC_GZIP)
    st = state_at(12)
    pr = PartitionRecords(TP, st, 12, data)
    assert [r.offset for r in pr.take(None)] == [12, 13]


def test_deserializers_and_stale_detection() -> None:
    data = batch(0, [b"1", b"2"], key=b"7")
    st = state_at(0)
    pr = PartitionRecords(
        TP, st, 0, data, key_deserializer=int, value_deserializer=lambda v: v.decode() + "!"
    )
    recs = pr.take(None)
    assert [(r.key, r.value) for r in recs] == [(7, "1!"), (7, "2!")]
    st2 = state_at(0)
    pr2 = PartitionRecords(TP, st2, 0, data)
    assert not pr2.is_stale
    st2.seek(1)
    assert pr2.is_stale


def test_deserializer_error_keeps_batch() -> None:
    calls = []

    def fail_once(v: bytes) -> bytes:
        if not calls:
            calls.append(1)
            raise RuntimeError("boom")
        return v

    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, batch(0, [b"x"]), value_deserializer=fail_once)
    with pytest.raises(RuntimeError):
        pr.take(None)
    assert values(pr.take(None)) == [b"x"]


def test_deserializer_error_on_a_later_batch_returns_the_records_taken_first() -> None:
    # A schema-aware deserializer that does not know the second batch's schema yet:
    # the first batch's records (their position already moved) must be handed out,
    # the failing batch raises at the next call and reads once the cause is fixed.
    known = {b"v1"}

    def deserialize(v: bytes) -> bytes:
        if v[:2] not in known:
            raise LookupError(f"unknown {v[:2]!r}")
        return v

    st = state_at(0)
    data = batch(0, [b"v1-a", b"v1-b"]) + batch(2, [b"v2-c"])
    pr = PartitionRecords(TP, st, 0, data, value_deserializer=deserialize)
    assert values(pr.take(None)) == [b"v1-a", b"v1-b"]
    assert st.position == 2
    with pytest.raises(LookupError, match="unknown b'v2'"):
        pr.take(None)
    assert st.position == 2
    known.add(b"v2")
    assert [(r.offset, r.value) for r in pr.take(None)] == [(2, b"v2-c")]
    assert st.position == 3


def test_partial_trailing_batch_is_ignored() -> None:
    full = batch(0, [b"a"])
    partial = batch(1, [b"b" * 100])[:40]
    pr = PartitionRecords(TP, state_at(0), 0, full + partial)
    assert pr.next_fetch_offset == 1
    assert values(pr.take(None)) == [b"a"]


def test_control_batches_never_returned_read_uncommitted() -> None:
    data = batch(0, [b"t0", b"t1"], pid=5, transactional=True) + marker(2, 5, CONTROL_COMMIT)
    data += batch(3, [b"n"])
    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, data)
    assert values(pr.take(None)) == [b"t0", b"t1", b"n"]
    assert st.position == 4


def test_read_committed_drops_aborted_and_keeps_committed() -> None:
    data = (
        batch(0, [b"a0", b"a1"], pid=1, transactional=True)  # aborted
        + batch(2, [b"c0"], pid=2, transactional=True)  # committed
        + batch(3, [b"plain"])
        + marker(4, 1, CONTROL_ABORT)
        + marker(5, 2, CONTROL_COMMIT)
        + batch(6, [b"a-next"], pid=1, transactional=True)  # a new txn of pid 1, committed
        + marker(7, 1, CONTROL_COMMIT)
    )
    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, data, aborted=[(1, 0)])
    assert values(pr.take(None)) == [b"c0", b"plain", b"a-next"]
    assert st.position == 8
    # Same bytes under read_uncommitted: everything but the markers.
    pr2 = PartitionRecords(TP, state_at(0), 0, data)
    assert values(pr2.take(None)) == [b"a0", b"a1", b"c0", b"plain", b"a-next"]


def test_read_committed_position_moves_past_trailing_aborted_batch() -> None:
    data = batch(0, [b"ok"]) + batch(1, [b"x"], pid=3, transactional=True)
    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, data, aborted=[(3, 1)])
    assert values(pr.take(None)) == [b"ok"]
    assert st.position == 2  # no refetch of the aborted batch


def test_aborted_filter_alone() -> None:
    f = AbortedTransactionFilter([(9, 5)])
    before = DefaultRecordBatch(batch(0, [b"x"], pid=9, transactional=True))
    inside = DefaultRecordBatch(batch(5, [b"y"], pid=9, transactional=True))
    other = DefaultRecordBatch(batch(6, [b"z"], pid=8, transactional=True))
    abort = DefaultRecordBatch(marker(7, 9, CONTROL_ABORT))
    after = DefaultRecordBatch(batch(8, [b"w"], pid=9, transactional=True))
    assert [f.skip(b) for b in (before, inside, other, abort, after)] == [
        False,
        True,
        False,
        True,
        False,
    ]


def test_corrupt_header_surfaces_after_good_batches() -> None:
    good = batch(0, [b"a"])
    junk = bytearray(batch(1, [b"b"]))
    junk[16] = 7  # impossible magic
    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, good + bytes(junk))
    assert values(pr.take(None)) == [b"a"]
    with pytest.raises(CorruptRecordError):
        pr.take(None)


Header = tuple[str, bytes | None]


def _odd_records() -> list[tuple[int, int, bytes | None, bytes | None, list[Header]]]:
    """Records covering every varint width and null/empty case of the decoder."""
    out: list[tuple[int, int, bytes | None, bytes | None, list[Header]]] = []
    offset = 0
    for i in range(300):
        # Offset gaps (compaction) make deltas of 1, 2 and 3 varint bytes.
        offset += 1 if i < 60 else (70 if i < 200 else 9000)
        key = None if i % 5 == 0 else (b"" if i % 7 == 0 else b"k" * (i % 90))
        size = (0, 1, 63, 64, 200, 8191, 8192, 20000)[i % 8]
        value = None if i % 11 == 0 else bytes([i % 251]) * size
        headers: list[Header] = [] if i % 3 else [(f"h{i}", b"v"), ("null", None), ("", b"")]
        # Timestamps before and after the first one: negative and long deltas.
        ts = 1_700_000_000_000 + (-1 if i % 4 == 0 else 1) * i * (1 if i % 2 else 100_000)
        out.append((offset, ts, key, value, headers))
    return out


@pytest.mark.parametrize("codec", [CODEC_NONE, CODEC_GZIP])
@pytest.mark.parametrize("ts_type", [0, 1])
def test_direct_decoder_agrees_with_record_tuples(codec: int, ts_type: int) -> None:
    """The consumer's own decoder (one object per record) gives the same records as
    the record layer's reference decoding, field by field."""
    import struct

    from aiokafka.consumer.record_decode import decode_batch

    b = DefaultRecordBatchBuilder(
        compression_type=codec, base_offset=1000, batch_size=1 << 24, timestamp_type=ts_type
    )
    for offset, ts, key, value, headers in _odd_records():
        b.append(offset, timestamp=ts, key=key, value=value, headers=headers)
    data = bytearray(b.build())
    struct.pack_into(">i", data, 12, 42)  # partitionLeaderEpoch (not under the CRC)
    ref = DefaultRecordBatch(bytes(data))
    expected = ref.record_tuples()
    got = decode_batch(DefaultRecordBatch(bytes(data)), "topic", 7)
    assert len(got) == len(expected) == 300
    for rec, (offset, ts, key, value, headers, _size) in zip(got, expected, strict=True):
        assert (rec.topic, rec.partition, rec.offset, rec.timestamp) == ("topic", 7, offset, ts)
        assert (rec.key, rec.value, rec.timestamp_type) == (key, value, ts_type)
        assert rec.serialized_key_size == (-1 if key is None else len(key))
        assert rec.serialized_value_size == (-1 if value is None else len(value))
        assert list(rec.headers) == headers and isinstance(rec.headers, tuple)
        assert rec.leader_epoch == 42 and rec.checksum is None
    if ts_type == 1:
        assert {r.timestamp for r in got} == {ref.max_timestamp}


def test_direct_decoder_rejects_truncated_and_trailing_data() -> None:
    import struct

    from aiokafka.consumer.record_decode import decode_batch
    from aiokafka.record.util import calc_crc32c

    good = bytes(batch(0, [b"a" * 100, b"b" * 100]))
    records = good[61:]  # the records section, after the 61-byte header

    def decode(payload: bytes) -> list[ConsumerRecord[bytes, bytes]]:
        # A batch whose header (batchLength, CRC-32C) is consistent with ``payload``.
        data = bytearray(good[:61] + payload)
        struct.pack_into(">i", data, 8, len(data) - 12)
        struct.pack_into(">I", data, 17, calc_crc32c(memoryview(data)[21:]))
        return decode_batch(DefaultRecordBatch(bytes(data)), "t", 0)

    assert [r.value for r in decode(records)] == [b"a" * 100, b"b" * 100]
    for end in range(len(records)):  # every truncation is caught, wherever it falls
        with pytest.raises(CorruptRecordError):
            decode(records[:end])
    with pytest.raises(CorruptRecordError, match="1 bytes follow"):
        decode(records + b"\x00")


def test_decoding_never_touches_the_garbage_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switching the collector off is the application's decision (it is process-wide):
    decoding a large batch must leave it alone."""
    import gc

    def refuse() -> None:
        raise AssertionError("the library changed the process-wide GC state")

    monkeypatch.setattr(gc, "disable", refuse)
    monkeypatch.setattr(gc, "enable", refuse)
    data = batch(0, [b"v%d" % i for i in range(2000)])
    recs = PartitionRecords(TP, state_at(0), 0, data).take(None)
    assert len(recs) == 2000 and recs[-1].value == b"v1999"
    # With the collector off (the application's choice) it stays off.
    monkeypatch.undo()
    gc.disable()
    try:
        PartitionRecords(TP, state_at(0), 0, data).take(None)
        assert not gc.isenabled()
    finally:
        gc.enable()


def _random_blob(rng: random.Random) -> tuple[bytes, int]:
    """A fetched blob of small batches of every kind, and a fetch offset within it."""
    parts: list[bytes] = []
    offset = 0
    for _ in range(rng.randint(1, 12)):
        kind = rng.choice(["plain"] * 6 + ["gzip", "txn", "commit", "abort", "crc", "magic"])
        n = rng.randint(1, 4)
        values_ = [b"v%d" % (offset + i) for i in range(n)]
        if kind == "plain":
            data = batch(offset, values_)
        elif kind == "gzip":
            data = batch(offset, values_, codec=CODEC_GZIP)
        elif kind == "txn":
            data = batch(offset, values_, pid=7, transactional=True)
        elif kind in ("commit", "abort"):
            n = 1
            data = marker(offset, 7, CONTROL_COMMIT if kind == "commit" else CONTROL_ABORT)
        else:
            broken = bytearray(batch(offset, values_))
            if kind == "crc":
                broken[-2] ^= 0x55  # the records no longer match the CRC-32C
            else:
                broken[16] = 7  # impossible magic
            data = bytes(broken)
        parts.append(data)
        offset += n
    blob = b"".join(parts)
    if rng.random() < 0.3:
        blob = blob[: rng.randrange(len(blob))]  # the broker cut the last batch
    return blob, rng.randrange(offset + 1)


def _drain(pr: PartitionRecords, st: PartitionState, rng: random.Random) -> list[object]:
    out: list[object] = [pr.size, pr.next_fetch_offset]
    for _ in range(40):
        how = rng.random()
        try:
            if how < 0.4:
                got: object = [(r.offset, r.value) for r in pr.take(rng.choice([1, 2, 5, None]))]
            elif how < 0.7:
                rec = pr.take_fast()
                got = None if rec is None else (rec.offset, rec.value)
            else:
                rec = pr.take_one()
                got = None if rec is None else (rec.offset, rec.value)
        except CorruptRecordError as exc:
            got = ("error", str(exc))
        out.append((got, st.position))
    return out


@pytest.mark.parametrize("aborted", [None, [], [(7, 0)]])
def test_header_scan_gives_what_memory_records_gives(
    monkeypatch: pytest.MonkeyPatch, aborted: list[tuple[int, int]] | None
) -> None:
    """Batches found by the header scan and made as they are decoded: the same
    records, positions, sizes, next fetch offsets and errors as batch objects made
    up front (the scan switched off), over random blobs of small batches."""
    from aiokafka.consumer import fetch_records

    for seed in range(300):
        results = []
        # The scan with the C span decoder, the scan decoding through batch objects
        # (no C decoder, as AIOKAFKA_NO_EXTENSIONS), no scan.
        for scan in (True, "no span decoder", False):
            if scan == "no span decoder":
                monkeypatch.setattr(fetch_records, "span_decoder", lambda check_crc: None)
            if not scan:
                monkeypatch.setattr(fetch_records, "_scan_v2", lambda data, offset: None)
            rng = random.Random(seed)
            blob, fetch_offset = _random_blob(rng)
            st = state_at(fetch_offset)
            pr = PartitionRecords(TP, st, fetch_offset, blob, aborted=aborted)
            results.append(_drain(pr, st, rng))
            monkeypatch.undo()
        assert results[0] == results[1] == results[2], seed


def test_header_scan_is_used_for_plain_v2_blobs() -> None:
    from aiokafka.consumer import fetch_records

    blob = batch(0, [b"a", b"b"]) + batch(2, [b"c"], codec=CODEC_GZIP) + marker(3, 7, 0)
    scanned = fetch_records._scan_v2(blob, 1)
    assert scanned is not None
    spans, size, next_fetch = scanned
    assert [s[2] for s in spans] == [2, 3, 4] and size == len(blob) and next_fetch == 4
    assert fetch_records._scan_v2(blob + b"\x00" * 20, 0) is None  # a trailing header piece
    assert fetch_records._scan_v2(blob + batch(4, [b"d"])[:70], 0) is not None  # a cut batch
    # A batch cut inside its header (magic byte included) is a partial batch too, as
    # MemoryRecords reads it; the same piece with an impossible length is not.
    cut = fetch_records._scan_v2(blob + batch(4, [b"d"])[:30], 0)
    assert cut is not None and cut[1] == len(blob) and cut[2] == 4
    short = bytearray(batch(4, [b"d"])[:30])
    short[8:12] = (20).to_bytes(4, "big")
    assert fetch_records._scan_v2(blob + bytes(short), 0) is None


def test_take_fast_position_follows_the_chunk_and_writes_stop_it() -> None:
    """take_fast moves the position without a call per record: the state follows the
    chunk and reads the position from it; a pause, a seek or a drop lets go of it
    and keeps (or replaces) the position reached."""
    blob = batch(0, [b"a", b"b", b"c"]) + marker(3, 7, CONTROL_COMMIT) + batch(4, [b"d", b"e"])
    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, blob)
    assert pr.take_fast().value == b"a"  # type: ignore[union-attr]
    assert st.cursor is pr and (st.position, st.position_epoch) == (1, None)
    assert pr.take_fast().value == b"b"  # type: ignore[union-attr]
    assert st.position == 2
    st.set_paused(True)
    assert st.cursor is None and st.position == 2 and pr.take_fast() is None
    st.set_paused(False)
    assert pr.take_fast().value == b"c"  # type: ignore[union-attr]
    assert st.position == 3  # the batch's end
    # The next batch, past the control marker, is loaded by the hot path itself.
    assert pr.take_fast().value == b"d"  # type: ignore[union-attr]
    assert st.position == 5 and st.cursor is pr
    # getmany's path on the same chunk takes over from the followed position.
    assert values(pr.take(None)) == [b"e"] and st.cursor is None and st.position == 6
    assert pr.take_fast() is None and st.position == 6

    st = state_at(0)
    pr = PartitionRecords(TP, st, 0, blob)
    pr.take_fast()
    pr.drop()  # the chunk forgets its records: the position reached stays
    assert st.cursor is None and st.position == 1
    pr = PartitionRecords(TP, st, 1, blob)
    pr.take_fast()
    st.seek(0)
    assert st.cursor is None and st.position == 0 and pr.take_fast() is None
    pr = PartitionRecords(TP, st, 0, blob)
    pr.take_fast()
    st.request_reset("earliest")  # the position handed out stays until the reset
    assert st.cursor is None and st.position == 1 and pr.take_fast() is None


def _ops(pr: PartitionRecords, st: PartitionState, rng: random.Random, fast: bool) -> list[object]:
    # fast=False: the reference, take_fast's contract written with take_one, which moves
    # the position by PartitionState.advance per record (the code before the cursor).
    out: list[object] = []
    for _ in range(60):
        how = rng.random()
        try:
            if how < 0.5:
                if fast:
                    rec = pr.take_fast()
                elif pr.is_stale or st.paused:
                    rec = None
                else:
                    try:
                        rec = pr.take_one()
                    except CorruptRecordError:
                        rec = None  # take_fast leaves the stored error to take_one
                got: object = None if rec is None else rec.offset
            elif how < 0.65:
                got = [r.offset for r in pr.take(rng.choice([1, 3, None]))]
            elif how < 0.75:
                rec = pr.take_one()
                got = None if rec is None else rec.offset
            elif how < 0.9:
                st.set_paused(not st.paused)
                got = "pause"
            elif how < 0.93:
                pr.drop()
                got = "drop"
            else:
                st.seek(rng.randrange(20))
                got = "seek"
        except CorruptRecordError as exc:
            got = ("error", str(exc))
        out.append((got, st.position, st.position_epoch))
    return out


def test_take_fast_positions_match_advancing_per_record() -> None:
    """Random mixes of take_fast, take, take_one, pause, drop and seek over random
    blobs: the same records and, after every step, the same position and leader
    epoch as moving the position per record."""
    for seed in range(300):
        results = []
        for fast in (True, False):
            rng = random.Random(seed)
            blob, fetch_offset = _random_blob(rng)
            st = state_at(fetch_offset)
            pr = PartitionRecords(TP, st, fetch_offset, blob)
            results.append(_ops(pr, st, rng, fast))
        assert results[0] == results[1], seed
