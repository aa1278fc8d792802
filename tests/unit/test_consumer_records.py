"""PartitionRecords and the aborted-transaction filter, fed with bytes from the builder."""

from __future__ import annotations

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
from aiokafka.structs import TopicPartition

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
