"""The ``roundrobin`` assignor: deal all partitions out in turn (Java's RoundRobinAssignor)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from aiokafka.structs import TopicPartition

from .abstract import TopicsOnlyAssignor, partitions_per_topic

if TYPE_CHECKING:
    from .types import Assignment, ClusterView, GroupMember

__all__ = ["RoundRobinPartitionAssignor"]


class RoundRobinPartitionAssignor(TopicsOnlyAssignor):
    """Deals every subscribed partition to the members in turn.

    All partitions of all subscribed topics are sorted (topic, then partition) and
    the members are arranged in a circle in Java's member order (static members by
    ``group_instance_id``, then the others by member id). Each partition goes to the
    next member in the circle that subscribes to its topic; members that do not are
    skipped.

    If every member subscribes to the same topics, member counts differ by at most
    one. For example, with members C0 and C1 and topics t0 and t1 of three
    partitions each::

        C0: [t0p0, t0p2, t1p1]
        C1: [t0p1, t1p0, t1p2]

    With different subscriptions the result may be unbalanced: C0 on t0; C1 on t0,
    t1; C2 on t0, t1, t2; with partitions t0p0, t1p0, t1p1, t2p0, t2p1, t2p2::

        C0: [t0p0]
        C1: [t1p0]
        C2: [t1p1, t2p0, t2p1, t2p2]
    """

    name = "roundrobin"
    version = 0

    def assign(
        self, cluster: ClusterView, members: Mapping[str, GroupMember]
    ) -> dict[str, Assignment]:
        """Round-robin assign all subscribed partitions; see the class docstring."""
        # Imported here, once per rebalance: the default strategy is imported with the
        # consumer, .types only when a group uses it (see abstract.py).
        from .types import Assignment, java_string_key, member_sort_key

        circle = sorted(members.values(), key=member_sort_key)
        subscribed = [frozenset(m.topics) for m in circle]
        assigned: dict[str, list[TopicPartition]] = {mid: [] for mid in members}
        per_topic = partitions_per_topic(cluster, members)
        position = 0
        for topic in sorted(per_topic, key=java_string_key):
            for partition in per_topic[topic]:
                # Somebody subscribes to every topic in per_topic, so this ends.
                while topic not in subscribed[position]:
                    position = (position + 1) % len(circle)
                assigned[circle[position].member_id].append(TopicPartition(topic, partition))
                position = (position + 1) % len(circle)
        return {mid: Assignment.of(tps) for mid, tps in assigned.items()}
