"""RecordAccumulator: batching, linger, memory accounting, drain per node, expiry."""

from __future__ import annotations

import asyncio
import sys
import time
from types import MappingProxyType
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata
from aiokafka.errors import KafkaTimeoutError, ProducerClosed
from aiokafka.producer.accumulator import FIRST_RESERVE, RECORD_OVERHEAD, RecordAccumulator
from aiokafka.producer.futures import RecordFuture
from aiokafka.record import CODEC_NONE, MemoryRecords
from aiokafka.structs import BrokerMetadata, PartitionMetadata, TopicPartition

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
T2 = TopicPartition("t", 2)


def cluster(leaders: dict[int, int]) -> ClusterMetadata:
    """Topic ``t`` with the given partition -> leader map (-1: no leader)."""
    parts = {
        p: PartitionMetadata("t", p, leader, (leader,), (leader,), 0, 0)
        for p, leader in leaders.items()
    }
    brokers = {n: BrokerMetadata(n, "h", 9092 + n, None) for n in (1, 2)}
    topic = TopicMetadata("t", partitions=MappingProxyType(parts))
    return ClusterMetadata(
        MappingProxyType(brokers), MappingProxyType({"t": topic}), created_at=time.monotonic()
    )


def make(**kw: Any) -> tuple[RecordAccumulator, list[str], list[TopicPartition]]:
    wakes: list[str] = []
    closed: list[TopicPartition] = []
    options: dict[str, Any] = {
        "batch_size": 1000,
        "buffer_memory": 1_000_000,
        "linger_ms": 0,
        "delivery_timeout_ms": 60000,
        "retry_backoff_ms": 100,
        "codec": CODEC_NONE,
        "wakeup": lambda: wakes.append("w"),
        "on_batch_closed": closed.append,
    }
    options.update(kw)
    return RecordAccumulator(**options), wakes, closed


def must(fut: RecordFuture | None) -> RecordFuture:
    assert fut is not None, "append() found no room"
    return fut


async def test_records_fill_one_batch_then_roll_over() -> None:
    acc, wakes, closed = make()
    for _ in range(30):
        assert acc.append(T0, None, None, b"v" * 90, None)
    batches = acc.all_queued()
    assert len(batches) > 1
    assert all(b.closed for b in batches[:-1]) and not batches[-1].closed
    assert sum(b.record_count for b in batches) == 30
    assert closed == [T0] * (len(batches) - 1)
    assert len(wakes) == len(batches)  # one wakeup per new batch, not per record
    assert all(b.builder.size_in_bytes() <= 1000 for b in batches)


async def test_linger_decides_readiness_while_a_request_is_in_flight() -> None:
    acc, _, _ = make(linger_ms=50)
    meta = cluster({0: 1, 1: 2})
    acc.append(T0, None, None, b"x", None)
    now = time.monotonic()
    busy = {1}
    nodes, next_check, unknown = acc.ready(meta, now, busy)
    assert nodes == set() and not unknown
    assert 0 < next_check <= 0.05
    nodes, _, _ = acc.ready(meta, now + 0.051, busy)
    assert nodes == {1}
    # A flush makes it ready at once.
    waiters = acc.begin_flush()
    assert len(waiters) == 1
    assert acc.ready(meta, now, busy)[0] == {1}
    acc.end_flush()
    assert acc.ready(meta, now, busy)[0] == set()
    # Another broker's request does not make this one wait.
    assert acc.ready(meta, now, {2})[0] == {1}


async def test_linger_does_not_delay_a_batch_for_an_idle_broker() -> None:
    acc, _, _ = make(linger_ms=10000)
    meta = cluster({0: 1, 1: 2})
    acc.append(T0, None, None, b"x", None)
    acc.append(T1, None, None, b"x", None)
    now = time.monotonic()
    nodes, next_check, _ = acc.ready(meta, now)
    assert nodes == {1, 2} and next_check == float("inf")
    # Only the broker with a request in flight lingers.
    nodes, next_check, _ = acc.ready(meta, now, {2})
    assert nodes == {1} and 9.9 < next_check <= 10


async def test_full_batch_ready_without_linger() -> None:
    acc, _, _ = make(linger_ms=10000)
    meta = cluster({0: 1})
    for _ in range(12):
        acc.append(T0, None, None, b"v" * 90, None)
    assert acc.ready(meta, time.monotonic())[0] == {1}


async def test_drain_groups_by_leader_one_batch_per_partition() -> None:
    acc, _, _ = make()
    meta = cluster({0: 1, 1: 2, 2: 1})
    for tp in (T0, T1, T2):
        for _ in range(25):  # several batches each
            acc.append(tp, None, b"k", b"v" * 90, None)
    now = time.monotonic()
    nodes, _, _ = acc.ready(meta, now)
    assert nodes == {1, 2}
    drained = acc.drain(meta, nodes, 1_000_000, now)
    assert sorted(b.tp for b in drained[1]) == [T0, T2]
    assert [b.tp for b in drained[2]] == [T1]
    assert all(b.closed for bs in drained.values() for b in bs)
    # max_request_size limits a node's request, but at least one batch goes.
    acc2, _, _ = make()
    for tp in (T0, T2):
        for _ in range(5):
            acc2.append(tp, None, None, b"v" * 90, None)
    drained = acc2.drain(meta, {1}, 10, now)
    assert len(drained[1]) == 1


async def test_unknown_leader_reported() -> None:
    acc, _, _ = make()
    acc.append(T0, None, None, b"x", None)
    nodes, _, unknown = acc.ready(cluster({0: -1}), time.monotonic())
    assert nodes == set() and unknown


async def test_complete_resolves_futures_with_offsets_and_releases_memory() -> None:
    acc, _, _ = make()
    futs = [must(acc.append(T0, 1000 + i, b"k", b"v", [("h", b"1")])) for i in range(3)]
    assert acc.used_memory == 1000
    (batch,) = acc.drain(cluster({0: 1}), {1}, 10**6, time.monotonic())[1]
    # Closing the batch counts its records' Python objects too.
    assert acc.used_memory == 1000 + 3 * RECORD_OVERHEAD
    data = bytes(batch.builder.build())
    (rbatch,) = list(MemoryRecords(data))
    assert [r[3] for r in rbatch.record_tuples()] == [b"v"] * 3
    acc.complete(batch, 40, -1, 7)
    assert acc.used_memory == 0
    results = [f.result() for f in futs]
    assert [r.offset for r in results] == [40, 41, 42]
    assert [r.timestamp for r in results] == [1000, 1001, 1002]
    assert {r.timestamp_type for r in results} == {0}
    assert results[0].log_start_offset == 7
    assert results[0].topic_partition == T0
    assert batch.done.done()


async def test_log_append_time_and_acks0_offsets() -> None:
    acc, _, _ = make()
    futs = [must(acc.append(T0, 5, None, b"v", None)) for _ in range(2)]
    (batch,) = acc.all_queued()
    acc.complete(batch, -1, 99, -1)
    assert [(f.result().offset, f.result().timestamp) for f in futs] == [(-1, 99), (-1, 99)]
    assert futs[0].result().timestamp_type == 1
    assert futs[0].result().log_start_offset is None


async def test_cancelled_record_future_does_not_break_completion() -> None:
    acc, _, _ = make()
    futs = [must(acc.append(T0, None, None, b"v", None)) for _ in range(2)]
    futs[0].cancel()
    (batch,) = acc.all_queued()
    acc.complete(batch, 0, -1, 0)
    assert futs[1].result().offset == 1


async def test_buffer_memory_blocks_then_times_out() -> None:
    acc, _, _ = make(buffer_memory=2000)
    assert acc.append(T0, None, None, b"x", None)
    assert acc.append(T1, None, None, b"x", None)
    # A third batch does not fit.
    assert acc.append(T2, None, None, b"x", None) is None
    assert acc.used_memory == 2000
    t0 = time.monotonic()
    with pytest.raises(KafkaTimeoutError, match="buffer_memory"):
        await acc.wait_for_memory(10, 0.05)
    assert 0.04 <= time.monotonic() - t0 < 1.0
    # Existing batches still take records (no new memory needed).
    assert acc.append(T0, None, None, b"x", None)


async def test_batch_reserves_memory_as_it_fills() -> None:
    # A large batch_size is reserved step by step: 16 KiB, then doubled while filling.
    acc, _, _ = make(batch_size=8 * FIRST_RESERVE, buffer_memory=10**8)
    acc.append(T0, None, None, b"v" * 100, None)
    (batch,) = acc.all_queued()
    assert acc.used_memory == batch.reserved == FIRST_RESERVE
    seen = {acc.used_memory}
    while not batch.closed:
        seen.add(batch.reserved)
        assert acc.append(T0, None, None, b"v" * 100, None)
    assert sorted(seen) == [FIRST_RESERVE * k for k in (1, 2, 4, 8)]
    # The full batch used what it reserved, and never more than batch_size.
    assert 8 * FIRST_RESERVE - 200 < batch.builder.size_in_bytes() <= 8 * FIRST_RESERVE
    second = acc.all_queued()[1]
    assert acc.used_memory == batch.reserved + second.reserved
    assert batch.reserved == 8 * FIRST_RESERVE + batch.record_count * RECORD_OVERHEAD
    acc.complete(batch, 0, -1, 0)
    assert acc.used_memory == FIRST_RESERVE


async def test_batch_stops_growing_when_the_buffer_is_short() -> None:
    acc, _, closed = make(batch_size=8 * FIRST_RESERVE, buffer_memory=3 * FIRST_RESERVE)
    acc.append(T1, None, None, b"x", None)  # another partition holds 16 KiB
    count = 0
    while acc.append(T0, None, None, b"v" * 100, None) is not None:
        count += 1
    # It grew once (to 32 KiB); a second doubling did not fit in 48 KiB, so it is
    # full, and the next record needs a new batch, which does not fit either.
    assert closed == [T0]
    batch = acc.all_queued()[1]
    assert batch.closed and batch.tp == T0
    assert 2 * FIRST_RESERVE - 200 < batch.builder.size_in_bytes() <= 2 * FIRST_RESERVE
    assert batch.record_count == count
    assert acc.used_memory <= 3 * FIRST_RESERVE + batch.record_count * RECORD_OVERHEAD


async def test_buffer_smaller_than_batch_size_bounds_the_batch() -> None:
    acc, _, _ = make(batch_size=10**6, buffer_memory=5000)
    futures = [acc.append(T0, None, None, b"v" * 100, None) for _ in range(100)]
    assert futures[0] is not None
    (batch,) = acc.all_queued()
    assert batch.closed
    assert batch.builder.size_in_bytes() <= 5000
    assert acc.used_memory <= 5000 + batch.record_count * RECORD_OVERHEAD
    assert futures[batch.record_count] is None  # no room for a second batch


async def test_no_growth_while_someone_waits_for_memory() -> None:
    acc, _, closed = make(batch_size=4 * FIRST_RESERVE, buffer_memory=4 * FIRST_RESERVE)
    acc.append(T0, None, None, b"v" * 100, None)
    waiter = asyncio.create_task(acc.wait_for_memory(3 * FIRST_RESERVE + 1, 5))
    await asyncio.sleep(0)
    # Memory is free for the batch to double, but the waiter comes first (FIFO):
    # the batch is full at its first reservation instead.
    while not closed:
        acc.append(T0, None, None, b"v" * 100, None)
    (batch,) = [b for b in acc.all_queued() if b.closed]
    assert batch.builder.size_in_bytes() <= FIRST_RESERVE
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter


async def test_waiter_wakes_when_memory_is_released() -> None:
    acc, _, _ = make(buffer_memory=2000)
    acc.append(T0, None, None, b"x", None)
    acc.append(T1, None, None, b"x", None)
    waiter = asyncio.create_task(acc.wait_for_memory(10, 5))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    # While someone waits, new batches are refused to everyone else (FIFO).
    first = acc.all_queued()[0]
    acc.complete(first, 0, -1, 0)
    await asyncio.wait_for(waiter, 1)
    assert acc.append(T2, None, None, b"x", None)


async def test_abort_fails_everything_and_wakes_waiters() -> None:
    acc, _, _ = make(buffer_memory=1000)
    f = must(acc.append(T0, None, None, b"x", None))
    waiter = asyncio.create_task(acc.wait_for_memory(10, 5))
    await asyncio.sleep(0.01)
    acc.abort_all(ProducerClosed("closed"))
    with pytest.raises(ProducerClosed):
        await asyncio.wait_for(waiter, 1)
    with pytest.raises(ProducerClosed):
        f.result()
    assert acc.used_memory == 0 and not acc.has_incomplete()


async def test_reenqueue_keeps_creation_order_and_backoff() -> None:
    acc, _, _ = make(retry_backoff_ms=100)
    meta = cluster({0: 1})
    for _ in range(40):
        acc.append(T0, None, None, b"v" * 90, None)
    now = time.monotonic()
    first = acc.drain(meta, {1}, 10**6, now)[1][0]
    second = acc.drain(meta, {1}, 10**6, now)[1][0]
    # Both fail; they go back before the younger batches, in their original order.
    acc.reenqueue(second, now)
    acc.reenqueue(first, now)
    queued = acc.all_queued()
    assert queued[0] is first and queued[1] is second
    assert [b.order for b in queued] == sorted(b.order for b in queued)
    # Back-off: nothing of T0 is ready until retry_at.
    nodes, next_check, _ = acc.ready(meta, now)
    assert nodes == set() and 0 < next_check <= 0.1 + 1e-6
    assert acc.ready(meta, now + 0.11)[0] == {1}


async def test_expiry_of_queued_batches() -> None:
    acc, _, _ = make(delivery_timeout_ms=10)
    acc.append(T0, None, None, b"x", None)
    assert acc.expired(time.monotonic()) == []
    expired = acc.expired(time.monotonic() + 0.02)
    assert len(expired) == 1 and not acc.has_unsent()


async def test_add_batch_closes_open_batch_to_keep_order() -> None:
    from aiokafka.record import DefaultRecordBatchBuilder

    acc, _, closed = make()
    acc.append(T0, None, None, b"a", None)
    builder = DefaultRecordBatchBuilder(batch_size=1000)
    builder.append(0, None, None, b"b")
    fut = acc.add_batch(T0, builder)
    acc.append(T0, None, None, b"c", None)
    assert [b.record_count for b in acc.all_queued()] == [1, 1, 1]
    assert closed == [T0]
    batches = acc.all_queued()
    acc.complete(batches[1], 10, -1, 0)
    assert fut.result().offset == 10


# -- record futures ------------------------------------------------------------------------


async def test_record_futures_follow_the_asyncio_future_protocol() -> None:
    acc, _, _ = make()
    futs = [must(acc.append(T0, 1000 + i, None, b"v", None)) for i in range(4)]
    assert all(asyncio.isfuture(f) and not f.done() for f in futs)
    assert futs[0].get_loop() is asyncio.get_running_loop()
    with pytest.raises(asyncio.InvalidStateError):
        futs[0].result()
    called: list[int] = []
    futs[1].add_done_callback(lambda f: called.append(f.result().offset))
    futs[2].add_done_callback(called.append)  # type: ignore[arg-type]
    assert futs[2].remove_done_callback(called.append) == 1  # type: ignore[arg-type]
    awaited = asyncio.create_task(_await(futs[0]))
    gathered = asyncio.ensure_future(asyncio.gather(*futs))
    waited = asyncio.create_task(asyncio.wait(futs))
    await asyncio.sleep(0)
    assert not (awaited.done() or gathered.done() or waited.done())
    (batch,) = acc.all_queued()
    acc.complete(batch, 100, -1, 0)
    assert (await asyncio.wait_for(awaited, 1)).offset == 100
    assert [m.offset for m in await asyncio.wait_for(gathered, 1)] == [100, 101, 102, 103]
    done, pending = await asyncio.wait_for(waited, 1)
    assert done == set(futs) and not pending
    assert called == [101]
    assert futs[3].result().timestamp == 1003 and futs[3].exception() is None
    # A callback added after completion still runs, on the loop.
    late: list[object] = []
    futs[0].add_done_callback(late.append)
    assert late == []
    await asyncio.sleep(0)
    assert late == [futs[0]]
    assert "offset=100" in repr(futs[0])


async def _await(fut: RecordFuture) -> Any:
    return await fut


async def test_failed_and_cancelled_record_futures() -> None:
    acc, _, _ = make()
    futs = [must(acc.append(T0, None, None, b"v", None)) for _ in range(3)]
    # Up to 3.11 wait_for's timeout cancels the awaited future itself (as it would an
    # asyncio.Future); from 3.12 on it cancels only the wait.
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(futs[0], 0.01)
    assert futs[0].cancelled() == (sys.version_info < (3, 12))
    futs[0].cancel()
    assert futs[0].cancelled() and futs[0].done()
    assert not futs[0].cancel()
    with pytest.raises(asyncio.CancelledError):
        futs[0].result()
    # Cancelling a task awaiting a record leaves the record pending.
    task = asyncio.create_task(_await(futs[1]))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not futs[1].done()
    results = asyncio.ensure_future(asyncio.gather(*futs[1:], return_exceptions=True))
    (batch,) = acc.all_queued()
    acc.fail(batch, ProducerClosed("gone"))
    assert [type(r) for r in await asyncio.wait_for(results, 1)] == [ProducerClosed] * 2
    assert isinstance(futs[2].exception(), ProducerClosed)
    with pytest.raises(ProducerClosed):
        await futs[2]
    assert futs[0].cancelled()  # the cancelled one stays cancelled
    # A batch has one outcome: a late complete() changes nothing.
    acc.complete(batch, 5, -1, 0)
    assert isinstance(futs[1].exception(), ProducerClosed)


# -- splitting a batch the broker refused as too large --------------------------------------


async def test_split_rebuilds_records_in_order_with_their_futures() -> None:
    acc, wakes, _ = make(batch_size=100_000)
    meta = cluster({0: 1})
    futs = [
        must(acc.append(T0, 2000 + i, b"k%d" % i, b"v" * 50, [("h", b"%d" % i)] if i % 3 else None))
        for i in range(40)
    ]
    (batch,) = acc.drain(meta, {1}, 10**6, time.monotonic())[1]
    younger = must(acc.append(T0, 3000, None, b"later", None))
    flushed = acc.begin_flush()
    size = batch.builder.size_in_bytes()
    used_before = acc.used_memory

    parts = acc.split(batch)

    assert len(parts) >= 2
    assert all(p.builder.size_in_bytes() <= max(size // 2, 1) for p in parts)
    assert sum(p.record_count for p in parts) == 40
    assert all(p.closed and p.base_sequence == -1 and p.attempts == 0 for p in parts)
    # Queued first for the partition, in order, before the younger batch.
    queued = acc.all_queued()
    assert queued[: len(parts)] == parts and queued[-1].record_count == 1
    assert acc.used_memory != used_before and wakes
    # The rebuilt records are the original ones (keys, values, headers, timestamps).
    rebuilt = [
        (r[1], r[2], r[3], r[4])
        for p in parts
        for r in next(iter(MemoryRecords(bytes(p.builder.build())))).record_tuples()
    ]
    assert rebuilt == [
        (2000 + i, b"k%d" % i, b"v" * 50, [("h", b"%d" % i)] if i % 3 else []) for i in range(40)
    ]
    # The replaced batch has no say any more (a late fail() from the sender is ignored).
    acc.fail(batch, ProducerClosed("late"))
    assert not any(f.done() for f in futs)
    # Each part resolves its own records' futures; offsets follow each part's base.
    drained = acc.drain(meta, {1}, 10**6, time.monotonic())[1]
    assert drained == [parts[0]]
    acc.complete(parts[0], 500, -1, 0)
    n0 = parts[0].record_count
    assert [f.result().offset for f in futs[:n0]] == list(range(500, 500 + n0))
    assert not futs[n0].done() and not batch.done.done()
    for part in parts[1:]:
        acc.complete(part, 1000 + part.first, -1, 0)
    assert [f.result().offset for f in futs[n0:]] == [1000 + i for i in range(n0, 40)]
    assert futs[7].result().timestamp == 2007
    # flush() waited on the split batch: it is done once every part is.
    await asyncio.sleep(0)
    assert batch.done.done() and all(f.done() for f in flushed if f is not queued[-1].done)
    acc.end_flush()
    assert not younger.done()


async def test_split_twice_and_failures_per_part() -> None:
    acc, _, _ = make(batch_size=100_000)
    futs = [must(acc.append(T0, None, None, b"x" * 100, None)) for _ in range(16)]
    (batch,) = acc.drain(cluster({0: 1}), {1}, 10**6, time.monotonic())[1]
    first, *rest = acc.split(batch)
    again = acc.split(first)
    assert len(again) >= 2 and [p.first for p in again] == sorted(p.first for p in again)
    assert acc.all_queued()[: len(again)] == again  # before the first split's other parts
    assert [b.order for b in acc.all_queued()] == sorted(b.order for b in acc.all_queued())
    for part in again:
        acc.complete(part, 10 * part.first, -1, 0)
    for part in rest:
        acc.fail(part, ProducerClosed("x"))
    n = sum(p.record_count for p in again)
    for part in again:
        for j in range(part.record_count):
            assert futs[part.first + j].result().offset == 10 * part.first + j
    assert all(isinstance(f.exception(), ProducerClosed) for f in futs[n:])
    assert acc.used_memory == 0 and not acc.has_incomplete()


async def test_split_refuses_single_records_and_send_batch_batches() -> None:
    from aiokafka.record import DefaultRecordBatchBuilder

    acc, _, _ = make()
    acc.append(T0, None, None, b"x", None)
    (single,) = acc.all_queued()
    assert acc.split(single) == []
    builder = DefaultRecordBatchBuilder(batch_size=1000)
    builder.append(0, None, None, b"a")
    builder.append(1, None, None, b"b")
    acc.add_batch(T1, builder)
    (whole,) = [b for b in acc.all_queued() if b.tp == T1]
    assert acc.split(whole) == []
