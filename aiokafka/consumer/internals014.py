"""aiokafka 0.14's private consumer attributes that frameworks read.

Code built on aiokafka 0.14 reads a few of ``AIOKafkaConsumer``'s private attributes;
FastStream 0.7's rebalance listener logs ``consumer._coordinator.member_id``,
``consumer._group_id`` and ``consumer._subscription.topics`` on every assignment, and
an ``AttributeError`` there stops the user's listener from being called. The consumer
answers those names (properties, importing this module on first use) with the views
here, read-only, over its public state; nothing in this package uses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from aiokafka.consumer.config import ConsumerConfig
    from aiokafka.structs import ConsumerGroupMetadata, TopicPartition

__all__ = ["Coordinator014", "Subscription014"]


class _Consumer(Protocol):
    @property
    def config(self) -> ConsumerConfig: ...

    def subscription(self) -> frozenset[str]: ...

    def assignment(self) -> frozenset[TopicPartition]: ...

    def group_metadata(self) -> ConsumerGroupMetadata: ...


class Coordinator014:
    """aiokafka 0.14's ``consumer._coordinator``: ``member_id``, ``group_id`` and
    ``generation`` (``""`` and -1 until the group is joined, and without a group)."""

    __slots__ = ("_consumer",)

    def __init__(self, consumer: _Consumer) -> None:
        self._consumer = consumer

    def _metadata(self) -> ConsumerGroupMetadata | None:
        if self._consumer.config.group_id is None:
            return None
        return self._consumer.group_metadata()

    @property
    def member_id(self) -> str:
        meta = self._metadata()
        return "" if meta is None else meta.member_id

    @property
    def group_id(self) -> str | None:
        return self._consumer.config.group_id

    @property
    def generation(self) -> int:
        meta = self._metadata()
        return -1 if meta is None else meta.generation_id


class Subscription014:
    """aiokafka 0.14's ``consumer._subscription``: ``topics`` and
    ``assigned_partitions()``, as sets."""

    __slots__ = ("_consumer",)

    def __init__(self, consumer: _Consumer) -> None:
        self._consumer = consumer

    @property
    def topics(self) -> set[str]:
        return set(self._consumer.subscription())

    def assigned_partitions(self) -> set[TopicPartition]:
        return set(self._consumer.assignment())
