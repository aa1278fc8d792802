"""The consumer's look-ups that leave its positions alone: first and last offsets,
offsets by timestamp, topics and partitions.

A base class of :class:`~aiokafka.consumer.AIOKafkaConsumer`, split from its module by
responsibility; every method here reads the consumer's config and, after
``start()``, asks its offsets client or cluster client. :func:`load_assigned` is what
``start()`` waits for when partitions were assigned before it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from aiokafka.errors import KafkaError
from aiokafka.structs import OffsetAndTimestamp, TopicPartition

if TYPE_CHECKING:
    from aiokafka.cluster import AIOKafkaClient

    from .config import ConsumerConfig
    from .fetcher import Fetcher
    from .offsets import OffsetsClient

__all__ = ["OffsetLookups", "load_assigned"]

log = logging.getLogger(__name__)


async def load_assigned(
    client: AIOKafkaClient, partitions: frozenset[TopicPartition], timeout: float
) -> None:
    """Wait until ``client`` knows a leader of each of ``partitions`` and is connected
    to it, for at most ``timeout`` seconds.

    aiokafka's ``start()`` waits for the metadata of the topics assigned before it
    (its ``_wait_topics``), over a connection to a broker; the fetcher's first
    position look-up then goes out as soon as ``start()`` returns. Without that wait
    a record written right after ``start()`` (FastStream's manual-partition
    subscriber and its publisher) could land before the look-up, and
    ``auto_offset_reset="latest"`` would skip it. The caller holds the topics'
    metadata interest (the bootstrap request names them).

    Where aiokafka raised UnknownTopicOrPartitionError after ``request_timeout_ms``
    (or TopicAuthorizationFailedError at once), this gives up quietly: the fetcher
    keeps waiting for a missing topic, as the Java consumer does, and reports a
    refused one from getone()/getmany().
    """
    from aiokafka._timeout import wait_for  # no cancellation lost (Python < 3.12)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        cluster = client.cluster
        refused = cluster.unauthorized_topics
        leaders = {cluster.leader_for(tp) for tp in partitions if tp.topic not in refused}
        if None not in leaders:
            break
        remaining = deadline - loop.time()
        if remaining <= 0:
            log.debug("start(): no leader known yet for some of %s", sorted(partitions))
            return
        try:
            # Spaced by the client's refresh throttle (retry_backoff_ms and up).
            await wait_for(client.request_refresh("start(): assigned topics"), remaining)
        except asyncio.TimeoutError:  # not yet the builtin TimeoutError on 3.10
            continue  # past the deadline: logged at the top
        except KafkaError as exc:
            log.debug("start(): metadata of the assigned topics failed: %s", exc)
            if not exc.retriable:
                return  # e.g. the client is closing: asking again would fail at once
    remaining = max(0.0, deadline - loop.time())
    ready = [client.ready(node) for node in leaders if node is not None]
    try:
        # A leader that cannot be reached now is the fetcher's to retry, as before:
        # start() does not fail for it.
        await wait_for(asyncio.gather(*ready, return_exceptions=True), remaining)
    except asyncio.TimeoutError:
        log.debug("start(): leaders of the assigned partitions not connected yet")


class OffsetLookups:
    """Offset and metadata look-ups of :class:`~aiokafka.consumer.AIOKafkaConsumer`."""

    _config: ConsumerConfig
    _client: AIOKafkaClient | None

    def _started(self) -> tuple[AIOKafkaClient, Fetcher, OffsetsClient]:
        raise NotImplementedError  # the consumer's: its parts, or an error before start()

    async def beginning_offsets(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """The first available offset of each partition (positions are not changed).

        Raises:
            aiokafka.errors.KafkaTimeoutError: not answered within request_timeout_ms.
        """
        from .offsets import EARLIEST_TIMESTAMP  # loaded by start()

        _, _, offsets = self._started()
        isolation = self._config.isolation_level_code
        return await offsets.special_offsets(partitions, EARLIEST_TIMESTAMP, isolation)

    async def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The offset after the last record (the LSO under read_committed).

        Raises:
            aiokafka.errors.KafkaTimeoutError: not answered within request_timeout_ms.
        """
        from .offsets import LATEST_TIMESTAMP  # loaded by start()

        _, _, offsets = self._started()
        isolation = self._config.isolation_level_code
        return await offsets.special_offsets(partitions, LATEST_TIMESTAMP, isolation)

    async def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The earliest offset whose timestamp is >= the given one, per partition.

        Args:
            timestamps: ``{tp: timestamp in ms since the epoch}``.

        Returns:
            ``{tp: OffsetAndTimestamp}``, ``None`` where no such record exists.

        Raises:
            ValueError: a timestamp is negative or not an int.
            aiokafka.errors.KafkaTimeoutError: not answered within request_timeout_ms.
        """
        _, _, offsets = self._started()
        return await offsets.offsets_for_times(timestamps, self._config.isolation_level_code)

    async def topics(self) -> set[str]:
        """All topics the user may see (without internal ones such as
        ``__consumer_offsets`` unless ``exclude_internal_topics=False``)."""
        client, _, _ = self._started()
        metadata = await client.fetch_all_metadata()
        exclude = self._config.exclude_internal_topics
        return {name for name, t in metadata.topics.items() if not (t.is_internal and exclude)}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        """Partition numbers of ``topic`` from cached metadata, or None if unknown."""
        if self._client is None:
            return None
        parts = self._client.cluster.partitions_for_topic(topic)
        return None if parts is None else set(parts)
