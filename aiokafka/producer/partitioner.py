"""Partitioners: Java-compatible murmur2 for keyed records, sticky for keyless ones.

No asyncio here: partitioning is a pure function of the key and the partition list
(plus the sticky choice, which only changes when the accumulator reports a batch of
the sticky partition as complete).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Final

__all__ = [
    "DefaultPartitioner",
    "PartitionerCallable",
    "StickyPartitionState",
    "murmur2",
    "murmur2_partition",
]

#: aiokafka's partitioner signature: ``(key_bytes, all_partitions, available) -> int``.
PartitionerCallable = Callable[[bytes | None, Sequence[int], Sequence[int]], int]

_M: Final = 0x5BD1E995
_SEED: Final = 0x9747B28C
_MASK32: Final = 0xFFFFFFFF


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Kafka's murmur2 hash (``org.apache.kafka.common.utils.Utils.murmur2``).

    Returns:
        The hash as a signed 32-bit int, equal to what the Java client computes.
    """
    data = bytes(data)
    length = len(data)
    h = (_SEED ^ length) & _MASK32
    end = length & ~3
    # Little-endian 4-byte words, as the Java loop assembles them.
    for i in range(0, end, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK32
        k ^= k >> 24
        k = (k * _M) & _MASK32
        h = ((h * _M) & _MASK32) ^ k
    extra = length & 3
    if extra == 3:
        h ^= data[end + 2] << 16
    if extra >= 2:
        h ^= data[end + 1] << 8
    if extra >= 1:
        h ^= data[end]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def murmur2_partition(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """The partition the Java client (and librdkafka's ``murmur2_random``) picks for a
    keyed record: ``(murmur2(key) & 0x7fffffff) % num_partitions``."""
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


class DefaultPartitioner:
    """aiokafka/kafka-python's default partitioner object, kept for callers that pass
    it explicitly: murmur2 for keys, a random available partition for ``None``.

    The producer itself uses murmur2 plus :class:`StickyPartitionState` when no
    ``partitioner`` is configured (sticky batches are larger and cheaper).
    """

    def __call__(
        self, key: bytes | None, all_partitions: Sequence[int], available: Sequence[int]
    ) -> int:
        """Pick a partition (see the class docstring)."""
        if key is None:
            return random.choice(list(available or all_partitions))
        return sorted(all_partitions)[murmur2_partition(key, len(all_partitions))]


class StickyPartitionState:
    """KIP-480 sticky partitioning of keyless records, per topic.

    Keyless records of a topic all go to one partition until a batch of that
    partition completes (it filled up or was sent); then a new partition is chosen
    at random among those with a leader, different from the last one when there is a
    choice. Larger batches mean fewer requests at the same latency.
    """

    __slots__ = ("_current", "_rng")

    def __init__(self, rng: random.Random | None = None) -> None:
        self._current: dict[str, int] = {}
        self._rng = rng if rng is not None else random.Random()

    def partition(self, topic: str, all_partitions: Sequence[int], available: Sequence[int]) -> int:
        """The current sticky partition of ``topic`` (chosen on first use)."""
        current = self._current.get(topic)
        if current is None:
            current = self._choose(topic, all_partitions, available, -1)
        return current

    def on_batch_complete(
        self, topic: str, partition: int, all_partitions: Sequence[int], available: Sequence[int]
    ) -> None:
        """Called when a batch of ``topic``/``partition`` stops taking records; moves
        the topic to another partition if that was its sticky one."""
        if self._current.get(topic) == partition:
            self._choose(topic, all_partitions, available, partition)

    def _choose(
        self, topic: str, all_partitions: Sequence[int], available: Sequence[int], previous: int
    ) -> int:
        candidates = available or all_partitions
        if len(candidates) == 1:
            choice = candidates[0]
        else:
            choice = previous
            while choice == previous:
                choice = candidates[self._rng.randrange(len(candidates))]
        self._current[topic] = choice
        return choice
