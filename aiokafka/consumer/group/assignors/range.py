"""The ``range`` assignor: contiguous partition ranges per topic (Java's RangeAssignor)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from aiokafka.structs import TopicPartition

from .abstract import TopicsOnlyAssignor, partitions_per_topic
from .types import Assignment, ClusterView, GroupMember, member_sort_key

__all__ = ["RangePartitionAssignor"]


class RangePartitionAssignor(TopicsOnlyAssignor):
    """Assigns each topic separately, in contiguous ranges.

    For each topic, the partitions are laid out in numeric order and the members
    subscribed to it in Java's member order (static members by
    ``group_instance_id``, then the others by member id). Each member gets
    ``partitions // members`` partitions, and the first ``partitions % members``
    members one more.

    With two members C0 and C1 and topics t0 and t1 of three partitions each::

        C0: [t0p0, t0p1, t1p0, t1p1]
        C1: [t0p2, t1p2]

    Members subscribed to the same topics get the same ranges of every topic, so
    partitions with the same number land together (useful for joins), at the price
    of balance when there are many topics.
    """

    name = "range"
    version = 0

    def assign(
        self, cluster: ClusterView, members: Mapping[str, GroupMember]
    ) -> dict[str, Assignment]:
        """Range-assign every subscribed topic; see the class docstring."""
        subscribers: defaultdict[str, list[GroupMember]] = defaultdict(list)
        for member in members.values():
            for topic in set(member.topics):
                subscribers[topic].append(member)

        assigned: dict[str, list[TopicPartition]] = {mid: [] for mid in members}
        for topic, partitions in partitions_per_topic(cluster, members).items():
            consumers = sorted(subscribers[topic], key=member_sort_key)
            per_member, extra = divmod(len(partitions), len(consumers))
            start = 0
            for i, member in enumerate(consumers):
                length = per_member + (1 if i < extra else 0)
                assigned[member.member_id].extend(
                    TopicPartition(topic, p) for p in partitions[start : start + length]
                )
                start += length
        return {mid: Assignment.of(tps) for mid, tps in assigned.items()}
