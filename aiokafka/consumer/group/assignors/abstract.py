"""The interface every partition assignor implements, and helpers they share.

How the group coordinator drives an assignor (every member, then the leader):

1. JoinGroup: ``subscription = assignor.metadata(topics)``. The coordinator then sets
   the fields it owns with :func:`dataclasses.replace`: ``owned_partitions`` (the
   partitions held now under the COOPERATIVE protocol, empty under EAGER),
   ``generation_id`` and ``rack_id`` (``client_rack``), and sends
   :func:`~aiokafka.consumer.group.assignors.codec.encode_subscription`.
2. The leader only: ``assignor.assign(cluster, members)`` with every member decoded
   into a :class:`~aiokafka.consumer.group.assignors.types.GroupMember`; each result
   is encoded into SyncGroup. Members missing from the result get an empty
   assignment.
3. SyncGroup done: ``assignor.receive_assignment(assignment, generation)``, which by
   default calls ``on_generation_assignment(generation)`` and then
   ``on_assignment(assignment)``.

Assignors are objects; the consumer accepts classes too and instantiates them (see
:func:`~aiokafka.consumer.group.assignors.compat.as_assignor`, which also wraps
aiokafka 0.x and kafka-python style assignors).
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, ClassVar

# .types (three dataclasses, two runtime-checkable protocols: costly to define) is
# imported where first used: a consumer imports the default roundrobin assignor at
# import, while these methods run only when its group rebalances (issue 14).
if TYPE_CHECKING:
    from .types import Assignment, ClusterView, GroupMember, RebalanceProtocol, Subscription

__all__ = ["AbstractPartitionAssignor", "TopicsOnlyAssignor", "partitions_per_topic"]

log = logging.getLogger(__name__)


class AbstractPartitionAssignor(abc.ABC):
    """Base class of partition assignors.

    Subclasses set ``name`` (the protocol name sent in JoinGroup, e.g. ``"range"``)
    and implement :meth:`assign`; the other methods have working defaults.

    Attributes:
        name: The assignment protocol name; all members must agree on one.
        version: Version of the assignor's algorithm and user data format.
    """

    version: ClassVar[int] = 0

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The assignment protocol name sent in JoinGroup."""

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """Rebalance protocols this assignor works with, most preferred first.

        The consumer uses the first protocol that all of its assignors support. The
        default is eager only; cooperative assignors list ``COOPERATIVE`` first.
        """
        from .types import RebalanceProtocol

        return [RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> Subscription:
        """The JoinGroup subscription for ``topics``.

        The default carries no user data. Override to add some (the sticky assignor
        adds the previous assignment).
        """
        from .types import Subscription

        return Subscription(tuple(sorted(set(topics))))

    @abc.abstractmethod
    def assign(
        self, cluster: ClusterView, members: Mapping[str, GroupMember]
    ) -> dict[str, Assignment]:
        """Compute the group's assignment (runs on the leader only).

        Args:
            cluster: Partition ids of each topic (and optionally replica racks).
            members: Every member of the group by member id.

        Returns:
            The assignment of each member id; members left out get nothing.
        """

    def on_assignment(self, assignment: Assignment) -> None:  # noqa: B027 - optional hook
        """Called with this member's assignment after every rebalance (default: no-op)."""

    def on_generation_assignment(self, generation: int) -> None:  # noqa: B027 - optional hook
        """Called with the generation of the assignment after every rebalance."""

    def receive_assignment(self, assignment: Assignment, generation: int) -> None:
        """Entry point the coordinator calls after SyncGroup: generation, then assignment."""
        self.on_generation_assignment(generation)
        self.on_assignment(assignment)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


class TopicsOnlyAssignor(AbstractPartitionAssignor):
    """An assignor whose subscription is its topics alone (range, roundrobin)."""

    @classmethod
    def metadata(cls, topics: Iterable[str]) -> Subscription:
        """The JoinGroup subscription for ``topics`` (no user data).

        A classmethod, as in aiokafka: ``RangePartitionAssignor.metadata(topics)``
        works on the class and on an instance.
        """
        from .types import Subscription

        return Subscription(tuple(sorted(set(topics))))


def partitions_per_topic(
    cluster: ClusterView, members: Mapping[str, GroupMember]
) -> dict[str, list[int]]:
    """Sorted partition ids of every topic some member subscribes to.

    Topics the cluster does not know (not created yet, or not authorized) are left
    out, as in the Java client: nobody is assigned partitions of them.
    """
    result: dict[str, list[int]] = {}
    for topic in {t for m in members.values() for t in m.topics}:
        partitions = cluster.partitions_for_topic(topic)
        if partitions is None:
            log.warning("No partition metadata for topic %s; skipping it in assignment", topic)
            continue
        result[topic] = sorted(partitions)
    return result
