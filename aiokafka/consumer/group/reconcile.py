"""The KIP-848 member state machine, without I/O (no asyncio).

:class:`MemberStateMachine` follows the Java client's ``ConsumerMembershipManager``:
the member joins with epoch 0, the coordinator answers every heartbeat with the
member epoch and, when it changed, the *target* assignment (topic ids and
partitions). The member reconciles towards the target one step at a time:

1. compute what to revoke (owned, not in the target) and what to add;
2. give up the revoked partitions (commit, stop fetching, ``on_partitions_revoked``);
3. install the new assignment and acknowledge it in the next heartbeat (the owned
   partitions field then carries the new set), ``on_partitions_assigned`` for the
   added partitions only.

The coordinator hands a revoked partition to another member only after this member
acknowledged that it no longer owns it, so no partition is ever owned twice.

:class:`HeartbeatFields` decides which optional request fields a heartbeat carries:
everything when joining, afterwards only what changed since the last heartbeat the
coordinator accepted (the protocol's "null if it did not change").

The asyncio side lives in :mod:`aiokafka.consumer.group.consumer_protocol`.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from aiokafka.structs import TopicPartition

__all__ = [
    "LEAVE_EPOCH",
    "STATIC_LEAVE_EPOCH",
    "HeartbeatFields",
    "MemberState",
    "MemberStateMachine",
    "ReconcilePlan",
    "SentFields",
]

#: Member epoch of a heartbeat that leaves the group for good.
LEAVE_EPOCH = -1
#: Member epoch of a static member's leave: the coordinator keeps its assignment for
#: the session timeout so a restart with the same instance id causes no rebalance.
STATIC_LEAVE_EPOCH = -2

TopicIdAssignment = Mapping[uuid.UUID, frozenset[int]]


class MemberState(enum.Enum):
    """Where the member is in its life cycle (names as in the Java client)."""

    #: Not subscribed: no heartbeats.
    UNSUBSCRIBED = "unsubscribed"
    #: Heartbeating with epoch 0 until the coordinator gives an epoch.
    JOINING = "joining"
    #: A target assignment differs from what the member owns.
    RECONCILING = "reconciling"
    #: The new assignment is installed; the next heartbeat acknowledges it.
    ACKNOWLEDGING = "acknowledging"
    #: Owns its target assignment.
    STABLE = "stable"
    #: The coordinator fenced the member: its partitions are lost, rejoin with epoch 0.
    FENCED = "fenced"
    #: Left because the application did not poll within ``max_poll_interval_ms``;
    #: rejoins on the next poll.
    STALE = "stale"
    #: Sending the leave heartbeat.
    LEAVING = "leaving"
    #: A fatal error: the member stays out of the group.
    FATAL = "fatal"


@dataclass(frozen=True, slots=True)
class ReconcilePlan:
    """One reconciliation step.

    Attributes:
        assignment: The assignment to install (topic names).
        assignment_ids: The same by topic id, as the acknowledging heartbeat sends it.
        revoked: Owned partitions to give up, in this step.
        added: Partitions new to this member.
        epoch: The member epoch the target came with.
        names: Topic id -> name for the topics of ``assignment_ids``.
    """

    assignment: frozenset[TopicPartition]
    assignment_ids: dict[uuid.UUID, frozenset[int]]
    revoked: frozenset[TopicPartition]
    added: frozenset[TopicPartition]
    epoch: int
    names: dict[uuid.UUID, str]

    def restricted(self, subscribed: Callable[[str], bool]) -> ReconcilePlan:
        """This plan without topics that are no longer subscribed.

        The application may change its subscription while a listener runs; owned
        partitions of dropped topics join the revoked ones.
        """
        ids = {tid: ps for tid, ps in self.assignment_ids.items() if subscribed(self.names[tid])}
        if ids == self.assignment_ids:
            return self
        assignment = frozenset(tp for tp in self.assignment if subscribed(tp.topic))
        dropped = self.assignment - assignment
        return ReconcilePlan(
            assignment=assignment,
            assignment_ids=ids,
            revoked=self.revoked | (dropped - self.added),
            added=self.added - dropped,
            epoch=self.epoch,
            names=self.names,
        )


class MemberStateMachine:
    """Member id, epoch, owned and target assignment of one KIP-848 member.

    Args:
        member_id: The member id to send (a client-generated UUID string for
            ConsumerGroupHeartbeat v1+, empty for v0 where the coordinator assigns one).
    """

    def __init__(self, member_id: str = "") -> None:
        self.member_id = member_id
        self.member_epoch = 0
        self.state = MemberState.UNSUBSCRIBED
        #: Partitions the member owns (installed in the subscription state).
        self.owned: frozenset[TopicPartition] = frozenset()
        #: The owned partitions by topic id (what heartbeats report).
        self.owned_ids: dict[uuid.UUID, frozenset[int]] = {}
        #: The last target assignment the coordinator sent, or None before the first.
        self.target: dict[uuid.UUID, frozenset[int]] | None = None
        self.target_epoch = 0

    # -- joining and leaving ------------------------------------------------------------

    def join(self) -> None:
        """Start (or restart) joining: epoch 0, nothing owned from the coordinator's view.

        The member id is kept (KIP-1082: one id for the member's whole life).
        """
        self.member_epoch = 0
        self.state = MemberState.JOINING
        self.target = None
        self.target_epoch = 0

    def fence(self) -> frozenset[TopicPartition]:
        """The coordinator fenced the member (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID).

        Returns:
            The partitions now lost (``on_partitions_lost``, no commit).
        """
        lost = self.owned
        self._drop_assignment()
        self.state = MemberState.FENCED
        return lost

    def stale(self) -> frozenset[TopicPartition]:
        """``max_poll_interval_ms`` passed: the member leaves; its partitions are lost."""
        lost = self.owned
        self._drop_assignment()
        self.state = MemberState.STALE
        return lost

    def leave(self, static: bool) -> int:
        """Start leaving; returns the epoch the leave heartbeat carries."""
        self._drop_assignment()
        self.state = MemberState.LEAVING
        return STATIC_LEAVE_EPOCH if static else LEAVE_EPOCH

    def left(self) -> None:
        """The leave heartbeat went out (or could not): the member is out of the group."""
        self.member_epoch = 0
        self.state = MemberState.UNSUBSCRIBED

    def fatal(self) -> None:
        """A fatal error: stop heartbeating for good."""
        self.state = MemberState.FATAL

    def _drop_assignment(self) -> None:
        self.owned = frozenset()
        self.owned_ids = {}
        self.target = None
        self.member_epoch = 0

    @property
    def in_group(self) -> bool:
        """Heartbeats are due (joining or a member)."""
        return self.state in (
            MemberState.JOINING,
            MemberState.RECONCILING,
            MemberState.ACKNOWLEDGING,
            MemberState.STABLE,
        )

    # -- heartbeat responses ------------------------------------------------------------

    def on_heartbeat(
        self,
        member_id: str | None,
        member_epoch: int,
        assignment: TopicIdAssignment | None,
    ) -> None:
        """A successful heartbeat response.

        Args:
            member_id: The id the coordinator returned (v0 assigns it on join).
            member_epoch: The member's epoch now.
            assignment: The target assignment, or None if it did not change.
        """
        if not self.in_group:
            return  # a response that raced with fencing or leaving: stale
        if member_id:
            self.member_id = member_id
        self.member_epoch = member_epoch
        if assignment is not None:
            self.target = {tid: frozenset(ps) for tid, ps in assignment.items() if ps}
            self.target_epoch = member_epoch
        if self.state is MemberState.ACKNOWLEDGING:
            # The heartbeat that carried the new owned set was accepted.
            self.state = MemberState.STABLE
        if self.target is not None and self.target != self.owned_ids:
            if self.state is not MemberState.ACKNOWLEDGING:
                self.state = MemberState.RECONCILING
        elif self.state in (MemberState.JOINING, MemberState.RECONCILING):
            self.state = MemberState.STABLE

    # -- reconciliation -----------------------------------------------------------------

    def plan(
        self,
        topic_name: Callable[[uuid.UUID], str | None],
        subscribed: Callable[[str], bool] = lambda _t: True,
    ) -> ReconcilePlan | None:
        """The next reconciliation step, or None if there is nothing to do.

        Args:
            topic_name: Resolves a topic id from cluster metadata (None if unknown).
            subscribed: Whether a topic is still subscribed; partitions of topics the
                application unsubscribed from are dropped locally right away (the
                coordinator drops them from the target after the next heartbeat).

        Raises:
            LookupError: some topic ids of the target are not in the metadata yet
                (``args[0]`` is the set of ids); refresh metadata and plan again.
        """
        if self.state is not MemberState.RECONCILING or self.target is None:
            return None
        names: dict[uuid.UUID, str] = {}
        unknown: set[uuid.UUID] = set()
        for tid in self.target:
            name = topic_name(tid)
            if name is None:
                unknown.add(tid)
            else:
                names[tid] = name
        if unknown:
            raise LookupError(unknown)
        ids = {tid: ps for tid, ps in self.target.items() if subscribed(names[tid])}
        assignment = frozenset(TopicPartition(names[tid], p) for tid, ps in ids.items() for p in ps)
        if ids == self.owned_ids and assignment == self.owned:
            self.state = MemberState.STABLE
            return None
        return ReconcilePlan(
            assignment=assignment,
            assignment_ids=ids,
            revoked=self.owned - assignment,
            added=assignment - self.owned,
            epoch=self.target_epoch,
            names={tid: names[tid] for tid in ids},
        )

    def reconciled(self, plan: ReconcilePlan) -> bool:
        """The plan's assignment is installed; the next heartbeat acknowledges it.

        Returns:
            False if the member was fenced or left meanwhile (the plan is stale and
            nothing changes).
        """
        if self.state is not MemberState.RECONCILING:
            return False
        self.owned = plan.assignment
        self.owned_ids = dict(plan.assignment_ids)
        self.state = MemberState.ACKNOWLEDGING
        return True


@dataclass(slots=True)
class SentFields:
    """Optional fields of the last heartbeat the coordinator accepted."""

    rebalance_timeout_ms: int | None = None
    subscribed_topics: frozenset[str] | None = None
    server_assignor: str | None = None
    owned: dict[uuid.UUID, frozenset[int]] | None = None


@dataclass(frozen=True, slots=True)
class HeartbeatFields:
    """The fields one heartbeat carries; ``None`` means "unchanged" on the wire.

    Build with :meth:`build`; after the coordinator accepted the heartbeat, record
    it with :meth:`sent_into`. After a failed heartbeat, reset :class:`SentFields`
    so the next one carries the full state (the coordinator may not have seen it).
    """

    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    subscribed_topics: list[str] | None
    server_assignor: str | None
    owned: dict[uuid.UUID, frozenset[int]] | None

    @classmethod
    def build(
        cls,
        machine: MemberStateMachine,
        sent: SentFields,
        *,
        instance_id: str | None,
        rack_id: str | None,
        rebalance_timeout_ms: int,
        subscribed_topics: Iterable[str],
        server_assignor: str | None,
    ) -> HeartbeatFields:
        """The next heartbeat of ``machine`` (full state when joining)."""
        full = machine.member_epoch == 0 or machine.state is MemberState.JOINING
        topics = frozenset(subscribed_topics)
        owned: dict[uuid.UUID, frozenset[int]] | None = None
        if full:
            # Joining members own nothing (the coordinator requires an empty list).
            owned = {} if machine.member_epoch == 0 else dict(machine.owned_ids)
        elif machine.state is MemberState.ACKNOWLEDGING or sent.owned != machine.owned_ids:
            owned = dict(machine.owned_ids)
        return cls(
            member_id=machine.member_id,
            member_epoch=machine.member_epoch,
            # The instance id is sent on every heartbeat, as the Java client does: the
            # coordinator uses it to find a static member after a leave with epoch -2.
            instance_id=instance_id,
            rack_id=rack_id if full else None,
            rebalance_timeout_ms=(
                rebalance_timeout_ms
                if full or sent.rebalance_timeout_ms != rebalance_timeout_ms
                else -1
            ),
            subscribed_topics=(
                sorted(topics) if full or sent.subscribed_topics != topics else None
            ),
            server_assignor=(
                server_assignor if full or sent.server_assignor != server_assignor else None
            ),
            owned=owned,
        )

    def sent_into(self, sent: SentFields) -> None:
        """Record what this heartbeat told the coordinator."""
        if self.rebalance_timeout_ms >= 0:
            sent.rebalance_timeout_ms = self.rebalance_timeout_ms
        if self.subscribed_topics is not None:
            sent.subscribed_topics = frozenset(self.subscribed_topics)
        if self.server_assignor is not None:
            sent.server_assignor = self.server_assignor
        if self.owned is not None:
            sent.owned = dict(self.owned)
