"""Subscriptions without a group: every partition of the subscribed topics, kept current.

Without a ``group_id``, ``subscribe()`` assigns every partition of the subscribed
topics (a list, or those matching a pattern), as aiokafka does. Topics and partitions
come and go while the consumer runs, so :class:`NoGroupAssigner` re-resolves the
subscription on every metadata update:

* a topic list: when the client installs a new metadata snapshot (its periodic
  refresh every ``metadata_max_age_ms``, or one the fetcher asked for), partitions
  added to a subscribed topic are assigned;
* a pattern: every ``metadata_max_age_ms`` the metadata of *all* topics is fetched
  (the client's cache only tracks the topics in use) and the pattern matched again,
  so a topic created after ``subscribe(pattern=...)`` is picked up; internal topics
  never match while ``exclude_internal_topics`` is set.

Partitions kept keep their positions; new ones have none, so the fetcher looks them
up like any other (``auto_offset_reset``, since there is no group to have committed).

Task (see ``docs/DESIGN.md``): :meth:`NoGroupAssigner.start` starts one loop that
wakes every ``min(metadata_max_age_ms, 1 s)``; :meth:`NoGroupAssigner.close` cancels
and awaits it. The loop does nothing unless the consumer is subscribed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Iterable

from aiokafka._tasks import cancel_and_wait
from aiokafka.cluster import AIOKafkaClient
from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.errors import KafkaError
from aiokafka.structs import TopicPartition

from .subscription import SubscriptionState

__all__ = ["NoGroupAssigner", "matching_topics"]

log = logging.getLogger(__name__)

# How often the loop looks for a new client snapshot at most: a generation compare,
# so cheap, but a snapshot is only installed every metadata_max_age_ms anyway.
_MAX_TICK = 1.0


def matching_topics(
    metadata: ClusterMetadata, pattern: re.Pattern[str], exclude_internal: bool
) -> frozenset[str]:
    """Topics of ``metadata`` whose name matches ``pattern`` (``re.match``, as aiokafka).

    Internal topics (``__consumer_offsets``, ...) never match with
    ``exclude_internal``; topics that came back with an error (being created or
    deleted) match once the metadata has them without one.
    """
    return frozenset(
        name
        for name, t in metadata.topics.items()
        if pattern.match(name) and not (t.is_internal and exclude_internal) and not t.error_code
    )


def _partitions(topics: Iterable[str], snapshots: list[ClusterMetadata]) -> list[TopicPartition]:
    # Per topic, the newest snapshot that knows it: the all-topics snapshot of a
    # pattern check can be newer than the client's cache, or older.
    ordered = sorted(snapshots, key=lambda s: s.created_at, reverse=True)
    result: list[TopicPartition] = []
    for topic in sorted(topics):
        for snapshot in ordered:
            found = snapshot.partitions_for_topic(topic)
            if found is not None:
                result.extend(TopicPartition(topic, p) for p in sorted(found))
                break
    return result


class NoGroupAssigner:
    """Keeps the assignment of a consumer without ``group_id`` equal to every
    partition of its subscribed topics (see the module docstring).

    Args:
        client: The consumer's started client.
        subscriptions: The consumer's subscription state.
        exclude_internal_topics: The consumer's option of that name.
    """

    def __init__(
        self,
        client: AIOKafkaClient,
        subscriptions: SubscriptionState,
        exclude_internal_topics: bool,
    ) -> None:
        self._client = client
        self._subs = subscriptions
        self._exclude_internal = exclude_internal_topics
        self._period = max(client.config.metadata_max_age_ms / 1000, 0.01)
        # One update at a time: the loop and getmany()'s resolve of a new subscription
        # would otherwise install assignments computed from different snapshots in
        # whichever order their awaits finish.
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._all_topics: ClusterMetadata | None = None
        self._all_topics_at = 0.0
        self._seen_generation = -1
        #: The subscribed topics, as the client's metadata interest.
        self._interest = client.topic_interest("subscription without group")

    def start(self) -> None:
        """Start the loop (once, from the running event loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="aiokafka-consumer-no-group")

    async def close(self) -> None:
        """Cancel the loop and wait for it."""
        task, self._task = self._task, None
        await cancel_and_wait(task)
        self._interest.close()

    async def _run(self) -> None:
        tick = min(self._period, _MAX_TICK)
        while True:
            await asyncio.sleep(tick)
            try:
                await self.update()
            except KafkaError as exc:
                # Metadata unavailable for now: the assignment stays; next tick retries.
                log.debug("Resolving the subscription failed: %r", exc)

    async def update(self, force: bool = False) -> None:
        """Assign every partition of the subscribed topics.

        Args:
            force: Resolve now even if no new metadata arrived (a new subscription):
                a pattern fetches the metadata of all topics at once.

        Raises:
            aiokafka.errors.KafkaError: metadata could not be fetched.
        """
        async with self._lock:
            subs = self._subs
            if not subs.partitions_auto_assigned:
                return
            pattern = subs.subscribed_pattern
            if pattern is not None:
                due = time.monotonic() - self._all_topics_at >= self._period
                if force or due or self._all_topics is None:
                    metadata = await self._client.fetch_all_metadata()
                    self._all_topics, self._all_topics_at = metadata, time.monotonic()
                    if subs.subscribed_pattern is not pattern:
                        return  # re-subscribed meanwhile; the caller resolves that one
                    matched = matching_topics(metadata, pattern, self._exclude_internal)
                    if matched != subs.subscribed_topics:
                        log.info("Pattern %r now matches %s", pattern.pattern, sorted(matched))
                        subs.change_subscription(matched)
                    force = True
            topics = subs.subscribed_topics
            if topics != self._interest.topics:
                # The fetcher needs leaders of these topics from the client's cache.
                await self._interest.set(topics)
                force = True
            cluster = self._client.cluster
            if not force and cluster.generation == self._seen_generation:
                return
            if (
                not subs.partitions_auto_assigned
                or subs.subscribed_topics != topics
                or subs.subscribed_pattern is not pattern
            ):
                return  # the subscription changed while the metadata was awaited
            self._seen_generation = cluster.generation
            snapshots = [cluster]
            if pattern is not None and self._all_topics is not None:
                snapshots.append(self._all_topics)
            partitions = _partitions(topics, snapshots)
            if frozenset(partitions) != subs.assigned_partitions():
                log.debug("Assigning %d partitions of %s", len(partitions), sorted(topics))
                subs.assign_from_subscribed(partitions)
