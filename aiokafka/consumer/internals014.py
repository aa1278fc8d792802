"""aiokafka 0.14's private consumer attributes that frameworks read.

Code built on aiokafka 0.14 reads a few of ``AIOKafkaConsumer``'s private attributes;
FastStream 0.7's rebalance listener logs ``consumer._coordinator.member_id``,
``consumer._group_id`` and ``consumer._subscription.topics`` on every assignment, and
an ``AttributeError`` there stops the user's listener from being called. The consumer
answers those names (properties, importing this module on first use) with the views
here, read-only, over its public state; nothing in this package uses them.

faust-streaming 0.15's Kafka driver reads more of them: ``_coordinator._metadata_snapshot``
(``Coordinator014``) and, for every fetch, ``consumer._fetcher`` (``Fetcher014``:
``fetched_records()``, ``_closed`` and ``_subscriptions`` down to a partition's
``highwater``/``timestamp``). The consumer's properties are in ``names014.py``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from aiokafka.consumer.subscription import check_partitions
from aiokafka.structs import TopicPartition

if TYPE_CHECKING:
    from aiokafka.consumer.config import ConsumerConfig
    from aiokafka.structs import ConsumerGroupMetadata

__all__ = ["Coordinator014", "Fetcher014", "Subscription014"]


class _Consumer(Protocol):
    @property
    def config(self) -> ConsumerConfig: ...

    def subscription(self) -> frozenset[str]: ...

    def assignment(self) -> frozenset[TopicPartition]: ...

    def group_metadata(self) -> ConsumerGroupMetadata: ...

    def partitions_for_topic(self, topic: str) -> set[int] | None: ...


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

    @property
    def coordinator_id(self) -> int | None:
        """None: the group coordinator's node id is the client's (faust tags spans)."""
        return None

    async def close(self) -> None:
        """Nothing: faust closes aiokafka's coordinator before it stops the consumer,
        and ``stop()`` leaves the group here."""

    @property
    def _metadata_snapshot(self) -> dict[str, int]:
        """``{topic: number of partitions}`` of the subscribed topics whose metadata is
        known (faust-streaming reads it to check a table's source topic)."""
        snapshot = {}
        for topic in self._consumer.subscription():
            parts = self._consumer.partitions_for_topic(topic)
            if parts is not None:
                snapshot[topic] = len(parts)
        return snapshot


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


class _FetchingConsumer(Protocol):
    def assignment(self) -> frozenset[TopicPartition]: ...

    def highwater(self, partition: TopicPartition) -> int | None: ...

    def last_poll_timestamp(self, partition: TopicPartition) -> int | None: ...

    async def getmany(
        self, *partitions: TopicPartition, timeout_ms: int = 0, max_records: int | None = None
    ) -> Mapping[TopicPartition, Sequence[Any]]: ...


def _as_partition(tp: Any) -> TopicPartition:
    # faust passes its own TP named tuple (see check_partitions).
    (partition,) = check_partitions([tp], "partition")
    return partition


class PartitionState014:
    """aiokafka 0.14's ``TopicPartitionState`` as faust reads it: ``highwater`` and
    ``timestamp`` (ms of the last fetch response, None before one); ``position`` is
    None (the fetch position is ``await consumer.position(tp)`` here)."""

    __slots__ = ("highwater", "position", "timestamp")

    def __init__(self, highwater: int | None, timestamp: int | None) -> None:
        self.highwater = highwater
        self.position: int | None = None
        self.timestamp = timestamp


class Assignment014:
    """aiokafka 0.14's ``subscription.assignment``: ``active``, ``tps`` and
    ``state_value(tp)`` (None for a partition not assigned)."""

    __slots__ = ("_consumer", "tps")

    def __init__(self, consumer: _FetchingConsumer, tps: frozenset[TopicPartition]) -> None:
        self._consumer = consumer
        self.tps = tps

    @property
    def active(self) -> bool:
        return self.tps == self._consumer.assignment()

    def state_value(self, tp: Any) -> PartitionState014 | None:
        tp = _as_partition(tp)
        if tp not in self.tps:
            return None
        return PartitionState014(
            self._consumer.highwater(tp), self._consumer.last_poll_timestamp(tp)
        )


class _Subscription014:
    __slots__ = ("_consumer",)

    def __init__(self, consumer: _FetchingConsumer) -> None:
        self._consumer = consumer

    @property
    def assignment(self) -> Assignment014 | None:
        tps = self._consumer.assignment()
        return Assignment014(self._consumer, tps) if tps else None


class SubscriptionState014:
    """aiokafka 0.14's ``fetcher._subscriptions``: ``subscription.assignment`` and
    ``fetch_context()`` (a no-op here: nothing reads aiokafka 0.14's idle time)."""

    __slots__ = ("subscription",)

    def __init__(self, consumer: _FetchingConsumer) -> None:
        self.subscription = _Subscription014(consumer)

    @contextlib.contextmanager
    def fetch_context(self) -> Iterator[None]:
        yield


class Fetcher014:
    """aiokafka 0.14's ``consumer._fetcher`` as faust-streaming uses it.

    ``fetched_records(partitions, timeout=0, max_records=None)`` is
    ``consumer.getmany(*partitions, timeout_ms=timeout * 1000, max_records=...)``
    (seconds, as in 0.14; no partitions means all assigned ones), ``_closed`` whether
    the consumer was stopped.
    """

    __slots__ = ("_consumer", "_is_closed", "_subscriptions")

    def __init__(self, consumer: _FetchingConsumer, is_closed: Callable[[], bool]) -> None:
        self._consumer = consumer
        self._is_closed = is_closed
        self._subscriptions = SubscriptionState014(consumer)

    @property
    def _closed(self) -> bool:
        return self._is_closed()

    async def fetched_records(
        self,
        partitions: Iterable[Any] | None,
        timeout: float | None = 0,
        max_records: int | None = None,
    ) -> Mapping[TopicPartition, Sequence[Any]]:
        tps = [_as_partition(tp) for tp in partitions or ()]
        return await self._consumer.getmany(
            *tps, timeout_ms=int((timeout or 0) * 1000), max_records=max_records
        )
