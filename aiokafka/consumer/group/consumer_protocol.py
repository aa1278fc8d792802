"""Group membership with the KIP-848 consumer protocol (``group_protocol="consumer"``).

One background task heartbeats (ConsumerGroupHeartbeat) at the interval the
coordinator returns; the coordinator runs the assignor and answers with the member's
target assignment. A second, short-lived task reconciles towards that target (the
state machine is in :mod:`aiokafka.consumer.group.reconcile`): revoked partitions are
paused (no record of them reaches the application any more), committed, dropped from
the fetcher and passed to ``on_partitions_revoked``; then the new assignment is
installed, acknowledged in the next heartbeat, and the added partitions are passed to
``on_partitions_assigned``. Heartbeats keep going while a
listener runs, so a slow callback costs the rebalance timeout, not the session.

Errors (the table is :data:`_FATAL` plus the branches in
:meth:`ConsumerProtocolMembership._heartbeat_failed`):

* FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: the partitions are lost
  (``on_partitions_lost``), the member rejoins with epoch 0;
* coordinator moved or unavailable, connection lost: find the coordinator again and
  retry with exponential back-off;
* authorization, UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR,
  UNSUPPORTED_VERSION (a broker without KIP-848): fatal, raised once by
  :meth:`~ConsumerProtocolMembership.check_errors`.

Pattern subscriptions are resolved on the client against cluster metadata (Python's
``re`` syntax is not the broker's RE2/J, so ``SubscribedTopicRegex`` is not used) and
sent as topic names, as the Java client does for ``subscribe(java.util.regex.Pattern)``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aiokafka._tasks import cancel_and_wait
from aiokafka._timeout import timeout as _timeout
from aiokafka._timeout import wait_for
from aiokafka.cluster import CoordinatorType
from aiokafka.cluster.connections import ConnectionGroup
from aiokafka.errors import (
    AuthorizationError,
    CommitFailedError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    FencedMemberEpochError,
    GroupMaxSizeReachedError,
    InvalidRequestError,
    KafkaConnectionError,
    KafkaError,
    NotCoordinatorError,
    RequestTimedOutError,
    StaleMemberEpochError,
    UnknownMemberIdError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
    UnsupportedVersionError,
    for_code,
)
from aiokafka.net.backoff import ExponentialBackoff
from aiokafka.protocol import messages as m
from aiokafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

from .membership import GroupMembership, run_listener
from .reconcile import (
    HeartbeatFields,
    MemberState,
    MemberStateMachine,
    ReconcilePlan,
    SentFields,
)

if TYPE_CHECKING:
    from aiokafka.consumer.config import ConsumerConfig

__all__ = ["ConsumerProtocolMembership"]

log = logging.getLogger(__name__)

# Heartbeat errors after which the member stays out of the group: retrying cannot
# succeed without the operator changing something.
_FATAL: tuple[type[KafkaError], ...] = (
    AuthorizationError,
    UnreleasedInstanceIdError,
    FencedInstanceIdError,
    GroupMaxSizeReachedError,
    UnsupportedAssignorError,
    UnsupportedVersionError,
    InvalidRequestError,
)
# Commit errors meaning the member epoch no longer owns the partitions.
_COMMIT_FENCED = (StaleMemberEpochError, FencedMemberEpochError, UnknownMemberIdError)

_NO_KIP848 = (
    'the broker does not support the KIP-848 consumer group protocol (group_protocol="consumer"); '
    'use group_protocol="classic" or enable the protocol on the broker '
    "(group.coordinator.rebalance.protocols)"
)


class ConsumerProtocolMembership(GroupMembership):
    """Membership of a consumer group through ConsumerGroupHeartbeat (KIP-848).

    See :class:`~aiokafka.consumer.group.membership.GroupMembership` for the
    arguments. The server-side assignor is ``config.group_remote_assignor`` (the
    broker's default when None); ``client_rack`` is sent as the rack id.

    Raises:
        ValueError: the config has no ``group_id``.
    """

    TASK_NAME = "kip848"

    def _setup(self, config: ConsumerConfig) -> None:
        # KIP-1082: the client picks its member id once and keeps it for its whole
        # life (v1+); a v0 coordinator hands one out on the first heartbeat instead.
        self._client_member_id = str(uuid.uuid4())
        self._machine = MemberStateMachine(self._client_member_id)
        self._sent = SentFields()
        self._reconcile_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._assigned = asyncio.Event()
        self._fatal: KafkaError | None = None
        self._fatal_raised = False
        self._closing = False
        self._closed = asyncio.Event()  # close() finished
        self._stopped = asyncio.Event()  # closing or fatal: no assignment will come
        self._interval = config.heartbeat_interval_ms / 1000
        self._next_heartbeat = 0.0
        self._pattern_checked = 0.0
        cfg = self._client.config
        self._backoff = ExponentialBackoff(
            cfg.retry_backoff_ms, max(cfg.retry_backoff_ms, cfg.reconnect_backoff_max_ms)
        )
        self._failures = 0
        self._join_sent = False
        # How long the coordinator waits for this member to give up partitions (the
        # revoke listener included) before fencing it. The Java client sends
        # max.poll.interval.ms; aiokafka's default (the session timeout, meant for the
        # classic JoinGroup) would fence a member whose listener takes a few seconds.
        self._rebalance_timeout_ms = (
            config.rebalance_timeout_ms
            if config.rebalance_timeout_ms is not None
            else config.max_poll_interval_ms
        )

    # -- GroupMembership ----------------------------------------------------------------

    async def close(self) -> None:
        """Stop heartbeating and reconciling, then leave the group.

        A static member (``group_instance_id``) leaves with epoch -2: the coordinator
        keeps its assignment for the session timeout, so a restart within it causes no
        rebalance. Bounded by ``request_timeout_ms``; broker errors are logged.
        """
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        self._interest.close()
        self._stopped.set()
        self._wake.set()
        try:
            for task in (self._task, self._reconcile_task):
                if task is not None:
                    await _cancel_and_wait(task)
            machine = self._machine
            # A joining member leaves too once a join went out: the coordinator may
            # have registered it (the member id is the client's own since v1).
            # LEAVING: the heartbeat task was cancelled in the middle of a leave.
            registered = machine.member_epoch > 0 or (self._join_sent and bool(machine.member_id))
            if (machine.in_group and registered) or machine.state is MemberState.LEAVING:
                epoch = machine.leave(self._config.group_instance_id is not None)
                try:
                    await wait_for(
                        self._send_leave(epoch), self._client.config.request_timeout_ms / 1000
                    )
                except (KafkaError, asyncio.TimeoutError) as exc:
                    log.warning("Group %s: leave heartbeat failed: %r", self._group_id, exc)
            machine.left()
            self._assigned.clear()
        finally:
            self._closed.set()

    def poll_called(self) -> None:
        """Note a poll; a member that left after ``max_poll_interval_ms`` rejoins."""
        self._last_poll = time.monotonic()
        if self._machine.state is MemberState.STALE and not self._closing:
            log.info("Group %s: polled again after leaving; rejoining", self._group_id)
            self._machine.join()
            self._sent = SentFields()
            self._wake.set()

    def subscription_changed(self) -> None:
        """Send the new topics in the next heartbeat (now); join if not a member."""
        self._pattern_checked = 0.0
        if self._machine.state is MemberState.UNSUBSCRIBED and self._subscribed():
            self._machine.join()
        self._next_heartbeat = 0.0
        self._wake.set()

    def group_metadata(self) -> ConsumerGroupMetadata:
        """Group id, member epoch (as ``generation_id``; -1 when not a member), member id
        and instance id."""
        machine = self._machine
        epoch = machine.member_epoch if machine.member_epoch > 0 else -1
        return ConsumerGroupMetadata(
            self._group_id, epoch, machine.member_id, self._config.group_instance_id
        )

    async def commit(self, offsets: Mapping[TopicPartition, object]) -> None:
        """OffsetCommit (v9+) with the member id and member epoch.

        Raises:
            aiokafka.errors.CommitFailedError: not a member now, or the coordinator
                says the epoch is stale or the member is fenced/unknown; the message
                says why and what to do (poll again, or raise max_poll_interval_ms /
                lower max_poll_records).
            TypeError: an offset is neither an int nor an OffsetAndMetadata.
        """
        converted: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp, value in offsets.items():
            if isinstance(value, OffsetAndMetadata):
                converted[tp] = value
            elif isinstance(value, int) and not isinstance(value, bool):
                converted[tp] = OffsetAndMetadata(value, "")
            else:
                raise TypeError(f"offsets: {tp} has {value!r}, not an int or OffsetAndMetadata")
        machine = self._machine
        epoch = machine.member_epoch
        if not machine.in_group or epoch <= 0:
            raise CommitFailedError(
                f"Commit cannot be completed: the consumer is not a member of group "
                f"{self._group_id!r} now ({machine.state.value}); {self._not_member_hint()}"
            )
        started = time.monotonic()
        try:
            await self._offsets.commit(converted, generation=epoch, member_id=machine.member_id)
            self.metrics.commit_done(started)
        except StaleMemberEpochError as exc:
            raise CommitFailedError(
                f"Commit cannot be completed: member epoch {epoch} is stale ({exc}): the "
                "group rebalanced since and these partitions may have been revoked and "
                "given to another member. Poll again (getone()/getmany()) and commit what "
                "is still assigned after the rebalance completes (on_partitions_assigned)."
            ) from exc
        except _COMMIT_FENCED as exc:
            raise CommitFailedError(
                f"Commit cannot be completed: the coordinator fenced member epoch {epoch} "
                f"({exc}), so its partitions belong to another member now. "
                f"{self._fenced_hint()}"
            ) from exc

    def _fenced_hint(self) -> str:
        return (
            # KIP-848: the session timeout is the broker's, not session_timeout_ms.
            "The member is removed when its heartbeats stop for the group's session "
            "timeout (broker config group.consumer.session.timeout.ms) or when "
            "getone()/getmany() are not called for max_poll_interval_ms "
            f"({self._config.max_poll_interval_ms} ms): "
            "if processing a batch takes longer, increase max_poll_interval_ms or reduce "
            "max_poll_records. The member rejoins by itself; poll again and commit after "
            "the new assignment (on_partitions_assigned)."
        )

    def _not_member_hint(self) -> str:
        state = self._machine.state
        if state is MemberState.STALE:
            return (
                "it left the group because getone()/getmany() were not called within "
                f"max_poll_interval_ms ({self._config.max_poll_interval_ms} ms) and its "
                "partitions may belong to another member now. Increase "
                "max_poll_interval_ms or reduce max_poll_records, then poll again to rejoin "
                "and commit after the new assignment (on_partitions_assigned)."
            )
        if state in (MemberState.JOINING, MemberState.FENCED):
            return (
                "it is (re)joining: it was fenced or has not joined yet, and its "
                f"partitions may belong to another member now. {self._fenced_hint()}"
            )
        return "it left the group (unsubscribe() or stop()) or stopped after a fatal error."

    def check_errors(self) -> None:
        """Raise the fatal membership error, once."""
        if self._fatal is not None and not self._fatal_raised:
            self._fatal_raised = True
            raise self._fatal

    async def wait_until_assigned(self, timeout: float | None) -> bool:
        """Wait until the member joined and installed its first assignment.

        Raises:
            aiokafka.errors.KafkaError: the fatal error that stopped the membership.
        """
        waiter = asyncio.ensure_future(self._assigned.wait())
        closed = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({waiter, closed}, timeout=timeout, return_when="FIRST_COMPLETED")
        finally:
            waiter.cancel()
            closed.cancel()
        if self._fatal is not None:
            self._fatal_raised = True
            raise self._fatal
        return self._assigned.is_set()

    # -- introspection (tests, logging) -------------------------------------------------

    @property
    def state(self) -> MemberState:
        """The member's state."""
        return self._machine.state

    @property
    def member_id(self) -> str:
        """The member id (client-generated UUID string with heartbeat v1+)."""
        return self._machine.member_id

    @property
    def member_epoch(self) -> int:
        """The current member epoch (0 when not a member)."""
        return self._machine.member_epoch

    # -- the heartbeat task -------------------------------------------------------------

    def _subscribed(self) -> bool:
        return self._subscriptions.partitions_auto_assigned

    async def _run(self) -> None:
        if self._subscribed():
            self._machine.join()
        while not self._closing and self._machine.state is not MemberState.FATAL:
            try:
                await self._step()
            except KafkaError as exc:
                await self._heartbeat_failed(exc)
            except Exception as exc:
                self._internal_error(exc)

    def _internal_error(self, exc: Exception) -> None:
        # A bug, not a broker error: stop the membership and surface it through
        # check_errors() instead of heartbeating on with a broken state.
        log.error("Group %s: membership failed", self._group_id, exc_info=exc)
        error = KafkaError(f"group membership of {self._group_id!r} failed: {exc!r}")
        error.__cause__ = exc
        self._fatal = self._fatal or error
        self._machine.fatal()
        self._stopped.set()

    async def _step(self) -> None:
        machine = self._machine
        if not self._subscribed():
            if machine.in_group and machine.member_epoch > 0:
                await self._leave_for_unsubscribe()
            await self._sleep(None)
            return
        if machine.state is MemberState.UNSUBSCRIBED:
            machine.join()
        if not machine.in_group:  # STALE: waits for poll_called()
            await self._sleep(None)
            return
        if await self._poll_interval_expired():
            return
        await self._maybe_resolve_pattern()
        now = time.monotonic()
        urgent = machine.state in (MemberState.JOINING, MemberState.ACKNOWLEDGING) or (
            self._sent.owned != machine.owned_ids and machine.member_epoch > 0
        )
        if not urgent and now < self._next_heartbeat:
            await self._sleep(self._next_heartbeat - now)
            return
        await self._heartbeat()
        self._failures = 0
        self._maybe_reconcile()

    async def _sleep(self, timeout: float | None) -> None:
        """Wait until woken (subscription change, reconciliation done, close) or timeout."""
        self._wake.clear()
        if self._closing:
            return
        if timeout is not None:
            # Also wake for the poll deadline, so a stuck application is noticed.
            poll_left = self._last_poll + self._config.max_poll_interval_ms / 1000
            timeout = max(0.0, min(timeout, poll_left - time.monotonic() + 0.01))
        try:
            async with _timeout(timeout):
                await self._wake.wait()
        except asyncio.TimeoutError:
            pass

    async def _heartbeat(self) -> None:
        machine = self._machine
        node = await self._client.coordinator_for(self._group_id)
        try:
            version = await self._client.api_version(
                node, m.ConsumerGroupHeartbeatRequest.API_KEY, group=ConnectionGroup.COORDINATION
            )
        except UnsupportedVersionError as exc:
            raise UnsupportedVersionError(_NO_KIP848) from exc
        if (
            version == 0
            and machine.member_epoch == 0
            and machine.member_id == self._client_member_id
        ):
            machine.member_id = ""  # v0: the coordinator assigns the id on join
        fields = HeartbeatFields.build(
            machine,
            self._sent,
            instance_id=self._config.group_instance_id,
            rack_id=self._client.config.client_rack,
            rebalance_timeout_ms=self._rebalance_timeout_ms,
            subscribed_topics=self._subscriptions.subscribed_topics,
            server_assignor=self._config.group_remote_assignor,
        )
        request = self._request(fields)
        self._join_sent = True
        # Changed-only fields are relative to what the coordinator saw; until this one
        # is answered, assume it saw nothing (a failed heartbeat resends full state).
        sent, self._sent = self._sent, SentFields()
        response = await self._client.send(
            node, request, max_version=version, group=ConnectionGroup.COORDINATION
        )
        if response.error_code:
            raise for_code(response.error_code)(
                f"ConsumerGroupHeartbeat for group {self._group_id!r}: "
                f"{response.error_message or ''}"
            )
        if self._closing or not machine.in_group or fields.member_epoch != machine.member_epoch:
            return  # the member was fenced or left while this was in flight
        fields.sent_into(sent)
        self._sent = sent
        if response.heartbeat_interval_ms > 0:
            self._interval = response.heartbeat_interval_ms / 1000
        self._next_heartbeat = time.monotonic() + self._interval
        assignment = None
        if response.assignment is not None:
            assignment = {
                t.topic_id: frozenset(t.partitions) for t in response.assignment.topic_partitions
            }
        previous_epoch = machine.member_epoch
        machine.on_heartbeat(response.member_id, response.member_epoch, assignment)
        if previous_epoch != machine.member_epoch:
            log.debug(
                "Group %s: member %s epoch %d -> %d",
                self._group_id,
                machine.member_id,
                previous_epoch,
                machine.member_epoch,
            )
        if machine.state is MemberState.STABLE and self._reconcile_task is None:
            self._assigned.set()

    def _request(self, fields: HeartbeatFields) -> m.ConsumerGroupHeartbeatRequest:
        owned = None
        if fields.owned is not None:
            owned = [
                m.ConsumerGroupHeartbeatRequestTopicPartitions(topic_id=tid, partitions=sorted(ps))
                for tid, ps in sorted(fields.owned.items())
            ]
        return m.ConsumerGroupHeartbeatRequest(
            group_id=self._group_id,
            member_id=fields.member_id,
            member_epoch=fields.member_epoch,
            instance_id=fields.instance_id,
            rack_id=fields.rack_id,
            rebalance_timeout_ms=fields.rebalance_timeout_ms,
            subscribed_topic_names=fields.subscribed_topics,
            server_assignor=fields.server_assignor,
            topic_partitions=owned,
        )

    async def _heartbeat_failed(self, exc: KafkaError) -> None:
        machine = self._machine
        if isinstance(exc, FencedMemberEpochError | UnknownMemberIdError):
            log.warning(
                "Group %s: member %s fenced (%s); its partitions are lost, rejoining",
                self._group_id,
                machine.member_id,
                type(exc).__name__,
            )
            joining = machine.member_epoch == 0
            await self._lose_partitions(machine.fence)
            machine.join()
            if joining:
                # Refused while joining: rejoining at once would spin.
                await self._sleep_at_least(self._backoff.delay(self._failures))
                self._failures += 1
            return
        if isinstance(exc, _FATAL) or (not exc.retriable and not _is_coordinator_error(exc)):
            if isinstance(exc, UnsupportedVersionError) and _NO_KIP848 not in str(exc):
                exc = UnsupportedVersionError(f"{_NO_KIP848} ({exc})")
            log.error("Group %s: fatal membership error: %r", self._group_id, exc)
            self._fatal = exc
            machine.fatal()
            self._stopped.set()  # wakes wait_until_assigned
            return
        if _is_coordinator_error(exc):
            self._client.invalidate_coordinator(self._group_id, CoordinatorType.GROUP)
        delay = self._backoff.delay(self._failures)
        self._failures += 1
        log.info(
            "Group %s: heartbeat failed (%r); retrying in %.0f ms",
            self._group_id,
            exc,
            delay * 1000,
        )
        self._next_heartbeat = time.monotonic() + delay
        # CoordinatorLoadInProgress and friends keep the state; a JOINING member
        # would otherwise retry at once.
        await self._sleep_at_least(delay)

    async def _sleep_at_least(self, delay: float) -> None:
        deadline = time.monotonic() + delay
        while not self._closing and (left := deadline - time.monotonic()) > 0:
            await self._sleep(left)

    async def _lose_partitions(self, transition: Any) -> None:
        """Finish a running reconciliation, apply ``transition`` (fence or stale, which
        returns the lost partitions) and tell the fetcher and the listener."""
        if self._reconcile_task is not None:
            # The step finishes (listeners are never interrupted); the transition
            # below makes its install a no-op if it has not happened yet.
            await asyncio.wait({self._reconcile_task})
            self._reconcile_task = None
        lost: frozenset[TopicPartition] = transition()
        self._sent = SentFields()
        self._assigned.clear()
        if self._subscribed():
            self._subscriptions.assign_from_subscribed([])
        if lost:
            self._hooks.stop_fetching(sorted(lost))
            listener = self._subscriptions.listener
            if listener is not None:
                await run_listener(listener.on_partitions_lost, lost, "on_partitions_lost")

    async def _poll_interval_expired(self) -> bool:
        limit = self._config.max_poll_interval_ms / 1000
        if time.monotonic() - self._last_poll <= limit:
            return False
        machine = self._machine
        log.warning(
            "Group %s: no poll within max_poll_interval_ms=%d; leaving the group (the "
            "member rejoins on the next poll). Process records faster or raise the limit.",
            self._group_id,
            self._config.max_poll_interval_ms,
        )
        if machine.member_epoch > 0:
            # Leave first so the partitions move at once; always -1, also for static
            # members, since this member cannot process them.
            await self._send_leave_quietly(-1)
        await self._lose_partitions(machine.stale)
        return True

    async def _leave_for_unsubscribe(self) -> None:
        machine = self._machine
        owned = machine.owned
        listener = self._subscriptions.listener
        if self._reconcile_task is not None:
            await asyncio.wait({self._reconcile_task})
            self._reconcile_task = None
        epoch = machine.leave(static=False)
        if owned:
            self._hooks.stop_fetching(sorted(owned))
            if listener is not None:
                await run_listener(listener.on_partitions_revoked, owned, "on_partitions_revoked")
        await self._send_leave_quietly(epoch)
        machine.left()
        self._assigned.clear()

    async def _send_leave_quietly(self, epoch: int) -> None:
        try:
            await wait_for(self._send_leave(epoch), self._client.config.request_timeout_ms / 1000)
        except (KafkaError, asyncio.TimeoutError) as exc:
            log.warning("Group %s: leave heartbeat failed: %r", self._group_id, exc)

    async def _send_leave(self, epoch: int) -> None:
        member_id = self._machine.member_id
        node = await self._client.coordinator_for(self._group_id)
        request = m.ConsumerGroupHeartbeatRequest(
            group_id=self._group_id,
            member_id=member_id,
            member_epoch=epoch,
            instance_id=self._config.group_instance_id,
        )
        response = await self._client.send(node, request, group=ConnectionGroup.COORDINATION)
        if response.error_code == UnknownMemberIdError.errno:
            # A join that never registered (or an expired session): nothing to leave.
            log.debug("Group %s: member %s was not registered", self._group_id, member_id)
            return
        if response.error_code:
            raise for_code(response.error_code)(f"leaving group {self._group_id!r}")
        log.info("Group %s: member %s left (epoch %d)", self._group_id, member_id, epoch)

    # -- pattern subscriptions ----------------------------------------------------------

    async def _maybe_resolve_pattern(self) -> None:
        pattern = self._subscriptions.subscribed_pattern
        if pattern is None:
            return
        now = time.monotonic()
        period = self._client.config.metadata_max_age_ms / 1000
        if self._pattern_checked and now - self._pattern_checked < period:
            return
        self._pattern_checked = now
        metadata = await self._client.fetch_all_metadata()
        names = frozenset(
            name
            for name, t in metadata.topics.items()
            if pattern.match(name)
            and not (t.is_internal and self._config.exclude_internal_topics)
            and not t.error_code
        )
        if names != self._subscriptions.subscribed_topics:
            log.info("Group %s: pattern %r now matches %s", self._group_id, pattern, names)
            self._subscriptions.change_subscription(names)
            await self._track_topics()

    async def _track_topics(self) -> None:
        await self._interest.set(self._subscriptions.subscribed_topics)

    # -- reconciliation -----------------------------------------------------------------

    def _maybe_reconcile(self) -> None:
        if self._machine.state is not MemberState.RECONCILING or self._closing:
            return
        task = self._reconcile_task
        if task is not None and not task.done():
            return  # the next heartbeat after it finishes looks again
        task = asyncio.create_task(
            self._reconcile(), name=f"aiokafka-kip848-reconcile-{self._group_id}"
        )
        if not task.done():
            # An eager task factory may have run it to its end (and its finally, which
            # clears the attribute) inside create_task(): kept, it would read as still
            # reconciling, and the member would never signal its assignment.
            self._reconcile_task = task

    async def _revoke(self, partitions: frozenset[TopicPartition]) -> None:
        if not partitions:
            return
        revoked = sorted(partitions)
        subs = self._subscriptions
        # Pause first: while the commit below is in flight the application keeps
        # polling, and a getmany() in between would return (and advance past)
        # records of these partitions after their offsets were taken for the
        # commit: the next owner would read them again. Paused partitions hand out
        # nothing, so the committed position is the last one the application saw.
        subs.pause([tp for tp in revoked if subs.is_assigned(tp)])
        # Commit while the partitions are still ours (the epoch stays valid for them
        # until the acknowledgment), then stop fetching, then the listener.
        await self._hooks.commit_revoked(revoked)
        self._hooks.stop_fetching(revoked)
        listener = self._subscriptions.listener
        if listener is not None:
            await run_listener(listener.on_partitions_revoked, revoked, "on_partitions_revoked")

    def _is_subscribed(self, topic: str) -> bool:
        return topic in self._subscriptions.subscribed_topics

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self._client.cluster.topic_name(topic_id)

    async def _reconcile(self) -> None:
        try:
            await self._reconcile_step()
        except KafkaError as exc:
            # Metadata could not be refreshed: the next heartbeat tries again.
            log.warning("Group %s: reconciliation postponed: %r", self._group_id, exc)
        except Exception as exc:
            self._internal_error(exc)
        finally:
            self._reconcile_task = None
            self._wake.set()

    async def _reconcile_step(self) -> None:
        started = time.monotonic()
        machine = self._machine
        subscribed = self._is_subscribed
        try:
            plan = machine.plan(self._topic_name, subscribed)
        except LookupError:
            # The target names topics whose ids the metadata does not know yet (a
            # topic just created, or metadata without ids): refresh and try once more.
            await self._track_topics()
            await self._client.request_refresh(f"group {self._group_id}: unknown topic ids")
            try:
                plan = machine.plan(self._topic_name, subscribed)
            except LookupError as exc:
                log.info(
                    "Group %s: topic ids %s not in metadata yet; retrying",
                    self._group_id,
                    exc.args[0],
                )
                return
        if plan is None:
            if machine.state is MemberState.STABLE:
                self._assigned.set()
            return
        await self._apply(plan)
        self.metrics.rebalance_done(started, len(self._subscriptions.assigned_partitions()))

    async def _apply(self, plan: ReconcilePlan) -> None:
        machine = self._machine
        listener = self._subscriptions.listener
        log.info(
            "Group %s: reconciling to epoch %d: revoking %s, adding %s",
            self._group_id,
            plan.epoch,
            sorted(plan.revoked),
            sorted(plan.added),
        )
        await self._revoke(plan.revoked)
        # The application may have changed its subscription while the listener ran.
        narrowed = plan.restricted(self._is_subscribed)
        await self._revoke(narrowed.revoked - plan.revoked)
        plan = narrowed
        if self._closing or not self._subscribed() or not machine.reconciled(plan):
            return  # fenced, stale, unsubscribed or closing meanwhile
        self._subscriptions.assign_from_subscribed(sorted(plan.assignment))
        # Acknowledge now: the coordinator can hand the revoked partitions on while the
        # assigned callback runs.
        self._wake.set()
        if listener is not None:
            await run_listener(
                listener.on_partitions_assigned, plan.added, "on_partitions_assigned"
            )
        self._assigned.set()


def _is_coordinator_error(exc: KafkaError) -> bool:
    return isinstance(
        exc,
        NotCoordinatorError
        | CoordinatorNotAvailableError
        | CoordinatorLoadInProgressError
        | KafkaConnectionError
        | RequestTimedOutError,
    )


async def _cancel_and_wait(task: asyncio.Task[None]) -> None:
    """Cancel an owned task and wait for it; our own cancellation still propagates."""
    await cancel_and_wait(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("KIP-848 membership task failed", exc_info=task.exception())
