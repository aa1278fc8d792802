"""asyncio client for Apache Kafka.

The public names most programs need are importable from here; everything else lives in
its subpackage (``aiokafka.errors``, ``aiokafka.structs``, ``aiokafka.admin``, ...).
The clients are imported on first use (PEP 562), so that importing an asyncio-free
module such as ``aiokafka.errors`` or ``aiokafka.record`` does not pull in asyncio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.15.0.dev0"

if TYPE_CHECKING:
    from aiokafka.abc import ConsumerRebalanceListener
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.cluster import AIOKafkaClient
    from aiokafka.consumer import AIOKafkaConsumer
    from aiokafka.errors import ConsumerStoppedError, IllegalOperation
    from aiokafka.producer import AIOKafkaProducer
    from aiokafka.share import AIOKafkaShareConsumer
    from aiokafka.structs import (
        ConsumerRecord,
        OffsetAndMetadata,
        OffsetAndTimestamp,
        RecordMetadata,
        TopicPartition,
    )

_LAZY = {
    "AIOKafkaAdminClient": "aiokafka.admin",
    "AIOKafkaClient": "aiokafka.cluster",
    "AIOKafkaConsumer": "aiokafka.consumer",
    "AIOKafkaProducer": "aiokafka.producer",
    "AIOKafkaShareConsumer": "aiokafka.share",
    "ConsumerRebalanceListener": "aiokafka.abc",
    "ConsumerRecord": "aiokafka.structs",
    "ConsumerStoppedError": "aiokafka.errors",
    "IllegalOperation": "aiokafka.errors",
    "OffsetAndMetadata": "aiokafka.structs",
    "OffsetAndTimestamp": "aiokafka.structs",
    "RecordMetadata": "aiokafka.structs",
    "TopicPartition": "aiokafka.structs",
}

__all__ = [
    "AIOKafkaAdminClient",
    "AIOKafkaClient",
    "AIOKafkaConsumer",
    "AIOKafkaProducer",
    "AIOKafkaShareConsumer",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "ConsumerStoppedError",
    "IllegalOperation",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "RecordMetadata",
    "TopicPartition",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'aiokafka' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
