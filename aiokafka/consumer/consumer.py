"""``AIOKafkaConsumer``: the consumer facade.

Tasks owned by a started consumer (see ``docs/DESIGN.md``): the client's maintenance
task, the fetcher's loop (which owns one request task per broker with a Fetch in
flight), with ``group_id`` and ``enable_auto_commit`` the auto-commit task (owned by
the :class:`~aiokafka.consumer.commits.Committer`, which makes every commit), and with
``group_id`` and :meth:`~AIOKafkaConsumer.subscribe` the group membership's task
(joining, heartbeats; see :mod:`aiokafka.consumer.group.membership`), without
``group_id`` the subscription's task (:mod:`aiokafka.consumer.no_group`).
:meth:`AIOKafkaConsumer.stop` runs, in order: cancel auto-commit and the
subscription's task, cancel and await the fetcher, commit the consumed offsets
(group + auto-commit only, bounded by ``request_timeout_ms``), close the membership
(LeaveGroup unless static), close the client. Nothing is left running. A started
consumer garbage-collected without ``stop()`` warns and is released in the background
(:mod:`aiokafka.consumer.leftovers`).
Stop semantics follow aiokafka (see getmany, getone, ``__aiter__``).

``subscribe()`` without a ``group_id`` assigns every partition of the topics (as
aiokafka does without a group), and keeps doing so as topics matching a pattern or
partitions appear; with a ``group_id`` the group assigns them
(``group_protocol="classic"``: JoinGroup/SyncGroup with client-side assignors;
``"consumer"``: KIP-848). Until the first assignment getmany() returns nothing and
getone()/``async for`` wait.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import ConsumerStoppedError, IllegalOperation, IllegalStateError
from aiokafka.hooks import Instrumentable
from aiokafka.options import StartStop
from aiokafka.structs import (
    KT,
    VT,
    ConsumerGroupMetadata,
    ConsumerRecord,
    TopicPartition,
)

from .leftovers import Leftovers
from .lookups import OffsetLookups, load_assigned
from .names014 import Consumer014Names
from .options import ConsumerOptions
from .ready import fast_anext as _fast_anext
from .ready import ready as _ready
from .subscription import BadArgumentError, SubscriptionState, SubscriptionType, check_partitions

if TYPE_CHECKING:
    from aiokafka.cluster import AIOKafkaClient

    from .commits import Committer
    from .config import ConsumerConfig
    from .fetcher import Fetcher
    from .group.membership import GroupMembership
    from .no_group import NoGroupAssigner
    from .offsets import OffsetsClient

__all__ = ["AIOKafkaConsumer"]

log = logging.getLogger(__name__)


class AIOKafkaConsumer(
    ConsumerOptions[KT, VT], OffsetLookups, Consumer014Names, Instrumentable, StartStop
):
    """A client that consumes records from a Kafka cluster.

    The constructor (:class:`~aiokafka.consumer.options.ConsumerOptions`) takes
    ``*topics`` to subscribe to, then every option as a typed keyword; the
    deserializers set the key and value types of the records (``bytes`` without).

    Example::

        async with AIOKafkaConsumer(bootstrap_servers="localhost:9092") as consumer:
            consumer.assign([TopicPartition("events", 0)])
            await consumer.seek_to_beginning()
            async for record in consumer:
                print(record.offset, record.value)
    """

    def _setup(self, config: ConsumerConfig, topics: tuple[str, ...]) -> None:
        # Called by ConsumerOptions.__init__ with the validated options.
        self._config = config
        self._subscriptions = SubscriptionState(self._config.auto_offset_reset)
        self._client: AIOKafkaClient | None = None
        self._record_fetcher: Fetcher | None = None
        self._offsets: OffsetsClient | None = None
        self._committer: Committer | None = None
        self._membership: GroupMembership | None = None
        self._no_group: NoGroupAssigner | None = None
        # unsubscribe() closes the membership in the background; stop() awaits it.
        self._closing_memberships: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._resolved_subscription = -1
        self._subscription_version = 0
        self._membership_started_at = -1  # the subscription version it first joins with
        self._state = "new"  # new -> started -> stopped
        if topics:
            self.subscribe(topics=list(topics))

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to the cluster and start prefetching.

        As in aiokafka, a consumer subscribed to topics before ``start()`` returns
        with its partitions assigned: without ``group_id`` all of them; with one,
        once the group assigned them (at most ``request_timeout_ms`` plus the
        rebalance timeout; then it returns and the assignment comes later).

        Raises:
            IllegalStateError: called twice.
            aiokafka.errors.KafkaConnectionError: no bootstrap server answered.
            aiokafka.errors.KafkaError: a fatal group error while joining (e.g.
                group authorization).
        """
        if self._state != "new":
            raise IllegalStateError(f"AIOKafkaConsumer.start() on a {self._state} consumer")
        self._state = "started"
        self._loop = asyncio.get_running_loop()
        # Loaded by the first start() (import cost): most of the consumer's code, which
        # a program importing the consumer may never run. None imports this module.
        from aiokafka.cluster.client import AIOKafkaClient

        from .commits import Committer
        from .fetcher import Fetcher
        from .group.membership import wait_first_assignment
        from .no_group import NoGroupAssigner
        from .offsets import OffsetsClient

        client = AIOKafkaClient(self._config.client)
        self._subscribed = client.topic_interest("subscription")  # before the bootstrap
        subs = self._subscriptions
        assigned = (
            subs.assigned_partitions() if subs.type is SubscriptionType.USER_ASSIGNED else None
        )
        # Partitions assigned before start(): the bootstrap request names their topics
        # (the fetcher holds them once it runs); see load_assigned().
        at_start = client.topic_interest("assigned before start()")
        at_start.set({tp.topic for tp in assigned or ()})
        try:
            await client.start()
        except BaseException:
            self._state = "stopped"
            raise
        self._client = client
        config = self._config
        self._offsets = OffsetsClient(client, config.group_id, config.group_instance_id)
        self._committer = Committer(
            self._subscriptions,
            self._offsets,
            config.auto_commit_interval_ms
            if config.group_id is not None and config.enable_auto_commit
            else None,
            config.group_id,
        )
        self._record_fetcher = Fetcher(client, self._subscriptions, self._config, self._offsets)
        if self._config.group_id is None:
            self._no_group = NoGroupAssigner(
                client, self._subscriptions, self._config.exclude_internal_topics
            )
        try:
            await self._ensure_subscription()
            if assigned:
                await load_assigned(client, assigned, config.client.request_timeout_ms / 1000)
        except BaseException:
            await self.stop()
            raise
        finally:
            at_start.close()
        self._record_fetcher.start()
        if self._no_group is not None:
            self._no_group.start()
        self._maybe_start_membership()
        self._committer.start()
        client.push_metrics("consumer", self.metrics, config.telemetry_resource)
        membership = self._membership
        if membership is not None and self._subscriptions.type is SubscriptionType.AUTO_TOPICS:
            limit = config.client.request_timeout_ms + config.effective_rebalance_timeout_ms
            try:
                if not await wait_first_assignment(membership, limit / 1000):
                    log.warning("start(): group %r assigned nothing yet", config.group_id)
            except BaseException:
                await self.stop()
                raise

    async def stop(self) -> None:
        """Stop fetching, commit consumed offsets (group + auto-commit), leave the
        group (a static member does not send LeaveGroup, KIP-345) and disconnect.

        Idempotent. Leaves no task behind. The rebalance listener is not called.
        """
        if self._state == "stopped":
            return
        self._state = "stopped"
        committer = self._committer
        if committer is not None:
            await committer.stop()
        if self._no_group is not None:
            await self._no_group.close()
        if self._record_fetcher is not None:
            await self._record_fetcher.close()
        try:
            if committer is not None:
                await committer.commit_consumed(final=True)
        finally:
            try:
                await self._close_membership()
            finally:
                if self._client is not None:
                    await self._client.close()

    def __del__(self, _warn: Callable[..., None] = warnings.warn) -> None:
        # As aiokafka: a started consumer dropped without stop() warns (its
        # connections and tasks were left running). Unlike aiokafka, what it left is
        # then released in the background: nothing is committed, the group is left.
        if getattr(self, "_state", None) != "started":
            return
        self._state = "stopped"
        _warn(f"Unclosed AIOKafkaConsumer {self!r}", ResourceWarning, source=self)
        parts = (self._committer, self._no_group, self._record_fetcher, self._membership)
        Leftovers(*parts, self._closing_memberships, self._client).release_later(self._loop, self)

    async def _close_membership(self) -> None:
        membership, self._membership = self._membership, None
        if self._committer is not None:
            self._committer.membership = None
        if membership is not None:
            await membership.close()
        closing, self._closing_memberships = self._closing_memberships, []
        if closing:
            await asyncio.wait(closing)

    def _maybe_start_membership(self) -> None:
        """Start group membership once started, subscribed and with a ``group_id``."""
        if (
            self._membership is not None
            or self._state != "started"
            or self._config.group_id is None
            or self._client is None
            or self._offsets is None
            or self._record_fetcher is None
            or self._committer is None
            or not self._subscriptions.partitions_auto_assigned
        ):
            return
        from .group.factory import create_membership  # loaded by the first membership
        from .group.membership import MembershipHooks

        # The hooks point at the committer and the fetcher, not at this facade: the
        # membership's task must not keep an abandoned consumer alive (see __del__).
        hooks = MembershipHooks(
            commit_revoked=self._committer.commit_revoked, stop_fetching=self._record_fetcher.forget
        )
        self._membership = create_membership(
            self._client, self._subscriptions, self._config, self._offsets, hooks
        )
        self._committer.membership = self._membership
        self._membership_started_at = self._subscription_version
        self._membership.start()

    def _poll(self) -> None:
        # getone/getmany/__anext__: max_poll_interval_ms bookkeeping and fatal errors.
        membership = self._membership
        if membership is not None:
            membership.poll_called()
            membership.check_errors()

    def _started(self) -> tuple[AIOKafkaClient, Fetcher, OffsetsClient]:
        if self._state == "stopped":
            raise ConsumerStoppedError("the consumer was stopped")
        if self._client is None or self._record_fetcher is None or self._offsets is None:
            raise IllegalStateError("call AIOKafkaConsumer.start() first")
        return self._client, self._record_fetcher, self._offsets

    # -- subscription -------------------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Manually assign partitions, replacing the previous assignment.

        Raises:
            IllegalStateError: the consumer subscribed with :meth:`subscribe`.
            TypeError: an element is not a TopicPartition.
        """
        self._subscriptions.assign_from_user(partitions)

    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions currently assigned to this consumer."""
        return self._subscriptions.assigned_partitions()

    def subscribe(
        self,
        topics: Iterable[str] = (),
        pattern: str | None = None,
        listener: ConsumerRebalanceListener | None = None,
    ) -> None:
        """Subscribe to a list of topics or a pattern.

        Without a ``group_id`` every partition of the matching topics is assigned
        (resolved on :meth:`start` and on the next getone/getmany, then again on
        every metadata update, so new topics and partitions are picked up). With a
        ``group_id`` the group assigns partitions (see the module docstring) and
        ``listener`` is told about every change.

        Raises:
            IllegalStateError: after :meth:`assign`.
            TypeError: neither or both of ``topics`` and ``pattern`` (the error is
                also a ``ValueError``, what this package raised before), or
                ``listener`` is not a ConsumerRebalanceListener.
            ValueError: ``pattern`` is not a valid regular expression.
        """
        names = [topics] if isinstance(topics, str) else list(topics)
        if bool(names) == bool(pattern):
            raise BadArgumentError("subscribe: pass either topics or pattern, not both or neither")
        if listener is not None and not isinstance(listener, ConsumerRebalanceListener):
            raise TypeError("listener must be a ConsumerRebalanceListener")
        if pattern:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid pattern: {exc}") from exc
            self._subscriptions.subscribe_pattern(compiled, listener)
        else:
            self._subscriptions.subscribe(names, listener)
        self._subscription_version += 1
        if self._membership is None:
            self._maybe_start_membership()

    def unsubscribe(self) -> None:
        """Drop the subscription (or manual assignment) and every assigned partition.

        A group member leaves the group (in the background; :meth:`stop` waits for
        it). The rebalance listener is not called.
        """
        membership, self._membership = self._membership, None
        if self._committer is not None:
            self._committer.membership = None
        if membership is not None:
            self._closing_memberships.append(
                asyncio.create_task(membership.close(), name="aiokafka-leave-group")
            )
        self._subscriptions.unsubscribe()
        self._subscription_version += 1

    def subscription(self) -> frozenset[str]:
        """The subscribed topics, as in aiokafka.

        For a pattern, the topics it matched so far: those of the cluster at
        :meth:`start` (or at the first getone/getmany after a later
        :meth:`subscribe`), then updated every ``metadata_max_age_ms`` as topics
        appear or go. After :meth:`assign`, the topics of the assigned partitions.
        """
        subs = self._subscriptions
        if subs.type is SubscriptionType.USER_ASSIGNED:
            return frozenset(tp.topic for tp in subs.assigned_partitions())
        return subs.subscribed_topics

    async def _ensure_subscription(self) -> None:
        subs = self._subscriptions
        if self._resolved_subscription == self._subscription_version:
            return
        if subs.type not in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN):
            self._resolved_subscription = self._subscription_version
            return
        client = self._client
        if client is None:
            return
        if self._config.group_id is None:
            if self._no_group is not None:
                await self._no_group.update(force=True)
            self._resolved_subscription = self._subscription_version
            return
        if subs.type is SubscriptionType.AUTO_PATTERN and subs.subscribed_pattern is not None:
            from .no_group import matching_topics  # loaded by start()

            metadata = await client.fetch_all_metadata()
            exclude = self._config.exclude_internal_topics
            subs.change_subscription(matching_topics(metadata, subs.subscribed_pattern, exclude))
        await self._subscribed.set(subs.subscribed_topics)
        # The group assigns the partitions.
        self._resolved_subscription = self._subscription_version
        # A membership that subscribe() just started joins with these topics already:
        # asking it to rejoin made a second rebalance (aiokafka 0.14 has one). A pattern
        # resolved above can change the topics, and does need it.
        if self._membership is not None and (
            subs.type is SubscriptionType.AUTO_PATTERN
            or self._membership_started_at != self._subscription_version
        ):
            self._membership.subscription_changed()

    # -- consuming ----------------------------------------------------------------------

    def _partitions_arg(self, partitions: tuple[Any, ...]) -> frozenset[TopicPartition] | None:
        if not partitions:
            return self._subscriptions.returnable  # None: every assigned partition
        if self._subscriptions.partitions_auto_assigned:
            # As aiokafka: subscribe() then getone(tp) waits for the group to assign tp.
            return frozenset(check_partitions(partitions))
        return frozenset(self._assigned_args(partitions))

    async def getone(self, *partitions: TopicPartition) -> ConsumerRecord[KT, VT]:
        """Return one record, waiting until one is available.

        Args:
            *partitions: Only return records of these partitions (default: all
                assigned of subscribed topics). With :meth:`subscribe`, one the
                group has yet to assign is waited for, as in aiokafka.

        Raises:
            IllegalStateError: after :meth:`assign`, a partition is not assigned.
            aiokafka.errors.ConsumerStoppedError: the consumer was stopped, also
                while this call waited.
            aiokafka.errors.OffsetOutOfRangeError: the position is out of range and
                ``auto_offset_reset="none"``.
            aiokafka.errors.CorruptRecordError: the partition's next batch is corrupt.
            aiokafka.errors.KafkaError: a fatal group error (e.g. group authorization,
                a fenced static member), raised once.
        """
        _, fetcher, _ = self._started()
        self._poll()
        if self._resolved_subscription != self._subscription_version:
            await self._ensure_subscription()
        tps = self._partitions_arg(partitions)
        while True:
            if not partitions:  # the returnable partitions change with the assignment
                tps = self._subscriptions.returnable
            record = fetcher.next_record(tps)
            if record is not None:
                return record
            await fetcher.wait_for_data(self._wait_slice())
            # Waiting in getone counts as polling; group errors surface here.
            self._poll()

    async def getmany(
        self,
        *partitions: TopicPartition,
        timeout_ms: int = 0,
        max_records: int | None = None,
    ) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        """Return buffered records by partition, waiting up to ``timeout_ms`` for some.

        Args:
            *partitions: Only return records of these partitions (default: all).
            timeout_ms: How long to wait when nothing is buffered (0: do not wait).
            max_records: At most this many records in total (default
                ``max_poll_records``, unlimited if that is ``None``).

        Returns:
            ``{tp: [records]}``; ``{}`` if nothing arrived in time, or if
            :meth:`stop` was called while this call waited (as in aiokafka).

        Raises:
            ValueError: ``timeout_ms`` negative or ``max_records`` < 1.
            aiokafka.errors.ConsumerStoppedError: the consumer was stopped before
                the call.
            aiokafka.errors.KafkaError: a partition's error (out of range with
                ``auto_offset_reset="none"``, corrupt batch, authorization), or a
                fatal group error (raised once).
        """
        _, fetcher, _ = self._started()
        if not isinstance(timeout_ms, int | float) or timeout_ms < 0:
            raise ValueError(f"timeout_ms must be a number >= 0, got {timeout_ms!r}")
        if max_records is None:
            max_records = self._config.max_poll_records
        elif not isinstance(max_records, int) or isinstance(max_records, bool) or max_records < 1:
            raise ValueError(f"max_records must be a positive int, got {max_records!r}")
        self._poll()
        if self._resolved_subscription != self._subscription_version:
            await self._ensure_subscription()
        tps = self._partitions_arg(partitions)
        subs = self._subscriptions

        def take() -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
            # Without partitions: those returnable now (the assignment may change).
            return fetcher.drain(tps if partitions else subs.returnable, max_records)

        records = take()
        if records or timeout_ms == 0:
            return records
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return take()
            slice_ = self._wait_slice()
            try:
                waited = await fetcher.wait_for_data(
                    remaining if slice_ is None else min(remaining, slice_)
                )
            except ConsumerStoppedError:
                # As aiokafka: a call interrupted by stop() returns nothing; the
                # caller notices the stop at its next call.
                if self._state == "stopped":
                    return {}
                raise
            if not waited:
                return take()
            self._poll()
            records = take()
            if records:
                return records

    def _wait_slice(self) -> float | None:
        # A group member wakes up now and then while waiting for records, to note
        # the poll (max_poll_interval_ms) and to raise fatal group errors.
        if self._membership is None:
            return None
        return min(1.0, self._config.heartbeat_interval_ms / 1000)

    def __aiter__(self) -> AsyncIterator[ConsumerRecord[KT, VT]]:
        """Iterate over records (``async for``) until :meth:`stop` is called.

        Raises:
            aiokafka.errors.ConsumerStoppedError: the consumer is already stopped
                (as in aiokafka; a loop running when ``stop()`` is called just ends).
        """
        if self._state == "stopped":
            raise ConsumerStoppedError("the consumer was stopped")
        if self._iteration_wrapper is not None:
            return self._iteration_wrapper(self)
        fetcher = self._record_fetcher
        cls = type(self)
        if (
            _fast_anext is not None
            and fetcher is not None
            and cls.getone is _GETONE
            and cls.__anext__ is _ANEXT
        ):
            # __anext__ below, in C (_cready.c): the same checks and fall-back.
            return _fast_anext(self, fetcher.buffer, self._subscriptions)
        return self

    def __anext__(self) -> Awaitable[ConsumerRecord[KT, VT]]:
        fetcher = self._record_fetcher
        # The fast path serves every assigned partition (see _partitions_arg). As in
        # aiokafka 0.14, each record comes from getone() when that is not ours: a
        # subclass's, or a tracing integration's wrapper (ddtrace, OpenTelemetry).
        if (
            fetcher is not None
            and self._subscriptions.returnable is None
            and type(self).getone is _GETONE
        ):
            if self._membership is not None:
                self._membership.poll_called()
            # A deserializer's error is raised by this call rather than by the await
            # (the same to `async for`, which does both in one step).
            record = fetcher.buffer.next_record_fast()
            if record is not None:
                return _ready(record)  # a buffered record needs no coroutine
        return self._next_via_getone()

    async def _next_via_getone(self) -> ConsumerRecord[KT, VT]:
        try:
            return await self.getone()
        except ConsumerStoppedError:
            if self._state != "stopped":
                raise  # the fetcher failed: not the end of the records
            raise StopAsyncIteration from None

    # -- positions ----------------------------------------------------------------------

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Set the offset of the next record returned for ``partition``.

        Raises:
            ValueError: ``offset`` is not an int >= 0.
            TypeError: ``partition`` is not a TopicPartition.
            IllegalStateError: ``partition`` is not assigned.
        """
        (partition,) = check_partitions([partition], "partition")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ValueError(f"offset must be an int >= 0, got {offset!r}")
        self._subscriptions.seek(partition, offset)

    def _assigned_args(self, partitions: tuple[Any, ...]) -> list[TopicPartition]:
        if not partitions:
            return sorted(self._subscriptions.assigned_partitions())
        tps = check_partitions(partitions)
        for tp in tps:
            if not self._subscriptions.is_assigned(tp):
                raise IllegalStateError(f"Partitions {tp} are not assigned")
        return tps

    async def seek_to_beginning(self, *partitions: TopicPartition) -> bool:
        """Seek to the oldest available offset (default: all assigned partitions).

        Returns:
            True once the new positions are known (aiokafka returns whether the
            reset completed within ``request_timeout_ms``).

        Raises:
            TypeError: an argument is not a TopicPartition.
            IllegalStateError: a partition is not assigned.
        """
        return await self._seek_reset(partitions, "earliest")

    async def seek_to_end(self, *partitions: TopicPartition) -> bool:
        """Seek to the end (the LSO under ``read_committed``) of partitions; returns
        True once the new positions are known (as :meth:`seek_to_beginning`).

        Raises:
            TypeError: an argument is not a TopicPartition.
            IllegalStateError: a partition is not assigned.
        """
        return await self._seek_reset(partitions, "latest")

    async def _seek_reset(self, partitions: tuple[TopicPartition, ...], strategy: str) -> bool:
        tps = self._assigned_args(partitions)
        self._subscriptions.request_reset(tps, strategy)
        await self._resolve(tps)
        return True

    async def _resolve(self, tps: list[TopicPartition]) -> None:
        if self._record_fetcher is not None and tps:
            await self._record_fetcher.resolve_positions(tps)

    async def seek_to_committed(
        self, *partitions: TopicPartition
    ) -> dict[TopicPartition, int | None]:
        """Seek to the group's committed offsets (default: all assigned partitions).

        Partitions without a committed offset are reset by ``auto_offset_reset``.

        Returns:
            ``{tp: committed offset or None}``.

        Raises:
            TypeError: an argument is not a TopicPartition.
            IllegalStateError: a partition is not assigned (checked before the
                group, as in aiokafka).
            IllegalOperation: no ``group_id``.
        """
        tps = self._assigned_args(partitions)
        if self._config.group_id is None:
            raise IllegalOperation("seek_to_committed requires group_id")
        _, _, offsets = self._started()
        from .positions import seek_committed  # a cold path: one committed-offset look-up

        result, reset = await seek_committed(self._subscriptions, offsets, tps)
        await self._resolve(reset)
        return result

    async def position(self, partition: TopicPartition) -> int:
        """The offset of the next record that will be returned for ``partition``.

        Looks up the committed offset (or resets) first if the position is unknown.

        Raises:
            IllegalStateError: ``partition`` is not assigned.
            aiokafka.errors.NoOffsetForPartitionError: nothing committed and
                ``auto_offset_reset="none"``.
        """
        _, fetcher, _ = self._started()
        (partition,) = check_partitions([partition], "partition")
        while True:
            state = self._subscriptions.state(partition)
            if state.has_valid_position and state.position is not None:
                return state.position
            await fetcher.resolve_positions([partition])

    def highwater(self, partition: TopicPartition) -> int | None:
        """The high watermark from the last fetch of ``partition`` (None before one)."""
        return self._subscriptions.state(partition).highwater

    def last_stable_offset(self, partition: TopicPartition) -> int | None:
        """The last stable offset from the last fetch (-1 from brokers that send none
        under read_uncommitted; None before the first fetch)."""
        return self._subscriptions.state(partition).last_stable_offset

    def last_poll_timestamp(self, partition: TopicPartition) -> int | None:
        """Wall time (ms) highwater/LSO of ``partition`` were last updated, or None."""
        return self._subscriptions.state(partition).last_poll_ms

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop fetching and returning records of ``partitions`` until :meth:`resume`.

        Raises:
            IllegalStateError: a partition is not assigned.
        """
        self._subscriptions.pause(check_partitions(partitions))

    def resume(self, *partitions: TopicPartition) -> None:
        """Resume fetching ``partitions``."""
        self._subscriptions.resume(check_partitions(partitions))

    def paused(self) -> frozenset[TopicPartition]:
        """The paused partitions."""
        return self._subscriptions.paused_partitions()

    def metrics(self) -> dict[str, Any]:
        """The consumer's metrics by the Java client's names, plus ``"topics"``,
        ``"partitions"``, ``"nodes"`` (``docs/metrics.md``); zeros before start()."""
        from aiokafka.metrics.consumer import consumer_snapshot

        return consumer_snapshot(self._record_fetcher, self._membership, self._client)

    # -- commits ------------------------------------------------------------------------

    async def committed(self, partition: TopicPartition) -> int | None:
        """The group's last committed offset of ``partition``, or None.

        Raises:
            IllegalOperation: no ``group_id``.
        """
        if self._config.group_id is None:
            raise IllegalOperation("committed() requires group_id")
        _, _, offsets = self._started()
        (partition,) = check_partitions([partition], "partition")
        found = (await offsets.fetch_committed([partition])).get(partition)
        return None if found is None else found.offset

    async def commit(self, offsets: Mapping[TopicPartition, Any] | None = None) -> None:
        """Commit offsets to the group.

        Args:
            offsets: ``{tp: offset}``, ``{tp: (offset, metadata)}`` or
                ``{tp: OffsetAndMetadata}``: the offset of the *next* record to read.
                Default: the current position of every assigned partition.

        Raises:
            IllegalOperation: no ``group_id`` (checked first, as in aiokafka).
            IllegalStateError: not subscribed nor assigned ("Not subscribed to any
                topics"), ``offsets`` given while subscribed but before the first
                assignment ("No partitions assigned"; without ``offsets`` nothing
                is committed then), or a partition is not assigned.
            ValueError: ``offsets`` is empty, not a mapping, or has a malformed value.
                A key that is not a TopicPartition or metadata that is not a str
                raise an error that is both a ``TypeError`` (as in aiokafka) and a
                ``ValueError``.
            aiokafka.errors.CommitFailedError: the group refused the commit: the
                member left or was removed from the group (e.g. after
                ``max_poll_interval_ms``), or a rebalance moved the partitions.

        A group member's commit made during a rebalance waits until the rebalance
        completes (at most the rebalance timeout) and then commits with the new
        generation, or raises ``CommitFailedError`` if the partitions were revoked.
        """
        if self._config.group_id is None:
            raise IllegalOperation("commit() requires group_id")
        self._started()
        committer = self._committer
        assert committer is not None  # set by start()
        await committer.commit(committer.check_commit(offsets))

    def group_metadata(self) -> ConsumerGroupMetadata:
        """The group membership as known now, for ``send_offsets_to_transaction``.

        Without a subscription (``assign()``) or before joining, the generation is
        -1 and the member id empty.

        Raises:
            IllegalOperation: no ``group_id``.
        """
        group_id = self._config.group_id
        if group_id is None:
            raise IllegalOperation("group_metadata() requires group_id")
        if self._membership is not None:
            return self._membership.group_metadata()
        return ConsumerGroupMetadata(group_id, -1, "", self._config.group_instance_id)

    # -- misc ---------------------------------------------------------------------------

    @property
    def config(self) -> ConsumerConfig:
        """The validated configuration."""
        return self._config

    def __repr__(self) -> str:
        pattern = self._subscriptions.subscribed_pattern
        what = (
            f"pattern={pattern.pattern!r}"
            if isinstance(pattern, re.Pattern)
            else f"assignment={sorted(self.assignment())}"
        )
        return f"AIOKafkaConsumer({self._state}, group_id={self._config.group_id!r}, {what})"


#: Our getone (``__anext__`` takes a shortcut past it only while it is this one).
_GETONE = AIOKafkaConsumer.getone
#: Our __anext__ (``__aiter__`` hands out its C twin only while it is this one).
_ANEXT = AIOKafkaConsumer.__anext__
