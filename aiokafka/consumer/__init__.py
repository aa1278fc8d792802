"""The Kafka consumer: subscription state, fetching and consumer-group membership.

:class:`ConsumerConfig` is imported on first use (PEP 562), as the facade does with
its ``config`` module: the config dataclasses load with the first consumer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.consumer.subscription import SubscriptionState

if TYPE_CHECKING:
    from aiokafka.consumer.config import ConsumerConfig

__all__ = ["AIOKafkaConsumer", "ConsumerConfig", "SubscriptionState"]


def __getattr__(name: str) -> Any:
    if name != "ConsumerConfig":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from aiokafka.consumer.config import ConsumerConfig

    globals()[name] = ConsumerConfig  # later look-ups skip this function
    return ConsumerConfig


def __dir__() -> list[str]:
    return sorted({*globals(), "ConsumerConfig"})
