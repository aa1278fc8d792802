"""A stand-in for :class:`~aiokafka.cluster.client.AIOKafkaClient` under the producer's
sender and transaction manager: one broker (node 1), topic ``"t"`` with one partition
it leads, always connected, every retry attempted once. Tests subclass it and answer
``send()`` and ``api_version()`` as their scenario needs.

It satisfies :class:`~aiokafka.cluster.ports.SenderClient` and
:class:`~aiokafka.cluster.ports.TransactionClient`, so it is passed without casts."""

from __future__ import annotations

import asyncio
import time
from types import MappingProxyType
from typing import Any

from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata
from aiokafka.cluster.refresh import MetadataRefresher
from aiokafka.errors import KafkaConnectionError
from aiokafka.producer.accumulator import RecordAccumulator
from aiokafka.producer.config import ProducerConfig
from aiokafka.producer.idempotence import ProducerIdState
from aiokafka.producer.sender import Sender
from aiokafka.producer.transactions import TransactionManager
from aiokafka.record import CODEC_NONE
from aiokafka.structs import BrokerMetadata, PartitionMetadata, RecordMetadata, TopicPartition


def one_partition_metadata() -> ClusterMetadata:
    part = PartitionMetadata("t", 0, 1, (1,), (1,), 0, 0)
    topic = TopicMetadata("t", partitions=MappingProxyType({0: part}))
    return ClusterMetadata(
        MappingProxyType({1: BrokerMetadata(1, "h", 1, None)}),
        MappingProxyType({"t": topic}),
        created_at=time.monotonic(),
    )


class StubClient:
    """The parts of the cluster client the sender and transactions use, minus I/O."""

    def __init__(self) -> None:
        self.cluster = one_partition_metadata()
        self.refreshes = 0
        #: The refresh throttle's retry_backoff_ms and bound (as the client's config).
        self.refresh_backoff_ms = (1.0, 1.0)
        self._refresher: MetadataRefresher | None = None

    def least_loaded_node(self) -> int:
        return 1

    async def coordinator_for(self, key: str, key_type: Any = None) -> int:
        return 1

    async def call_with_retry(self, fn: Any, deadline: Any = None, **kw: Any) -> Any:
        return await fn()

    async def refresh_metadata(self) -> ClusterMetadata:
        self.refreshes += 1
        return self.cluster

    def request_refresh(self, reason: str) -> asyncio.Future[ClusterMetadata]:
        # The client's real refresher (coalescing, throttle) over refresh_metadata().
        if self._refresher is None:
            backoff, bound = self.refresh_backoff_ms
            self._refresher = MetadataRefresher(
                self.refresh_metadata, lambda: 0, retry_backoff_ms=backoff, max_backoff_ms=bound
            )
        return self._refresher.request(reason)

    def apply_leader_hint(self, *args: Any) -> bool:
        return False

    def is_connected(self, node: int) -> bool:
        return True

    async def ready(self, node: int) -> bool:
        return True

    async def finalized_level(self, node: int, feature: str) -> int:
        return 0  # no transaction.version: the version-1 flow

    async def api_version(self, node: int, api_key: int, max_version: int | None = None) -> int:
        raise AssertionError(f"{type(self).__name__} does not answer API {api_key}")

    async def send(self, node: int, request: Any, **kw: Any) -> Any:
        raise AssertionError(f"{type(self).__name__} does not answer {type(request).__name__}")

    def write_nowait(
        self, node: int, request: Any, on_answer: Any, *, max_version: int | None = None
    ) -> bool:
        # As a client with no connection to write on at once: the sender uses send().
        return False


def transactional_sender(
    client: StubClient, ids: ProducerIdState, txn: TransactionManager
) -> tuple[Sender, RecordAccumulator]:
    """A sender (not started) and its accumulator for transactional id ``"tid"``."""
    config = ProducerConfig.from_kwargs(
        transactional_id="tid", retry_backoff_ms=1, request_timeout_ms=1000
    )
    sender: Sender
    acc = RecordAccumulator(
        batch_size=16384,
        buffer_memory=1 << 20,
        linger_ms=0,
        delivery_timeout_ms=config.delivery_timeout_ms,
        retry_backoff_ms=1,
        codec=CODEC_NONE,
        is_transactional=True,
        wakeup=lambda: sender.wakeup(),
    )
    sender = Sender(client, acc, config, ids, txn)
    return sender, acc


async def send_one_in_transaction(
    sender: Sender, acc: RecordAccumulator, txn: TransactionManager
) -> RecordMetadata:
    """Begin a transaction, queue one record for ``t``-0 and run the sender until it
    has an outcome (closing the sender after); its metadata, or its error raised."""
    txn.begin()
    fut = acc.append(TopicPartition("t", 0), None, None, b"v", None)
    assert fut is not None
    sender.start()
    try:
        return await asyncio.wait_for(fut, 5)
    finally:
        await sender.close(1, KafkaConnectionError("closed"))
