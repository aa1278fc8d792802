"""The Kafka consumer: subscription state, fetching and consumer-group membership.

:class:`ConsumerConfig` is imported on first use (PEP 562), as the facade does with
its ``config`` module: the config dataclasses load with the first consumer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiokafka._extensions import lazy_exports
from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.consumer.subscription import SubscriptionState

if TYPE_CHECKING:
    from aiokafka.consumer.config import ConsumerConfig

__all__ = ["AIOKafkaConsumer", "ConsumerConfig", "SubscriptionState"]


__getattr__, __dir__ = lazy_exports(__name__, {"ConsumerConfig": "config"}, globals())
