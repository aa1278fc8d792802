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
