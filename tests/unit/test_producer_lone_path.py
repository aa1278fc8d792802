"""The accumulator's shortcuts on a lone ``send_and_wait``'s path: a new batch's
reservation without a size estimate, and the per-snapshot leader cache of
``ready()``/``drain()``. Each must give what the long way gives."""

from __future__ import annotations

import time
from types import MappingProxyType
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata
from aiokafka.producer.accumulator import FIRST_RESERVE, RecordAccumulator
from aiokafka.record import CODEC_NONE, DefaultRecordBatchBuilder
from aiokafka.structs import BrokerMetadata, PartitionMetadata, TopicPartition

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


def cluster(leaders: dict[int, int], brokers: tuple[int, ...] = (1, 2)) -> ClusterMetadata:
    parts = {
        p: PartitionMetadata("t", p, leader, (leader,), (leader,), 0, 0)
        for p, leader in leaders.items()
    }
    nodes = {n: BrokerMetadata(n, "h", 9092 + n, None) for n in brokers}
    topic = TopicMetadata("t", partitions=MappingProxyType(parts))
    return ClusterMetadata(
        MappingProxyType(nodes), MappingProxyType({"t": topic}), created_at=time.monotonic()
    )


def make(**kw: Any) -> RecordAccumulator:
    options: dict[str, Any] = {
        "batch_size": 1_000_000,
        "buffer_memory": 10_000_000,
        "linger_ms": 0,
        "delivery_timeout_ms": 60000,
        "retry_backoff_ms": 100,
        "codec": CODEC_NONE,
    }
    options.update(kw)
    return RecordAccumulator(**options)


def expected_reserve(acc: RecordAccumulator, key: bytes | None, value: bytes | None) -> int:
    # The rule the shortcut must keep: max(first reserve, estimate), at most batch_size.
    first = min(acc.batch_size, FIRST_RESERVE, acc.buffer_memory)
    return max(first, DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, None))


@pytest.mark.parametrize("batch_size", [1_000_000, FIRST_RESERVE, 300, 100])
async def test_new_batch_reserves_what_the_estimate_says(batch_size: int) -> None:
    # Sizes around every varint step and around the first reserve, with and without
    # a key: the reservation equals the estimate rule's, record by record.
    lengths = sorted(
        {0, 1, 63, 64, 100, 8191, 8192, 16000}
        | {FIRST_RESERVE + d for d in range(-120, 20, 7)}
        | {batch_size + d for d in range(-100, 10, 9) if batch_size + d >= 0}
    )
    for n in lengths:
        for key in (None, b"", b"k" * 70):
            acc = make(batch_size=batch_size)
            value = b"v" * n
            before = acc.used_memory
            future = acc.append_to_new(T0, None, key, value, None)
            assert future is not None
            assert acc.used_memory - before == expected_reserve(acc, key, value), (n, key)


async def test_new_batch_with_headers_or_no_value_reserves_the_estimate() -> None:
    acc = make()
    headers = [("h", b"x" * 20000)]
    acc.append_to_new(T0, None, None, b"v", headers)
    assert acc.used_memory == DefaultRecordBatchBuilder.estimate_size_in_bytes(None, b"v", headers)
    acc = make()
    acc.append_to_new(T0, None, None, None, None)
    assert acc.used_memory == FIRST_RESERVE


async def test_leaders_follow_a_new_snapshot() -> None:
    acc = make(linger_ms=0)
    first = cluster({0: 1, 1: 2})
    acc.append(T0, None, None, b"a", None)
    acc.append(T1, None, None, b"b", None)
    nodes, _, unknown = acc.ready(first, time.monotonic())
    assert nodes == {1, 2} and not unknown
    # The same snapshot again (cached), then one where the leaders swapped and one
    # where T1's leader is not a listed broker: each pass routes by its snapshot.
    assert acc.ready(first, time.monotonic())[0] == {1, 2}
    swapped = cluster({0: 2, 1: 1})
    drained = acc.drain(swapped, {1}, 1_000_000, time.monotonic())
    assert [b.tp for b in drained[1]] == [T1]
    acc.append(T1, None, None, b"c", None)
    gone = cluster({0: 2, 1: 3})
    nodes, _, unknown = acc.ready(gone, time.monotonic())
    assert nodes == {2} and unknown == [T1]
    assert acc.drain(gone, {2, 3}, 1_000_000, time.monotonic()).keys() == {2}
    back = cluster({0: 2, 1: 3}, brokers=(1, 2, 3))
    assert [b.tp for b in acc.drain(back, {3}, 1_000_000, time.monotonic())[3]] == [T1]
