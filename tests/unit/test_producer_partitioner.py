"""murmur2 against the Java client's own test vectors, and sticky partitioning."""

from __future__ import annotations

import random

import pytest

from aiokafka.producer.partitioner import (
    DefaultPartitioner,
    StickyPartitionState,
    murmur2,
    murmur2_partition,
)

# org.apache.kafka.common.utils.UtilsTest#testMurmur2
JAVA_VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (bytes([ord("a"), ord("b"), ord("c")]), 479470107),
]


@pytest.mark.parametrize(("data", "expected"), JAVA_VECTORS)
def test_murmur2_matches_java(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


def test_murmur2_accepts_bytes_like_and_empty() -> None:
    assert murmur2(bytearray(b"foobar")) == murmur2(memoryview(b"foobar")) == -790332482
    # Every tail length (0..3 extra bytes) goes through a different branch.
    values = {murmur2(b"x" * n) for n in range(9)}
    assert len(values) == 9
    assert all(-(2**31) <= v < 2**31 for v in values)


def test_murmur2_partition_is_positive_modulo() -> None:
    # toPositive(murmur2) % n, as in Java's BuiltInPartitioner.partitionForKey.
    for data, h in JAVA_VECTORS:
        for n in (1, 3, 7, 100):
            assert murmur2_partition(data, n) == (h & 0x7FFFFFFF) % n


def test_default_partitioner_keys_and_keyless() -> None:
    p = DefaultPartitioner()
    assert p(b"foobar", [0, 1, 2], [0, 1, 2]) == murmur2_partition(b"foobar", 3)
    # Keyless: only available partitions.
    assert {p(None, [0, 1, 2, 3], [2]) for _ in range(20)} == {2}


def test_sticky_stays_until_batch_completes() -> None:
    state = StickyPartitionState(random.Random(1))
    parts = (0, 1, 2, 3)
    first = state.partition("t", parts, parts)
    assert all(state.partition("t", parts, parts) == first for _ in range(50))
    # A batch of another partition completing changes nothing.
    state.on_batch_complete("t", (first + 1) % 4, parts, parts)
    assert state.partition("t", parts, parts) == first
    state.on_batch_complete("t", first, parts, parts)
    second = state.partition("t", parts, parts)
    assert second != first
    # Topics are independent.
    other = state.partition("u", parts, parts)
    state.on_batch_complete("u", other, parts, parts)
    assert state.partition("t", parts, parts) == second


def test_sticky_prefers_available_and_spreads() -> None:
    state = StickyPartitionState(random.Random(7))
    seen = set()
    for _ in range(200):
        p = state.partition("t", (0, 1, 2, 3), (1, 3))
        seen.add(p)
        state.on_batch_complete("t", p, (0, 1, 2, 3), (1, 3))
    assert seen == {1, 3}
    # One partition only: it is chosen again (no endless loop).
    state.on_batch_complete("t", 0, (0,), (0,))
    single = StickyPartitionState()
    assert single.partition("s", (0,), ()) == 0
    single.on_batch_complete("s", 0, (0,), ())
    assert single.partition("s", (0,), ()) == 0


def test_batch_closed_on_a_lone_available_partition_keeps_the_choice() -> None:
    # The producer skips the sticky state when the closed batch's partition is the
    # only available one (nothing to move to); otherwise the state moves on.
    from aiokafka.cluster.metadata import ClusterMetadata
    from aiokafka.producer.producer import _sticky_batch_closed, _TopicEntry
    from aiokafka.structs import TopicPartition

    state = StickyPartitionState(random.Random(3))
    tps = {p: TopicPartition("t", p) for p in range(3)}
    lone = _TopicEntry(ClusterMetadata(), (0, 1, 2), (1,), tps)
    lone.sticky = tps[state.partition("t", lone.all_partitions, lone.available)]
    assert lone.sticky is tps[1]
    _sticky_batch_closed({"t": lone}, state, tps[1])
    assert lone.sticky is tps[1]
    assert state.partition("t", lone.all_partitions, lone.available) == 1

    # A stale choice (made before the entry) is not kept: the state chooses again.
    stale = _TopicEntry(ClusterMetadata(), (0, 1, 2), (2,), tps)
    stale.sticky = tps[1]
    _sticky_batch_closed({"t": stale}, state, tps[1])
    assert stale.sticky is None
    assert state.partition("t", stale.all_partitions, stale.available) == 2

    several = _TopicEntry(ClusterMetadata(), (0, 1, 2), (0, 1, 2), tps)
    several.sticky = tps[2]
    _sticky_batch_closed({"t": several}, state, tps[2])
    assert several.sticky is None
    assert state.partition("t", several.all_partitions, several.available) != 2
