"""Value types that assignors take and return, and the cluster view they read.

The group leader's coordinator decodes every member's JoinGroup metadata into a
:class:`GroupMember`, hands the whole group to an assignor together with a
:class:`ClusterView`, and encodes the :class:`Assignment` objects it gets back into
SyncGroup. Nothing here does I/O.

Compatibility: aiokafka 0.x assignors read ``metadata.subscription`` (the topic list)
and ``metadata.user_data`` from the values of the ``members`` dict, and call
``assignment.partitions()``; kafka-python 3 assignors read ``member.member_id``,
``member.group_instance_id`` and ``member.metadata.topics``. :class:`GroupMember`
and :class:`Assignment` answer all of these, so most user-written assignor bodies
run unchanged (see :mod:`aiokafka.consumer.group.assignors.compat` for the rest).
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

# Lazy (see codec.py): the generated module loads when metadata() is first built.
from aiokafka.structs import TopicPartition

if TYPE_CHECKING:
    from aiokafka.protocol.messages import ConsumerProtocolSubscription

__all__ = [
    "Assignment",
    "ClusterView",
    "GroupMember",
    "RebalanceProtocol",
    "ReplicaRacksView",
    "StaticCluster",
    "Subscription",
    "group_by_topic",
    "java_string_key",
    "member_sort_key",
    "replica_racks",
]


class RebalanceProtocol(enum.IntEnum):
    """How members hand partitions over during a rebalance (KIP-429).

    Attributes:
        EAGER: Every member revokes all of its partitions before it rejoins, and gets
            a complete new assignment (the classic protocol).
        COOPERATIVE: Members keep their partitions while rejoining and revoke only
            the ones the new assignment takes away; a partition that moves is handed
            out to its new owner in a follow-up rebalance.
    """

    EAGER = 0
    COOPERATIVE = 1


@runtime_checkable
class ClusterView(Protocol):
    """What an assignor needs to know about the cluster.

    :class:`aiokafka.cluster.metadata.ClusterMetadata` satisfies it, and so does
    :class:`StaticCluster`.
    """

    def partitions_for_topic(self, topic: str) -> Collection[int] | None:
        """Partition ids of ``topic``, or ``None`` if the topic is not known."""


@runtime_checkable
class ReplicaRacksView(Protocol):
    """Optional extension of :class:`ClusterView` for rack-aware assignment (KIP-881)."""

    def partition_racks(self, tp: TopicPartition) -> Collection[str]:
        """Racks of the brokers holding a replica of ``tp`` (empty if unknown)."""


def replica_racks(cluster: object, tp: TopicPartition) -> frozenset[str]:
    """Racks holding replicas of ``tp``, or an empty set if the cluster cannot tell.

    Uses ``cluster.partition_racks(tp)`` when the cluster has it; otherwise, for a
    :class:`~aiokafka.cluster.metadata.ClusterMetadata`-like object, looks up the
    partition's replicas and their brokers' racks.
    """
    if isinstance(cluster, ReplicaRacksView):
        return frozenset(cluster.partition_racks(tp))
    partition = getattr(cluster, "partition", None)
    broker = getattr(cluster, "broker", None)
    if not callable(partition) or not callable(broker):
        return frozenset()
    meta = partition(tp)
    if meta is None:
        return frozenset()
    racks = set()
    for node_id in getattr(meta, "replicas", ()):
        b = broker(node_id)
        rack = getattr(b, "rack", None)
        if rack is not None:
            racks.add(rack)
    return frozenset(racks)


class StaticCluster:
    """A fixed :class:`ClusterView` built from plain data (tests, tools, simulations).

    Args:
        partitions: Topic name to either a partition count or the partition ids.
        racks: Optional replica racks by partition, for rack-aware assignment.
    """

    __slots__ = ("_partitions", "_racks")

    def __init__(
        self,
        partitions: Mapping[str, int | Iterable[int]],
        racks: Mapping[TopicPartition, Iterable[str]] | None = None,
    ) -> None:
        self._partitions: dict[str, frozenset[int]] = {}
        for topic, parts in partitions.items():
            if isinstance(parts, int):
                if parts < 0:
                    raise ValueError(f"partitions[{topic!r}] must be >= 0, got {parts}")
                self._partitions[topic] = frozenset(range(parts))
            else:
                self._partitions[topic] = frozenset(parts)
        self._racks = {tp: frozenset(r) for tp, r in (racks or {}).items()}

    def partitions_for_topic(self, topic: str) -> frozenset[int] | None:
        """Partition ids of ``topic``, or ``None`` if it is not in this view."""
        return self._partitions.get(topic)

    def partition_racks(self, tp: TopicPartition) -> frozenset[str]:
        """Replica racks of ``tp`` given at construction (empty if none)."""
        return self._racks.get(tp, frozenset())


@dataclass(frozen=True, slots=True)
class Subscription:
    """One member's JoinGroup metadata (``ConsumerProtocolSubscription``).

    Attributes:
        topics: Topics the member subscribes to.
        user_data: Assignor-specific bytes (the sticky assignor keeps the previous
            assignment there), or ``None``.
        owned_partitions: Partitions the member owns while it rejoins (cooperative
            protocol; wire version 1+).
        generation_id: Generation of the owned partitions, or -1 (wire version 2+).
        rack_id: The member's ``client.rack``, or ``None`` (wire version 3+).
    """

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None

    @property
    def subscription(self) -> list[str]:
        """The topic list under its aiokafka 0.x name."""
        return list(self.topics)


@dataclass(frozen=True, slots=True)
class GroupMember:
    """A member of the group as the leader sees it: its ids plus its subscription.

    Attributes:
        member_id: Id the coordinator gave the member.
        topics: Topics the member subscribes to.
        group_instance_id: Static membership id (KIP-345), or ``None``.
        user_data: Assignor-specific bytes, or ``None``.
        owned_partitions: Partitions the member still owns (cooperative protocol).
        generation_id: Generation of ``owned_partitions``, or -1 if not sent.
        rack_id: The member's rack, or ``None``.
    """

    member_id: str
    topics: tuple[str, ...]
    group_instance_id: str | None = None
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None

    @classmethod
    def from_subscription(
        cls, member_id: str, subscription: Subscription, group_instance_id: str | None = None
    ) -> GroupMember:
        """Combine a decoded :class:`Subscription` with the member's ids."""
        return cls(
            member_id,
            subscription.topics,
            group_instance_id,
            subscription.user_data,
            subscription.owned_partitions,
            subscription.generation_id,
            subscription.rack_id,
        )

    @property
    def subscription(self) -> list[str]:
        """The topic list under its aiokafka 0.x name."""
        return list(self.topics)

    @property
    def metadata(self) -> ConsumerProtocolSubscription:
        """The subscription as the generated wire struct (kafka-python 3 shape)."""
        return subscription_struct(self)


@dataclass(frozen=True, slots=True)
class Assignment:
    """The partitions the leader gives one member (``ConsumerProtocolAssignment``).

    Attributes:
        topic_partitions: Assigned partitions, sorted by topic then partition.
        user_data: Assignor-specific bytes for the member, or ``None``.
    """

    topic_partitions: tuple[TopicPartition, ...] = ()
    user_data: bytes | None = None

    @classmethod
    def of(cls, partitions: Iterable[TopicPartition], user_data: bytes | None = None) -> Assignment:
        """Build an assignment from partitions in any order (they are sorted)."""
        return cls(tuple(sorted(set(partitions))), user_data)

    def partitions(self) -> list[TopicPartition]:
        """The assigned partitions (aiokafka 0.x / kafka-python method)."""
        return list(self.topic_partitions)

    @property
    def assignment(self) -> list[tuple[str, list[int]]]:
        """``[(topic, [partition, ...]), ...]``, the aiokafka 0.x shape."""
        return group_by_topic(self.topic_partitions)


def subscription_struct(member: Subscription | GroupMember) -> ConsumerProtocolSubscription:
    """``member``'s subscription as the generated wire struct (what
    ``codec.encode_subscription`` encodes)."""
    # Imported here: a consumer loads this module for its default assignor, and
    # the message table otherwise loads with its first request.
    from aiokafka.protocol import messages as m

    return m.ConsumerProtocolSubscription(
        topics=list(member.topics),
        user_data=member.user_data,
        owned_partitions=[
            m.ConsumerProtocolSubscriptionTopicPartition(topic=t, partitions=p)
            for t, p in group_by_topic(member.owned_partitions)
        ],
        generation_id=member.generation_id,
        rack_id=member.rack_id,
    )


def group_by_topic(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    """Group partitions by topic: ``[(topic, sorted partition ids)]`` sorted by topic."""
    by_topic: defaultdict[str, list[int]] = defaultdict(list)
    for tp in partitions:
        by_topic[tp.topic].append(tp.partition)
    return [(topic, sorted(by_topic[topic])) for topic in sorted(by_topic)]


def java_string_key(value: str) -> bytes:
    """Sort key that orders strings like Java's ``String.compareTo``.

    Java compares UTF-16 code units, Python compares code points; the two differ
    for characters above U+FFFF. Big-endian UTF-16 bytes compare like code units,
    so assignments match the Java client's even for such names.
    """
    return value.encode("utf-16-be", "surrogatepass")


def member_sort_key(member: GroupMember) -> tuple[int, bytes]:
    """Java's member order: static members by instance id first, then the rest by id."""
    if member.group_instance_id is not None:
        return (0, java_string_key(member.group_instance_id))
    return (1, java_string_key(member.member_id))
