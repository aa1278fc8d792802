"""The Kafka producer: :class:`AIOKafkaProducer` and its parts.

Modules: ``producer`` (facade), ``config`` (validated options), ``accumulator``
(per-partition batches, buffer memory), ``sender`` (the background task and the
response table), ``partitioner`` (murmur2, sticky), ``idempotence`` (producer id,
epoch, sequences), ``transactional`` (the facade's transaction methods),
``transactions`` / ``txn_state`` (their requests and states).

:class:`ProducerConfig` and :class:`InvalidOptionError` are imported on first use
(PEP 562), as the facade does with its ``config`` module: the config dataclasses load
with the first producer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiokafka._extensions import lazy_exports
from aiokafka.producer.partitioner import DefaultPartitioner, murmur2, murmur2_partition
from aiokafka.producer.producer import AIOKafkaProducer, BatchBuilder

if TYPE_CHECKING:
    from aiokafka.producer.config import InvalidOptionError, ProducerConfig

__all__ = [
    "AIOKafkaProducer",
    "BatchBuilder",
    "DefaultPartitioner",
    "InvalidOptionError",
    "ProducerConfig",
    "murmur2",
    "murmur2_partition",
]


__getattr__, __dir__ = lazy_exports(
    __name__, {"InvalidOptionError": "config", "ProducerConfig": "config"}, globals()
)
