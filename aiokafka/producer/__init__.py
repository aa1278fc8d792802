"""The Kafka producer: :class:`AIOKafkaProducer` and its parts.

Modules: ``producer`` (facade), ``config`` (validated options), ``accumulator``
(per-partition batches, buffer memory), ``sender`` (the background task and the
response table), ``partitioner`` (murmur2, sticky), ``idempotence`` (producer id,
epoch, sequences), ``transactional`` (the facade's transaction methods),
``transactions`` / ``txn_state`` (their requests and states).
"""

from __future__ import annotations

from aiokafka.producer.config import InvalidOptionError, ProducerConfig
from aiokafka.producer.partitioner import DefaultPartitioner, murmur2, murmur2_partition
from aiokafka.producer.producer import AIOKafkaProducer, BatchBuilder

__all__ = [
    "AIOKafkaProducer",
    "BatchBuilder",
    "DefaultPartitioner",
    "InvalidOptionError",
    "ProducerConfig",
    "murmur2",
    "murmur2_partition",
]
