"""What the producer's sender and transaction manager and the consumer's fetcher (and
the offset and validation requests it makes) and group membership need from the cluster
client.

Each is a :class:`typing.Protocol` that :class:`~aiokafka.cluster.client.AIOKafkaClient`
satisfies structurally. Those classes take one of these instead of the client itself,
which says what they depend on, and lets a unit test hand them a small double (no
broker, no ``type: ignore``) that a type checker still holds to the client's
signatures.

The methods' own documentation is the client's; the parameters before ``/`` are
positional-only, so a double may name them as it likes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from aiokafka.cluster.client import CoordinatorType
    from aiokafka.cluster.config import ClientConfig
    from aiokafka.cluster.connections import ConnectionGroup
    from aiokafka.cluster.interest import InterestHandle
    from aiokafka.cluster.metadata import ClusterMetadata
    from aiokafka.net.connection import OnAnswer
    from aiokafka.protocol.request import Request
    from aiokafka.structs import BrokerMetadata, TopicPartition

__all__ = [
    "BrokerRequests",
    "CoordinatorRequests",
    "FetcherClient",
    "GroupClient",
    "MetadataView",
    "OffsetsRequestClient",
    "SenderClient",
    "TransactionClient",
]

_R = TypeVar("_R")
_T = TypeVar("_T")


class BrokerRequests(Protocol):
    """Requests to one broker by node id (``AIOKafkaClient.send`` / ``api_version``)."""

    async def api_version(
        self,
        node_id: int,
        api_key: int,
        /,
        max_version: int | None = None,
        group: ConnectionGroup = ...,
    ) -> int: ...

    async def send(
        self,
        node_id: int,
        request: Request[_R],
        /,
        *,
        group: ConnectionGroup = ...,
        max_version: int | None = None,
        timeout_ms: int | None = None,
    ) -> _R: ...


class MetadataView(Protocol):
    """The metadata snapshot, stale-metadata refreshes and KIP-951 leader hints."""

    @property
    def cluster(self) -> ClusterMetadata: ...

    def request_refresh(self, reason: str, /) -> asyncio.Future[ClusterMetadata]: ...

    def apply_leader_hint(
        self,
        tp: TopicPartition,
        leader_id: int,
        leader_epoch: int,
        endpoints: Iterable[BrokerMetadata],
        /,
    ) -> bool: ...


class CoordinatorRequests(BrokerRequests, Protocol):
    """Coordinator look-ups and the client's retry loop."""

    async def coordinator_for(self, key: str, key_type: CoordinatorType = ..., /) -> int: ...

    async def call_with_retry(
        self,
        fn: Callable[[], Awaitable[_T]],
        deadline: float | None = None,
        /,
        *,
        coordinator: tuple[str, CoordinatorType] | None = None,
    ) -> _T: ...


class SenderClient(CoordinatorRequests, MetadataView, Protocol):
    """What :class:`~aiokafka.producer.sender.Sender` uses: produce to leaders (only
    over open connections; unanswered with ``acks=0``), InitProducerId to the least
    loaded node or the transaction coordinator, metadata refreshes and leader hints."""

    def is_connected(self, node_id: int, /) -> bool: ...

    def least_loaded_node(self) -> int | None: ...

    async def send_without_response(
        self, node_id: int, request: Request[object], /, *, max_version: int | None = ...
    ) -> None: ...

    def write_nowait(
        self,
        node_id: int,
        request: Request[_R],
        on_answer: OnAnswer,
        /,
        *,
        max_version: int | None = ...,
    ) -> bool: ...


class TransactionClient(CoordinatorRequests, Protocol):
    """What :class:`~aiokafka.producer.transactions.TransactionManager` uses: requests
    to the transaction and group coordinators, and the coordinator's finalized
    ``transaction.version``."""

    async def finalized_level(self, node_id: int, feature: str, /) -> int: ...


class OffsetsRequestClient(CoordinatorRequests, Protocol):
    """What :class:`~aiokafka.consumer.offsets.OffsetsClient` uses: ListOffsets to
    leaders, OffsetFetch/OffsetCommit to the group coordinator, topic interest for
    partitions looked up but not assigned."""

    @property
    def config(self) -> ClientConfig: ...

    @property
    def cluster(self) -> ClusterMetadata: ...

    def leader_for(self, tp: TopicPartition, /) -> int: ...

    def topic_interest(self, name: str, /) -> InterestHandle: ...


class FetcherClient(BrokerRequests, MetadataView, Protocol):
    """What :class:`~aiokafka.consumer.fetcher.Fetcher` uses: Fetch and
    OffsetForLeaderEpoch to leaders, metadata interest in the assigned topics,
    stale-metadata refreshes and leader hints."""

    def topic_interest(self, name: str, /) -> InterestHandle: ...


class GroupClient(CoordinatorRequests, Protocol):
    """What a consumer's group membership uses (:mod:`aiokafka.consumer.group`, classic
    and KIP-848): requests to the group coordinator, forgetting it after NOT_COORDINATOR,
    the metadata the assignment reads (the classic leader's full refresh included), topic
    interest, and the client's timeouts."""

    @property
    def config(self) -> ClientConfig: ...

    @property
    def cluster(self) -> ClusterMetadata: ...

    def invalidate_coordinator(self, key: str, key_type: CoordinatorType = ..., /) -> None: ...

    async def fetch_all_metadata(self) -> ClusterMetadata: ...

    def request_refresh(self, reason: str, /) -> asyncio.Future[ClusterMetadata]: ...

    def topic_interest(self, name: str, /) -> InterestHandle: ...
