"""Offset commits of one consumer: explicit ``commit()``, auto-commit, the commit of
partitions about to be revoked, and the final commit of ``stop()``.

:class:`Committer` owns the auto-commit task and the record of what was last
committed per partition (so unchanged offsets are not committed again). It holds no
reference to the consumer facade: the membership's hooks and the auto-commit task
point here, so a consumer dropped without ``stop()`` can still be garbage-collected
(and warn, see ``AIOKafkaConsumer.__del__``).

Every commit goes through :meth:`Committer.commit_offsets`, aiokafka 0.14's
``GroupCoordinator.commit_offsets`` (:mod:`aiokafka.consumer.group_coordinator` gives
this class that name): tracing integrations written for aiokafka wrap that method to
see commits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping
from typing import Any

from aiokafka._tasks import cancel_and_wait
from aiokafka.errors import IllegalStateError, KafkaError
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from .group.membership import GroupMembership
from .offsets import OffsetsClient, normalize_offsets
from .subscription import SubscriptionState

__all__ = ["Committer"]

log = logging.getLogger(__name__)


class Committer:
    """Commits of one consumer (see the module docstring).

    Args:
        subscriptions: The consumer's subscription state (positions to commit).
        offsets: The consumer's offset requests (standalone commits).
        auto_commit_interval_ms: Auto-commit period, or ``None`` without auto-commit
            (no ``group_id`` or ``enable_auto_commit=False``).
        group_id: The consumer's group (``None`` without one: nothing is committed).

    Attributes:
        group_id: The consumer's group, read-only (aiokafka 0.14's
            ``GroupCoordinator.group_id``, which tracing integrations read).
    """

    def __init__(
        self,
        subscriptions: SubscriptionState,
        offsets: OffsetsClient,
        auto_commit_interval_ms: int | None,
        group_id: str | None = None,
    ) -> None:
        self.group_id = group_id
        self._subs = subscriptions
        self._offsets = offsets
        self._interval_ms = auto_commit_interval_ms
        #: Set and cleared by the consumer: group members commit through it.
        self.membership: GroupMembership | None = None
        self._last_committed: dict[TopicPartition, int] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def auto_commit(self) -> bool:
        """Offsets are committed periodically and before revocation."""
        return self._interval_ms is not None

    def start(self) -> None:
        """Start the auto-commit task (only with a group and auto-commit)."""
        if self._interval_ms is not None and self._task is None:
            self._task = asyncio.create_task(
                self._auto_commit_loop(self._interval_ms / 1000),
                name="aiokafka-consumer-autocommit",
            )

    async def stop(self) -> None:
        """Cancel the auto-commit task and wait for it."""
        task, self._task = self._task, None
        await cancel_and_wait(task)

    def cancel(self) -> None:
        """Cancel the auto-commit task without waiting (an abandoned consumer)."""
        if self._task is not None:
            self._task.cancel()

    # -- explicit commits -------------------------------------------------------------

    def check_commit(
        self, offsets: Mapping[TopicPartition, Any] | None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """What ``commit(offsets)`` commits, checked in aiokafka's order (the consumer
        checks ``group_id`` before).

        Raises:
            IllegalStateError: not subscribed nor assigned; explicit ``offsets``
                while subscribed but before an assignment came (an empty one is
                fine); a partition is not assigned.
            ValueError: ``offsets`` is empty or not a mapping, or a value is
                malformed; for a key that is not a TopicPartition or metadata that
                is not a str the error is also a TypeError (what aiokafka raises).
        """
        subs = self._subs
        if not subs.is_subscribed_or_assigned:
            raise IllegalStateError("Not subscribed to any topics")
        if offsets is None:
            # Unlike aiokafka, commit() before the first assignment commits nothing
            # instead of raising: a listener committing in on_partitions_revoked
            # gets called with set() before the first join too.
            return self.consumed_offsets()
        if subs.partitions_auto_assigned and not subs.assignment_received:
            raise IllegalStateError("No partitions assigned")
        return normalize_offsets(offsets, subs.is_assigned)

    async def commit(
        self, to_commit: dict[TopicPartition, OffsetAndMetadata], log_failure: bool = False
    ) -> None:
        """Commit ``to_commit``: with the generation for a group member (the
        membership waits for a running rebalance), standalone otherwise.

        Raises:
            aiokafka.errors.KafkaError: the commit failed (unless ``log_failure``).
        """
        if not to_commit:
            return  # e.g. commit() of a member the group assigned nothing
        try:
            await self.commit_offsets(self._subs.assigned_partitions(), to_commit)
        except KafkaError as exc:
            if not log_failure:
                raise
            log.warning("Commit of %d partitions failed: %r", len(to_commit), exc)
            return
        for tp, om in to_commit.items():
            self._last_committed[tp] = om.offset

    async def commit_offsets(
        self, assignment: Collection[TopicPartition], offsets: Mapping[TopicPartition, Any]
    ) -> None:
        """Send one commit of ``offsets`` (normalized ``OffsetAndMetadata`` values).

        aiokafka 0.14's ``GroupCoordinator.commit_offsets(assignment, offsets)``: every
        commit (explicit, automatic, before a revocation, at ``stop()``) calls it on
        the class, so Datadog's ``ddtrace``, which wraps that method, sees them all.
        ``assignment`` (the assigned partitions) is not used.

        Raises:
            aiokafka.errors.KafkaError: the commit failed.
        """
        if self.membership is not None:
            await self.membership.commit(dict(offsets))
        else:
            await self._offsets.commit(dict(offsets))

    def consumed_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """The position (and its leader epoch) of every assigned partition that has one."""
        return {
            tp: OffsetAndMetadata(pos, "", leader_epoch=epoch)
            for tp, (pos, epoch) in self._subs.all_consumed_offsets().items()
        }

    def _changed(
        self, wanted: set[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        return {
            tp: om
            for tp, om in self.consumed_offsets().items()
            if (wanted is None or tp in wanted) and self._last_committed.get(tp) != om.offset
        }

    # -- automatic commits ------------------------------------------------------------

    async def commit_revoked(self, partitions: list[TopicPartition]) -> None:
        """``MembershipHooks.commit_revoked``: with auto-commit, commit what was consumed
        of partitions about to be revoked, while this member still owns them. Logs
        failures."""
        if not self.auto_commit:
            return
        changed = self._changed(set(partitions))
        if changed:
            await self.commit(changed, log_failure=True)

    async def commit_consumed(self, final: bool = False) -> None:
        """With auto-commit, commit every position that changed since the last commit.

        Logs failures (a warning for the final one of ``stop()``).
        """
        if not self.auto_commit:
            return
        changed = self._changed()
        if not changed:
            return
        try:
            await self.commit(changed)
        except KafkaError as exc:
            level = logging.WARNING if final else logging.INFO
            log.log(level, "Auto-commit of %d partitions failed: %r", len(changed), exc)

    async def _auto_commit_loop(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.commit_consumed()
