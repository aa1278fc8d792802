"""asyncio client for Apache Kafka.

The public names most programs need are importable from here; everything else lives in
its subpackage (``aiokafka.errors``, ``aiokafka.structs``, ``aiokafka.admin``, ...).
"""

__version__ = "1.0.0.dev0"

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.cluster import AIOKafkaClient
from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import (
    ConsumerRecord,
    OffsetAndMetadata,
    OffsetAndTimestamp,
    RecordMetadata,
    TopicPartition,
)

__all__ = [
    "AIOKafkaAdminClient",
    "AIOKafkaClient",
    "AIOKafkaConsumer",
    "AIOKafkaProducer",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "RecordMetadata",
    "TopicPartition",
    "__version__",
]
