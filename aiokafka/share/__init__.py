"""Share groups (KIP-932): :class:`AIOKafkaShareConsumer` and its record type."""

from .consumer import AIOKafkaShareConsumer
from .records import ShareConsumerRecord

__all__ = ["AIOKafkaShareConsumer", "ShareConsumerRecord"]
