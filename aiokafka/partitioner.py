"""aiokafka 0.14 import path ``aiokafka.partitioner`` (compatibility shim).

``DefaultPartitioner`` (murmur2 for keys, a random available partition otherwise)
lives in :mod:`aiokafka.producer.partitioner`. ``murmur2`` here returns what
aiokafka's did: the hash as an unsigned 32-bit int (the producer's own
:func:`aiokafka.producer.partitioner.murmur2` returns Java's signed int; both pick
the same partition).
"""

from __future__ import annotations

from aiokafka.producer.partitioner import DefaultPartitioner
from aiokafka.producer.partitioner import murmur2 as _signed_murmur2

__all__ = ["DefaultPartitioner", "murmur2"]


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Kafka's murmur2 hash of ``data`` as an unsigned 32-bit int (aiokafka's value)."""
    return _signed_murmur2(data) & 0xFFFFFFFF
