"""Classic group membership: JoinGroup / SyncGroup / Heartbeat / LeaveGroup.

:class:`ClassicMembership` follows the Java client's ``ConsumerCoordinator``:

* One main task (``aiokafka-group-<group>``) finds the coordinator, joins (KIP-394:
  the first JoinGroup of a dynamic member returns MEMBER_ID_REQUIRED with the id to
  use), runs the chosen assignor when it is the leader, syncs, installs the
  assignment and runs the rebalance listener. It also watches ``max_poll_interval_ms``
  and, for pattern subscriptions and on the leader, metadata changes that need a
  rebalance. Listener callbacks therefore never run concurrently with each other.
* One child task sends heartbeats every ``heartbeat_interval_ms`` while the member
  holds a generation (also while the listener's revoke callback runs before a
  rejoin, so a slow callback does not end the session). It only records what it
  learns (rebalance started, member unknown, generation stale, fenced); the main task
  acts on it.

Rebalance protocols (KIP-429): EAGER members revoke everything (after committing,
through :attr:`MembershipHooks.commit_revoked`) before JoinGroup and get a complete
assignment; the listener's ``on_partitions_revoked`` runs once per rebalance, with an
empty set when the member owns nothing (also before the first JoinGroup, as in
aiokafka), and ``on_partitions_assigned`` gets the whole new assignment. COOPERATIVE
members (every assignor supports it, i.e. ``cooperative-sticky`` alone) keep their
partitions, and keep fetching them, during the rebalance; after SyncGroup they revoke
only the partitions that moved (``on_partitions_revoked`` only when some did, as in
the Java client) and rejoin so that the new owners get them;
``on_partitions_assigned`` gets only the partitions added (possibly none).

Partitions a member gives up are paused first, so no record of them reaches the
application after their offsets were committed.

Errors are handled by one table (:func:`~aiokafka.consumer.group.classic_state.error_action`).
Every retry waits a growing back-off, so no error leads to a tight rejoin loop.
Fatal errors (authorization, a fenced static member, inconsistent protocols) are
raised once by :meth:`ClassicMembership.check_errors`; the next poll tries again.

Commits (:meth:`ClassicMembership.commit`) carry the generation and member id.
A commit made while a JoinGroup/SyncGroup is in flight waits (at most the rebalance
timeout) until it completes, then commits with the new generation if the partitions
are still assigned, and raises :class:`~aiokafka.errors.CommitFailedError` if they are
not.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from aiokafka._tasks import cancel_and_wait
from aiokafka._timeout import timeout as timeout_after
from aiokafka._timeout import wait_for
from aiokafka.cluster import CoordinatorType
from aiokafka.cluster.connections import ConnectionGroup
from aiokafka.errors import (
    CommitFailedError,
    FencedInstanceIdError,
    IllegalStateError,
    InconsistentGroupProtocolError,
    KafkaError,
    MemberIdRequired,
    for_code,
)
from aiokafka.net.backoff import ExponentialBackoff
from aiokafka.protocol import messages as m
from aiokafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

from .assignors import (
    AbstractPartitionAssignor,
    Assignment,
    CooperativeStickyAssignor,
    RangePartitionAssignor,
    RebalanceProtocol,
    RoundRobinPartitionAssignor,
    StickyPartitionAssignor,
    as_assignor,
    decode_subscription,
)
from .assignors.codec import decode_assignment
from .classic_state import (
    NO_GENERATION,
    ErrorAction,
    Generation,
    assignment_changes,
    compute_assignment,
    error_action,
    join_protocols,
    select_rebalance_protocol,
)
from .membership import GroupMembership, run_listener

if TYPE_CHECKING:
    from aiokafka.consumer.config import ConsumerConfig
    from aiokafka.protocol.request import Request

__all__ = ["ClassicMembership"]

log = logging.getLogger(__name__)

# The response type of a request sent by _rebalance_send (``Request[R]`` -> ``R``).
R = TypeVar("R")

# JoinGroup may be held by the coordinator for the whole rebalance timeout; the Java
# client allows this much on top before it gives up on the response.
_JOIN_GRACE_MS = 5000
# Back-off between failed join attempts grows to this (a coordinator that is down
# must not be hammered, KIP-580 style).
_MAX_JOIN_BACKOFF_MS = 5000

_REMOVED_HINT = (
    "the consumer was removed from the group or the group rebalanced, so its "
    "partitions may belong to another member now. If getone()/getmany() were not "
    "called for longer than max_poll_interval_ms, increase max_poll_interval_ms or "
    "reduce max_poll_records; then poll again to rejoin"
)


def _assignor_of(strategy: Any) -> AbstractPartitionAssignor:
    """An assignor from a ``partition_assignment_strategy`` entry; the built-in ones
    may also be named as the Java client names them (``"range"``, ...)."""
    if isinstance(strategy, str):
        builtin: dict[str, type[AbstractPartitionAssignor]] = {
            "range": RangePartitionAssignor,
            "roundrobin": RoundRobinPartitionAssignor,
            "sticky": StickyPartitionAssignor,
            "cooperative-sticky": CooperativeStickyAssignor,
        }
        if strategy not in builtin:
            raise ValueError(
                f"partition_assignment_strategy: unknown assignor name {strategy!r} "
                f"(built-in: {sorted(builtin)})"
            )
        return builtin[strategy]()
    return as_assignor(strategy)


class ClassicMembership(GroupMembership):
    """Membership of a consumer group with the classic protocol.

    See the module docstring for the tasks and the protocol; the arguments are those
    of :class:`~aiokafka.consumer.group.membership.GroupMembership`.

    Raises:
        ValueError: no ``group_id``, or the assignors share no rebalance protocol.
        TypeError: an entry of ``partition_assignment_strategy`` is not an assignor.
    """

    TASK_NAME = "group"

    def _setup(self, config: ConsumerConfig) -> None:
        self._instance_id = config.group_instance_id
        self._assignors: list[AbstractPartitionAssignor] = [
            _assignor_of(s) for s in config.partition_assignment_strategy
        ]
        self._protocol = select_rebalance_protocol(self._assignors)
        self._generation = NO_GENERATION
        self._hb_task: asyncio.Task[None] | None = None
        self._wakeup = asyncio.Event()
        self._rejoin_reason: str | None = "initial join"
        # Set by the heartbeat task or a commit: the member id/generation is gone.
        # Kept with the generation it was found in: an answer about an older
        # generation (a commit racing a rebalance) must not drop the new assignment.
        self._lost: tuple[KafkaError, Generation] | None = None
        self._heartbeat_enabled = False
        self._rebalancing = False
        self._not_rebalancing = asyncio.Event()
        self._not_rebalancing.set()
        self._assigned = asyncio.Event()
        self._fatal: KafkaError | None = None
        # Another consumer took over our group_instance_id: rejoining would fence it
        # in turn (a ping-pong of rebalances), so this one stays out for good.
        self._fenced: KafkaError | None = None
        self._poll_event = asyncio.Event()
        self._waiting_for_poll = False
        self._closed = False
        self._backoff = ExponentialBackoff(
            config.client.retry_backoff_ms,
            max(_MAX_JOIN_BACKOFF_MS, config.client.retry_backoff_ms),
        )
        # Leader only: partition counts of every topic of the group when it assigned.
        self._assigned_snapshot: dict[str, int] | None = None
        self._next_metadata_check = 0.0
        # EAGER: on_partitions_revoked ran for the rebalance under way (reset when it
        # completes), so a retried JoinGroup does not announce it again.
        self._revoke_announced = False

    # -- GroupMembership ----------------------------------------------------------------

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        """The rebalance protocol this member follows (EAGER or COOPERATIVE)."""
        return self._protocol

    async def close(self) -> None:
        """Stop the tasks, then send LeaveGroup unless the member is static (KIP-345).

        Bounded by ``request_timeout_ms``; never raises a broker error.
        """
        if self._closed:
            return
        self._closed = True
        self._interest.close()
        await cancel_and_wait(self._task, self._hb_task)
        self._heartbeat_enabled = False
        if self._instance_id is None and self._generation.member_id:
            await self._leave_group("the consumer is being closed")
        self._generation = NO_GENERATION
        self._not_rebalancing.set()

    def poll_called(self) -> None:
        """Note a getone/getmany; after a poll timeout (or a fatal error) rejoin."""
        self._last_poll = time.monotonic()
        if self._waiting_for_poll:
            self._poll_event.set()

    def subscription_changed(self) -> None:
        """Rejoin with the new subscription (pattern re-resolved first)."""
        self._next_metadata_check = 0.0
        self._request_rejoin("the subscription changed")

    def group_metadata(self) -> ConsumerGroupMetadata:
        """Group id, generation, member id and instance id as known now."""
        gen = self._generation
        return ConsumerGroupMetadata(
            self._group_id, gen.generation_id, gen.member_id, self._instance_id
        )

    def check_errors(self) -> None:
        """Raise a stored fatal error once; the next poll tries to join again.

        A fenced static member (FENCED_INSTANCE_ID) raises on every poll and never
        rejoins: close it.
        """
        if self._fenced is not None:
            raise self._fenced
        exc = self._fatal
        if exc is not None:
            self._fatal = None
            self._poll_event.set()
            raise exc
        task = self._task
        if task is not None and task.done() and not task.cancelled():
            crash = task.exception()
            if crash is not None:
                raise IllegalStateError(f"group membership task crashed: {crash!r}") from crash

    async def wait_until_assigned(self, timeout: float | None) -> bool:
        """Wait until a rebalance completed and installed an assignment."""
        try:
            await wait_for(self._assigned.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    async def commit(self, offsets: Mapping[TopicPartition, object]) -> None:
        """Commit with this member's generation (see the module docstring).

        Raises:
            aiokafka.errors.CommitFailedError: the member is not in the group (any
                more), or the partitions moved to another member.
        """
        to_commit: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp, value in offsets.items():
            if not isinstance(value, OffsetAndMetadata):
                raise TypeError(f"offsets: value for {tp} must be an OffsetAndMetadata")
            to_commit[tp] = value
        if not to_commit:
            return
        if self._rebalancing:
            timeout = self._config.effective_rebalance_timeout_ms / 1000
            try:
                await wait_for(self._not_rebalancing.wait(), timeout)
            except asyncio.TimeoutError:
                raise CommitFailedError(
                    f"Commit cannot be completed: a rebalance is in progress; {_REMOVED_HINT}"
                ) from None
            moved = [tp for tp in to_commit if not self._subscriptions.is_assigned(tp)]
            if moved:
                raise CommitFailedError(
                    f"Commit cannot be completed: {sorted(moved)} were revoked by a rebalance"
                )
        gen = self._generation
        if not gen.valid:
            raise CommitFailedError(
                f"Commit cannot be completed: the consumer is not in the group; {_REMOVED_HINT}"
            )
        started = time.monotonic()
        try:
            await self._offsets.commit(
                to_commit, generation=gen.generation_id, member_id=gen.member_id
            )
            self.metrics.commit_done(started)
        except CommitFailedError as exc:
            cause = exc.__cause__
            if isinstance(cause, KafkaError) and gen == self._generation and not self._rebalancing:
                action = error_action(cause)
                if action is ErrorAction.REJOIN:
                    self._request_rejoin("a commit found a rebalance in progress")
                elif action in (ErrorAction.RESET_MEMBER, ErrorAction.RESET_GENERATION):
                    self._lost = self._lost or (cause, gen)
                    self._wakeup.set()
            raise

    # -- the main task ------------------------------------------------------------------

    async def _run(self) -> None:
        self._hb_task = asyncio.create_task(
            self._heartbeat_loop(), name=f"aiokafka-heartbeat-{self._group_id}"
        )
        failures = 0
        while self._fenced is None:
            if self._waiting_for_poll:
                await self._poll_event.wait()
                self._poll_event.clear()
                self._waiting_for_poll = False
                self._last_poll = time.monotonic()
                continue
            try:
                if self._lost is not None:
                    (lost, lost_gen), self._lost = self._lost, None
                    if lost_gen == self._generation:
                        await self._handle_error(lost)
                    else:
                        log.debug(
                            "Group %s: ignoring %r of an older generation", self._group_id, lost
                        )
                    continue
                if self._rejoin_reason is not None:
                    await self._rebalance()
                    failures = 0
                    continue
                await self._idle()
            except KafkaError as exc:
                action = await self._handle_error(exc)
                if action is ErrorAction.MEMBER_ID_REQUIRED:
                    continue
                delay = self._backoff.delay(failures)
                failures += 1
                log.info(
                    "Group %s: %r; retrying in %.2fs (%s)",
                    self._group_id,
                    exc,
                    delay,
                    action.value,
                )
                await asyncio.sleep(delay)
        # Fenced: the heartbeat task stops too; close() still awaits both.
        self._heartbeat_enabled = False
        await cancel_and_wait(self._hb_task)

    async def _handle_error(self, exc: KafkaError) -> ErrorAction:
        """Apply the error table to ``exc`` (state changes only; the caller backs off)."""
        action = error_action(exc)
        if action is ErrorAction.RESET_MEMBER:
            self._generation = NO_GENERATION
            await self._lose_partitions(f"member id unknown: {exc!r}")
        elif action is ErrorAction.RESET_GENERATION:
            self._generation = self._generation.without_generation()
            await self._lose_partitions(f"generation stale: {exc!r}")
        elif action is ErrorAction.FIND_COORDINATOR:
            self._client.invalidate_coordinator(self._group_id, CoordinatorType.GROUP)
        elif action is ErrorAction.FATAL:
            log.error("Group %s: fatal error %r", self._group_id, exc)
            self._heartbeat_enabled = False
            if self._generation.valid:
                self._generation = self._generation.without_generation()
            await self._lose_partitions(f"fatal error: {exc!r}")
            if isinstance(exc, FencedInstanceIdError):
                self._fenced = exc
                self._generation = NO_GENERATION
            else:
                self._fatal = exc
            self._poll_event.clear()
            self._waiting_for_poll = True
        # After a fatal error the rejoin waits for the next poll (see _run).
        self._request_rejoin(f"{action.value} after {type(exc).__name__}")
        return action

    def _request_rejoin(self, reason: str) -> None:
        if self._rejoin_reason is None:
            log.debug("Group %s: rejoin requested: %s", self._group_id, reason)
            self._rejoin_reason = reason
        self._wakeup.set()

    async def _idle(self) -> None:
        """Wait for something to do while stable: rejoin, poll timeout, metadata."""
        now = time.monotonic()
        poll_deadline = self._last_poll + self._config.max_poll_interval_ms / 1000
        if now >= poll_deadline:
            await self._leave_for_poll_timeout()
            return
        if now >= self._next_metadata_check:
            self._next_metadata_check = now + self._client.config.metadata_max_age_ms / 1000
            try:
                await self._check_metadata()
            except KafkaError as exc:
                # Not a membership problem: try again at the next check, no rebalance.
                log.debug("Group %s: metadata check failed: %r", self._group_id, exc)
            return
        self._wakeup.clear()
        timeout = min(poll_deadline, self._next_metadata_check) - now
        waiter = asyncio.ensure_future(self._wakeup.wait())
        try:
            await asyncio.wait([waiter], timeout=timeout + 0.001)
        finally:
            waiter.cancel()

    async def _check_metadata(self) -> None:
        """Rejoin if the pattern matches other topics now, or (leader) the partition
        count of a group topic changed."""
        subs = self._subscriptions
        pattern = subs.subscribed_pattern
        if pattern is not None:
            metadata = await self._client.fetch_all_metadata()
            matched = frozenset(
                t.name
                for t in metadata.topics.values()
                if pattern.match(t.name)
                and not (t.is_internal and self._config.exclude_internal_topics)
            )
            if matched != subs.subscribed_topics:
                subs.change_subscription(matched)
                await self._interest.set(matched)
                self._request_rejoin(f"the pattern matches {sorted(matched)} now")
                return
        snapshot = self._assigned_snapshot
        if snapshot is not None and snapshot != self._partition_counts(snapshot):
            self._request_rejoin("partitions of a subscribed topic changed")

    def _partition_counts(self, topics: Iterable[str]) -> dict[str, int]:
        cluster = self._client.cluster
        return {t: len(cluster.partitions_for_topic(t) or ()) for t in topics}

    # -- rebalance ----------------------------------------------------------------------

    async def _rebalance(self) -> None:
        started = time.monotonic()
        await self._prepare_join()
        node = await self._client.coordinator_for(self._group_id, CoordinatorType.GROUP)
        reason = self._rejoin_reason or "rejoin"
        # Cleared before JoinGroup: a rejoin requested while this round runs (e.g. the
        # subscription changed) needs another round; a failure requests one again.
        self._rejoin_reason = None
        self._rebalancing = True
        self._not_rebalancing.clear()
        self._heartbeat_enabled = False
        try:
            join = await self._join(node, reason)
            assignments: dict[str, bytes] = {}
            if join.leader == join.member_id and not join.skip_assignment:
                assignments = await self._assign(join)
            assignment = await self._sync(node, assignments)
        finally:
            self._rebalancing = False
            self._not_rebalancing.set()
        await self._complete(assignment)
        self.metrics.rebalance_done(started, len(self._subscriptions.assigned_partitions()))

    async def _prepare_join(self) -> None:
        """Java's onJoinPrepare: what a member gives up before JoinGroup."""
        subs = self._subscriptions
        owned = subs.assigned_partitions()
        if not owned:
            if self._protocol is RebalanceProtocol.EAGER and not self._revoke_announced:
                # Eager members hear of every rebalance, also with nothing to give up:
                # aiokafka (and the Java client) call on_partitions_revoked(set())
                # before the first JoinGroup too.
                self._revoke_announced = True
                if subs.listener is not None:
                    await run_listener(
                        subs.listener.on_partitions_revoked, (), "on_partitions_revoked"
                    )
            return
        if not self._generation.valid:
            await self._lose_partitions("rejoining without a generation")
            return
        if self._protocol is RebalanceProtocol.EAGER:
            await self._revoke(owned)
            subs.assign_from_subscribed([])
            self._assigned.clear()
        else:
            gone = frozenset(tp for tp in owned if tp.topic not in subs.subscribed_topics)
            if gone:
                await self._revoke(gone)
                subs.assign_from_subscribed(sorted(owned - gone))

    async def _revoke(self, partitions: frozenset[TopicPartition]) -> None:
        """Stop handing out records of ``partitions``, commit them, run the listener.

        The caller removes them from the assignment afterwards.
        """
        subs = self._subscriptions
        if self._protocol is RebalanceProtocol.EAGER:
            self._revoke_announced = True
        subs.pause(partitions)
        await self._hooks.commit_revoked(sorted(partitions))
        self._hooks.stop_fetching(sorted(partitions))
        listener = subs.listener
        if listener is not None:
            await run_listener(listener.on_partitions_revoked, partitions, "on_partitions_revoked")

    async def _lose_partitions(self, why: str) -> None:
        """Drop every owned partition without committing (another member may own them)."""
        subs = self._subscriptions
        self._assigned.clear()
        owned = subs.assigned_partitions()
        if not owned:
            return
        log.warning("Group %s: partitions lost (%s): %s", self._group_id, why, sorted(owned))
        subs.pause(owned)
        self._hooks.stop_fetching(sorted(owned))
        listener = subs.listener
        if listener is not None:
            await run_listener(listener.on_partitions_lost, owned, "on_partitions_lost")
        if subs.partitions_auto_assigned:
            subs.assign_from_subscribed([])

    async def _join(self, node: int, reason: str) -> m.JoinGroupResponse:
        config = self._config
        for _ in range(3):  # KIP-394 asks at most once for a member id
            owned: Iterable[TopicPartition] = ()
            if self._protocol is RebalanceProtocol.COOPERATIVE:
                owned = self._subscriptions.assigned_partitions()
            protocols = join_protocols(
                self._assignors,
                self._subscriptions.subscribed_topics,
                frozenset(owned),
                self._generation.generation_id,
                config.client.client_rack,
            )
            # A field a version lacks must stay at its default (the encoder refuses to
            # drop it silently) unless Kafka marks it ignorable (``reason``, v8+: the
            # encoder drops it); Kafka 4 brokers take every field.
            version = await self._coordination_version(node, m.JoinGroupRequest.API_KEY)
            request = m.JoinGroupRequest(
                group_id=self._group_id,
                session_timeout_ms=config.session_timeout_ms,
                rebalance_timeout_ms=config.effective_rebalance_timeout_ms,
                member_id=self._generation.member_id,
                group_instance_id=self._instance_id,
                protocol_type="consumer",
                protocols=[m.JoinGroupRequestProtocol(name=n, metadata=b) for n, b in protocols],
                reason=reason,
            )
            log.debug("Group %s: JoinGroup (%s)", self._group_id, reason)
            response = await self._rebalance_send(node, request, version)
            if response.error_code:
                exc = for_code(response.error_code)(f"JoinGroup of group {self._group_id!r}")
                if isinstance(exc, MemberIdRequired):
                    self._generation = Generation(-1, response.member_id, None)
                    continue
                raise exc
            self._generation = Generation(
                response.generation_id, response.member_id, response.protocol_name
            )
            log.info(
                "Group %s: joined generation %d as %s%s (protocol %s)",
                self._group_id,
                response.generation_id,
                response.member_id,
                " (leader)" if response.leader == response.member_id else "",
                response.protocol_name,
            )
            return response
        raise MemberIdRequired(f"JoinGroup of group {self._group_id!r}: no member id accepted")

    def _assignor(self, name: str | None) -> AbstractPartitionAssignor:
        for assignor in self._assignors:
            if assignor.name == name:
                return assignor
        raise InconsistentGroupProtocolError(
            f"the group chose assignor {name!r}, which this consumer does not have"
        )

    async def _assign(self, join: Any) -> dict[str, bytes]:
        """The leader's part: assign every member's partitions."""
        assignor = self._assignor(join.protocol_name)
        members = [(mb.member_id, mb.group_instance_id, mb.metadata) for mb in join.members]
        topics: set[str] = set()
        for _, _, metadata in members:
            topics.update(decode_subscription(metadata).topics)
        # The leader tracks every topic of the group, so it notices partitions added
        # to any of them (_check_metadata) and can assign them; the assignment
        # is computed from metadata fetched now (the client's throttle applies).
        await self._interest.set(topics | self._subscriptions.subscribed_topics)
        await self._client.request_refresh(f"group {self._group_id}: assigning")
        encoded, topics = compute_assignment(assignor, self._client.cluster, members)
        self._assigned_snapshot = self._partition_counts(topics)
        return encoded

    async def _sync(self, node: int, assignments: dict[str, bytes]) -> Assignment:
        gen = self._generation
        version = await self._coordination_version(node, m.SyncGroupRequest.API_KEY)
        request = m.SyncGroupRequest(
            group_id=self._group_id,
            generation_id=gen.generation_id,
            member_id=gen.member_id,
            group_instance_id=self._instance_id,
            # Both v5+ and ignorable: the encoder drops them below v5.
            protocol_type="consumer",
            protocol_name=gen.protocol_name,
            assignments=[
                m.SyncGroupRequestAssignment(member_id=mid, assignment=data)
                for mid, data in assignments.items()
            ],
        )
        response = await self._rebalance_send(node, request, version)
        if response.error_code:
            raise for_code(response.error_code)(f"SyncGroup of group {self._group_id!r}")
        return decode_assignment(response.assignment)

    async def _coordination_version(self, node: int, api_key: int) -> int:
        """The version of ``api_key`` the coordinator ``node`` and this client share
        (asked before the request is built: fields a version lacks stay at their
        defaults)."""
        return await self._client.api_version(node, api_key, group=ConnectionGroup.COORDINATION)

    async def _rebalance_send(self, node: int, request: Request[R], version: int) -> R:
        """Send a JoinGroup or SyncGroup request to the coordinator ``node``.

        The coordinator holds either until the rebalance completes, up to the
        rebalance timeout: the request may take that long, plus the Java client's
        grace, before it counts as lost.
        """
        config = self._config
        timeout_ms = (
            max(config.client.request_timeout_ms, config.effective_rebalance_timeout_ms)
            + _JOIN_GRACE_MS
        )
        return await self._client.send(
            node,
            request,
            timeout_ms=timeout_ms,
            max_version=version,
            group=ConnectionGroup.COORDINATION,
        )

    async def _complete(self, assignment: Assignment) -> None:
        """Java's onJoinComplete: install the assignment and tell the listener."""
        subs = self._subscriptions
        gen = self._generation
        assigned = frozenset(assignment.topic_partitions)
        foreign = frozenset(tp for tp in assigned if tp.topic not in subs.subscribed_topics)
        if foreign:
            # The subscription changed since JoinGroup (or the leader erred): take what
            # matches and rejoin with the current subscription.
            assigned -= foreign
            self._request_rejoin(f"assigned partitions of unsubscribed topics {sorted(foreign)}")
        changes = assignment_changes(self._protocol, subs.assigned_partitions(), assigned)
        if changes.revoked:
            await self._revoke(changes.revoked)
        subs.assign_from_subscribed(sorted(assigned))
        try:
            self._assignor(gen.protocol_name).receive_assignment(
                Assignment.of(assigned, assignment.user_data), gen.generation_id
            )
        except Exception:
            log.exception("Assignor %s failed in receive_assignment", gen.protocol_name)
        self._heartbeat_enabled = True
        self._assigned.set()
        self._revoke_announced = False
        log.info(
            "Group %s generation %d: assigned %s",
            self._group_id,
            gen.generation_id,
            sorted(assigned),
        )
        listener = subs.listener
        if listener is not None:
            await run_listener(
                listener.on_partitions_assigned, changes.added, "on_partitions_assigned"
            )
        if changes.rejoin:
            self._request_rejoin("cooperative rebalance: revoked partitions go to new owners")

    # -- leaving ------------------------------------------------------------------------

    async def _leave_for_poll_timeout(self) -> None:
        log.warning(
            "Group %s: no getone()/getmany() for more than max_poll_interval_ms (%d ms); "
            "leaving the group. The next poll rejoins; if processing takes this long, "
            "increase max_poll_interval_ms or reduce max_poll_records.",
            self._group_id,
            self._config.max_poll_interval_ms,
        )
        self._heartbeat_enabled = False
        owned = self._subscriptions.assigned_partitions()
        if owned:
            if self._generation.valid:
                await self._revoke(owned)
                self._subscriptions.assign_from_subscribed([])
            else:
                await self._lose_partitions("poll timeout")
        self._assigned.clear()
        if self._instance_id is None and self._generation.member_id:
            await self._leave_group("max_poll_interval_ms exceeded")
        # Static members only stop heartbeating: the coordinator removes them after
        # session_timeout_ms. Both rejoin with a fresh member id (Java resets it).
        self._generation = NO_GENERATION
        self._poll_event.clear()
        self._waiting_for_poll = True
        self._request_rejoin("polled again after a poll timeout")

    async def _leave_group(self, reason: str) -> None:
        member_id = self._generation.member_id
        timeout = self._client.config.request_timeout_ms / 1000
        try:
            async with timeout_after(timeout):
                node = await self._client.coordinator_for(self._group_id, CoordinatorType.GROUP)
                version = await self._coordination_version(node, m.LeaveGroupRequest.API_KEY)
                if version >= 3:  # KIP-345: a list of members (with instance id, reason)
                    request = m.LeaveGroupRequest(
                        group_id=self._group_id,
                        members=[
                            m.MemberIdentity(
                                member_id=member_id,
                                group_instance_id=self._instance_id,
                                reason=reason,
                            )
                        ],
                    )
                else:
                    request = m.LeaveGroupRequest(group_id=self._group_id, member_id=member_id)
                response = await self._client.send(
                    node, request, max_version=version, group=ConnectionGroup.COORDINATION
                )
        except (KafkaError, asyncio.TimeoutError) as exc:
            log.info("Group %s: LeaveGroup failed: %r", self._group_id, exc)
            return
        code = response.error_code or next(
            (mb.error_code for mb in response.members if mb.error_code), 0
        )
        if code:
            log.info("Group %s: LeaveGroup: %r", self._group_id, for_code(code)("LeaveGroup"))
        else:
            log.info("Group %s: left the group (%s)", self._group_id, reason)

    # -- heartbeats ---------------------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        interval = self._config.heartbeat_interval_ms / 1000
        retry = self._client.config.retry_backoff_ms / 1000
        while True:
            delay = await self._heartbeat_once(interval, retry)
            await asyncio.sleep(delay)

    async def _heartbeat_once(self, interval: float, retry: float) -> float:
        """One heartbeat if enabled; returns the pause before the next."""
        gen = self._generation
        if not self._heartbeat_enabled or not gen.valid:
            return interval
        request = m.HeartbeatRequest(
            group_id=self._group_id,
            generation_id=gen.generation_id,
            member_id=gen.member_id,
            group_instance_id=self._instance_id,
        )
        try:
            node = await self._client.coordinator_for(self._group_id, CoordinatorType.GROUP)
            response = await self._client.send(node, request, group=ConnectionGroup.COORDINATION)
            code = response.error_code
            if code:
                raise for_code(code)(f"Heartbeat of group {self._group_id!r}")
        except KafkaError as exc:
            if gen != self._generation or not self._heartbeat_enabled:
                return interval  # answered for a generation we left meanwhile
            action = error_action(exc)
            if action is ErrorAction.REJOIN:
                self._request_rejoin("heartbeat: the group is rebalancing")
                return interval
            if action in (ErrorAction.FIND_COORDINATOR, ErrorAction.RETRY):
                log.debug("Group %s: heartbeat failed: %r", self._group_id, exc)
                if action is ErrorAction.FIND_COORDINATOR:
                    self._client.invalidate_coordinator(self._group_id, CoordinatorType.GROUP)
                return retry
            # Member unknown, stale generation, fenced, authorization: the main task
            # acts on it (partitions lost, rejoin or fatal).
            self._heartbeat_enabled = False
            self._lost = (exc, gen)
            self._wakeup.set()
        return interval
