"""The ``sticky`` (KIP-54) and ``cooperative-sticky`` (KIP-429) assignors.

Both balance partitions and keep them with their previous owners; the algorithm is
in :mod:`~aiokafka.consumer.group.assignors.sticky_core`. They differ in where a
member's previous partitions come from and in how moves are handed over:

* ``sticky`` is eager: members revoke everything before rejoining, so each member
  reports its previous assignment and generation in the subscription's user data.
* ``cooperative-sticky`` reads the ``owned_partitions`` and ``generation_id`` fields
  of the subscription (falling back to a generation in the user data, for members
  that send subscription v0/v1). A partition that would move from one member to
  another is left out of the new owner's assignment; the current owner sees it gone,
  revokes it and rejoins, and the follow-up rebalance gives it to the new owner.
  So no partition is ever assigned to one member while another still owns it.
"""

from __future__ import annotations

import abc
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping

from aiokafka.structs import TopicPartition

from .abstract import AbstractPartitionAssignor, partitions_per_topic
from .codec import (
    decode_generation_user_data,
    decode_sticky_user_data,
    encode_generation_user_data,
    encode_sticky_user_data,
)
from .sticky_core import MemberClaim, sticky_assign
from .types import (
    Assignment,
    ClusterView,
    GroupMember,
    RebalanceProtocol,
    Subscription,
    member_sort_key,
)

__all__ = ["CooperativeStickyAssignor", "StickyPartitionAssignor"]

log = logging.getLogger(__name__)

#: Generation of a member that has not been assigned anything yet.
DEFAULT_GENERATION_ID = -1


class _StickyBase(AbstractPartitionAssignor):
    """State and assignment shared by both sticky assignors."""

    DEFAULT_GENERATION_ID = DEFAULT_GENERATION_ID

    def __init__(self) -> None:
        self._member_assignment: tuple[TopicPartition, ...] | None = None
        self._generation = DEFAULT_GENERATION_ID

    @property
    def member_assignment(self) -> tuple[TopicPartition, ...] | None:
        """This member's last assignment, or ``None`` before the first one."""
        return self._member_assignment

    @property
    def generation(self) -> int:
        """Generation of :attr:`member_assignment` (-1 before the first one)."""
        return self._generation

    def on_assignment(self, assignment: Assignment) -> None:
        """Remember the assignment, to report it in the next subscription."""
        self._member_assignment = assignment.topic_partitions

    def on_generation_assignment(self, generation: int) -> None:
        """Remember the generation of the assignment."""
        self._generation = generation

    @abc.abstractmethod
    def _claim(self, member: GroupMember) -> MemberClaim:
        """A member's subscribed topics and previous partitions, from its subscription."""

    def _sticky_assignment(
        self, cluster: ClusterView, members: Mapping[str, GroupMember]
    ) -> dict[str, list[TopicPartition]]:
        order = [m.member_id for m in sorted(members.values(), key=member_sort_key)]
        claims = {mid: self._claim(member) for mid, member in members.items()}
        return sticky_assign(partitions_per_topic(cluster, members), claims, order)


class StickyPartitionAssignor(_StickyBase):
    """Balanced assignment that moves as few partitions as possible (eager protocol).

    The result is as balanced as possible first (members with the same
    subscriptions differ by at most one partition) and, second, keeps as many
    partitions as possible with the member that had them before. Each member keeps
    its last assignment and generation and sends them in its subscription's user
    data (Java's StickyAssignor format v1), so a new leader knows them too.

    An instance holds this member's state: use one instance per consumer.
    """

    name = "sticky"
    version = 0

    def metadata(self, topics: Iterable[str]) -> Subscription:
        """Subscription carrying the previous assignment and generation as user data."""
        user_data = None
        if self._member_assignment is not None:
            user_data = encode_sticky_user_data(self._member_assignment, self._generation)
        return Subscription(tuple(sorted(set(topics))), user_data)

    def _claim(self, member: GroupMember) -> MemberClaim:
        data = decode_sticky_user_data(member.user_data)
        return MemberClaim(frozenset(member.topics), data.partitions, data.generation)

    def assign(
        self, cluster: ClusterView, members: Mapping[str, GroupMember]
    ) -> dict[str, Assignment]:
        """Balanced, sticky assignment of all subscribed partitions."""
        result = self._sticky_assignment(cluster, members)
        return {mid: Assignment.of(tps) for mid, tps in result.items()}


class CooperativeStickyAssignor(_StickyBase):
    """The sticky algorithm with incremental cooperative rebalancing (KIP-429).

    Members keep consuming their partitions during a rebalance. A partition that
    moves between members is first only taken away from its owner; the owner
    revokes it and rejoins, and the next rebalance assigns it to its new owner.

    Supports the COOPERATIVE protocol and, like Java's, also EAGER (used when
    another configured assignor supports only EAGER).
    """

    name = "cooperative-sticky"
    version = 0

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """``[COOPERATIVE, EAGER]``, as in Java."""
        return [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> Subscription:
        """Subscription with the owned partitions, generation and generation user data.

        The coordinator overrides ``owned_partitions`` and ``generation_id`` with what
        it knows (under EAGER, owned partitions are empty because they were revoked).
        """
        return Subscription(
            tuple(sorted(set(topics))),
            encode_generation_user_data(self._generation),
            tuple(self._member_assignment or ()),
            self._generation,
        )

    def _claim(self, member: GroupMember) -> MemberClaim:
        # Subscription v2+ carries the generation; older ones only in the user data.
        generation: int | None = member.generation_id
        if member.generation_id < 0:
            generation = decode_generation_user_data(member.user_data)
        return MemberClaim(frozenset(member.topics), member.owned_partitions, generation)

    def assign(
        self, cluster: ClusterView, members: Mapping[str, GroupMember]
    ) -> dict[str, Assignment]:
        """Sticky assignment minus partitions another member still has to revoke."""
        result = self._sticky_assignment(cluster, members)
        claimed_by: defaultdict[TopicPartition, set[str]] = defaultdict(set)
        for mid, member in members.items():
            for tp in member.owned_partitions:
                claimed_by[tp].add(mid)
        withheld = 0
        out: dict[str, Assignment] = {}
        for mid, tps in result.items():
            keep = []
            for tp in tps:
                owners = claimed_by.get(tp)
                if owners and mid not in owners:
                    # Another member still consumes tp; it revokes tp when it sees the
                    # new assignment, and the follow-up rebalance gives tp to mid.
                    withheld += 1
                    continue
                keep.append(tp)
            out[mid] = Assignment.of(keep)
        if withheld:
            log.info(
                "%d partitions change owner; they are assigned after their owners revoke them",
                withheld,
            )
        return out
