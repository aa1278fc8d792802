"""RecordAccumulator: batching, linger, memory accounting, drain per node, expiry."""

from __future__ import annotations

import asyncio
import time
from types import MappingProxyType
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata
from aiokafka.errors import KafkaTimeoutError, ProducerClosed
from aiokafka.producer.accumulator import RECORD_OVERHEAD, RecordAccumulator
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


def future() -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()


async def test_records_fill_one_batch_then_roll_over() -> None:
    acc, wakes, closed = make()
    futs = [future() for _ in range(30)]
    for f in futs:
        assert acc.append(T0, None, None, b"v" * 90, None, f)
    batches = acc.all_queued()
    assert len(batches) > 1
    assert all(b.closed for b in batches[:-1]) and not batches[-1].closed
    assert sum(b.record_count for b in batches) == 30
    assert closed == [T0] * (len(batches) - 1)
    assert len(wakes) == len(batches)  # one wakeup per new batch, not per record
    assert all(b.builder.size_in_bytes() <= 1000 for b in batches)


async def test_linger_decides_readiness() -> None:
    acc, _, _ = make(linger_ms=50)
    meta = cluster({0: 1, 1: 2})
    acc.append(T0, None, None, b"x", None, future())
    now = time.monotonic()
    nodes, next_check, unknown = acc.ready(meta, now)
    assert nodes == set() and not unknown
    assert 0 < next_check <= 0.05
    nodes, _, _ = acc.ready(meta, now + 0.051)
    assert nodes == {1}
    # A flush makes it ready at once.
    waiters = acc.begin_flush()
    assert len(waiters) == 1
    assert acc.ready(meta, now)[0] == {1}
    acc.end_flush()
    assert acc.ready(meta, now)[0] == set()


async def test_full_batch_ready_without_linger() -> None:
    acc, _, _ = make(linger_ms=10000)
    meta = cluster({0: 1})
    for _ in range(12):
        acc.append(T0, None, None, b"v" * 90, None, future())
    assert acc.ready(meta, time.monotonic())[0] == {1}


async def test_drain_groups_by_leader_one_batch_per_partition() -> None:
    acc, _, _ = make()
    meta = cluster({0: 1, 1: 2, 2: 1})
    for tp in (T0, T1, T2):
        for _ in range(25):  # several batches each
            acc.append(tp, None, b"k", b"v" * 90, None, future())
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
            acc2.append(tp, None, None, b"v" * 90, None, future())
    drained = acc2.drain(meta, {1}, 10, now)
    assert len(drained[1]) == 1


async def test_unknown_leader_reported() -> None:
    acc, _, _ = make()
    acc.append(T0, None, None, b"x", None, future())
    nodes, _, unknown = acc.ready(cluster({0: -1}), time.monotonic())
    assert nodes == set() and unknown


async def test_complete_resolves_futures_with_offsets_and_releases_memory() -> None:
    acc, _, _ = make()
    futs = [future() for _ in range(3)]
    for i, f in enumerate(futs):
        acc.append(T0, 1000 + i, b"k", b"v", [("h", b"1")], f)
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
    futs = [future(), future()]
    for f in futs:
        acc.append(T0, 5, None, b"v", None, f)
    (batch,) = acc.all_queued()
    acc.complete(batch, -1, 99, -1)
    assert [(f.result().offset, f.result().timestamp) for f in futs] == [(-1, 99), (-1, 99)]
    assert futs[0].result().timestamp_type == 1
    assert futs[0].result().log_start_offset is None


async def test_cancelled_record_future_does_not_break_completion() -> None:
    acc, _, _ = make()
    futs = [future(), future()]
    for f in futs:
        acc.append(T0, None, None, b"v", None, f)
    futs[0].cancel()
    (batch,) = acc.all_queued()
    acc.complete(batch, 0, -1, 0)
    assert futs[1].result().offset == 1


async def test_buffer_memory_blocks_then_times_out() -> None:
    acc, _, _ = make(buffer_memory=2000)
    assert acc.append(T0, None, None, b"x", None, future())
    assert acc.append(T1, None, None, b"x", None, future())
    # A third batch does not fit.
    assert not acc.append(T2, None, None, b"x", None, future())
    assert acc.used_memory == 2000
    t0 = time.monotonic()
    with pytest.raises(KafkaTimeoutError, match="buffer_memory"):
        await acc.wait_for_memory(10, 0.05)
    assert 0.04 <= time.monotonic() - t0 < 1.0
    # Existing batches still take records (no new memory needed).
    assert acc.append(T0, None, None, b"x", None, future())


async def test_waiter_wakes_when_memory_is_released() -> None:
    acc, _, _ = make(buffer_memory=2000)
    acc.append(T0, None, None, b"x", None, future())
    acc.append(T1, None, None, b"x", None, future())
    waiter = asyncio.create_task(acc.wait_for_memory(10, 5))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    # While someone waits, new batches are refused to everyone else (FIFO).
    first = acc.all_queued()[0]
    acc.complete(first, 0, -1, 0)
    await asyncio.wait_for(waiter, 1)
    assert acc.append(T2, None, None, b"x", None, future())


async def test_abort_fails_everything_and_wakes_waiters() -> None:
    acc, _, _ = make(buffer_memory=1000)
    f = future()
    acc.append(T0, None, None, b"x", None, f)
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
        acc.append(T0, None, None, b"v" * 90, None, future())
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
    acc.append(T0, None, None, b"x", None, future())
    assert acc.expired(time.monotonic()) == []
    expired = acc.expired(time.monotonic() + 0.02)
    assert len(expired) == 1 and not acc.has_unsent()


async def test_add_batch_closes_open_batch_to_keep_order() -> None:
    from aiokafka.record import DefaultRecordBatchBuilder

    acc, _, closed = make()
    acc.append(T0, None, None, b"a", None, future())
    builder = DefaultRecordBatchBuilder(batch_size=1000)
    builder.append(0, None, None, b"b")
    fut = acc.add_batch(T0, builder)
    acc.append(T0, None, None, b"c", None, future())
    assert [b.record_count for b in acc.all_queued()] == [1, 1, 1]
    assert closed == [T0]
    batches = acc.all_queued()
    acc.complete(batches[1], 10, -1, 0)
    assert fut.result().offset == 10
