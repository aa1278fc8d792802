"""Share-group membership: the ShareGroupHeartbeat loop (KIP-932).

The member sends its subscription in heartbeats; the group coordinator answers with
the member epoch and the partitions assigned to it (by topic id). Unlike a consumer
group there is no revocation handshake: a share group's partitions are shared, so the
member only follows the assignment it is given.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import uuid

from aiokafka._tasks import cancel_and_wait
from aiokafka._timeout import wait_for
from aiokafka.cluster.client import AIOKafkaClient, CoordinatorType
from aiokafka.cluster.connections import ConnectionGroup
from aiokafka.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    FencedMemberEpochError,
    KafkaError,
    NotCoordinatorError,
    UnknownMemberIdError,
    for_code,
)
from aiokafka.metrics.share import ShareCoordinatorMetrics
from aiokafka.protocol import messages as _messages
from aiokafka.structs import TopicPartition

log = logging.getLogger(__name__)

_REJOIN = (UnknownMemberIdError, FencedMemberEpochError)
_COORDINATOR = (NotCoordinatorError, CoordinatorNotAvailableError, CoordinatorLoadInProgressError)


def new_member_id() -> str:
    """A client-generated member id (a random UUID in URL-safe base64, as Kafka's)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class ShareMembership:
    """Owns the heartbeat task of one share-group member.

    Args:
        client: The consumer's client.
        group_id: The share group.
        rack_id: ``client_rack`` of the consumer, or ``None``.
        retry_backoff_ms: Wait after a failed heartbeat.
    """

    def __init__(
        self, client: AIOKafkaClient, group_id: str, *, rack_id: str | None, retry_backoff_ms: int
    ) -> None:
        self._client = client
        self.group_id = group_id
        self.member_id = new_member_id()
        self.member_epoch = 0
        self._rack_id = rack_id
        self._backoff = retry_backoff_ms / 1000
        self._topics: list[str] = []
        self._interval = 1.0
        self.assignment: frozenset[TopicPartition] = frozenset()
        self.changed = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.error: KafkaError | None = None
        #: Heartbeats and assignment changes of this member.
        self.metrics = ShareCoordinatorMetrics()

    def check(self) -> None:
        """Raise the error that stops this member from working: a non-retriable
        heartbeat error, or whatever ended the heartbeat task.

        Raises:
            aiokafka.errors.KafkaError: and anything the task died of.
        """
        if self.error is not None:
            raise self.error
        task = self._task
        if task is not None and task.done() and not task.cancelled():
            exc = task.exception()
            if exc is not None:
                raise exc

    def subscribe(self, topics: list[str]) -> None:
        """Heartbeat the new subscription now (empty: no partitions wanted)."""
        self._topics = sorted(set(topics))
        self._wake.set()

    def start(self) -> None:
        """Start the heartbeat task."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=f"share-heartbeat-{self.group_id}")

    async def stop(self, timeout: float) -> None:
        """Cancel the heartbeat task and leave the group (epoch -1), within ``timeout``."""
        task, self._task = self._task, None
        await cancel_and_wait(task)
        if self.member_epoch > 0:
            self.member_epoch = -1
            try:
                await wait_for(self._heartbeat(), timeout)
            except (KafkaError, asyncio.TimeoutError) as exc:
                log.info("Share group %s: leaving failed: %s", self.group_id, exc)
        self.assignment = frozenset()

    async def _loop(self) -> None:
        while True:
            try:
                await self._heartbeat()
                self.error = None  # e.g. an authorization error that an ACL fixed
                delay = self._interval
            except _REJOIN as exc:
                log.info("Share group %s: %s; rejoining", self.group_id, exc)
                self.member_epoch = 0
                delay = 0.0
            except _COORDINATOR as exc:
                self._client.invalidate_coordinator(self.group_id, CoordinatorType.GROUP)
                log.debug("Share group %s: %s", self.group_id, exc)
                delay = self._backoff
            except KafkaError as exc:
                log.warning("Share group %s heartbeat failed: %s", self.group_id, exc)
                self.error = exc if not exc.retriable else None
                delay = self._backoff
            self._wake.clear()
            try:
                await wait_for(self._wake.wait(), delay)
            except asyncio.TimeoutError:
                pass

    async def _heartbeat(self) -> None:
        body = _messages.ShareGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            rack_id=self._rack_id,
            subscribed_topic_names=self._topics,
        )
        node = await self._client.coordinator_for(self.group_id, CoordinatorType.GROUP)
        started = time.monotonic()
        resp = await self._client.send(node, body, group=ConnectionGroup.COORDINATION)
        self.metrics.heartbeat_done(started)
        if resp.error_code:
            raise for_code(resp.error_code)(
                f"ShareGroupHeartbeat({self.group_id}): {resp.error_message or ''}"
            )
        if self.member_epoch < 0:
            return
        self.member_epoch = resp.member_epoch
        if resp.heartbeat_interval_ms > 0:
            self._interval = resp.heartbeat_interval_ms / 1000
        if resp.assignment is not None:
            await self._install(resp.assignment.topic_partitions)

    async def _install(
        self, topic_partitions: list[_messages.ShareGroupHeartbeatResponseTopicPartitions]
    ) -> None:
        cluster = self._client.cluster
        names = {}
        for tps in topic_partitions:
            name = cluster.topic_name(tps.topic_id)
            if name is None:
                cluster = await self._client.refresh_metadata()
                name = cluster.topic_name(tps.topic_id)
            if name is not None:
                names[tps.topic_id] = name
        assignment = frozenset(
            TopicPartition(names[t.topic_id], p)
            for t in topic_partitions
            if t.topic_id in names
            for p in t.partitions
        )
        if assignment != self.assignment:
            log.info("Share group %s: assigned %s", self.group_id, sorted(assignment))
            self.assignment = assignment
            self.metrics.assignment_changed(len(assignment))
            self.changed.set()
