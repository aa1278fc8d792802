"""Partition assignors: who in a consumer group reads which partitions.

Built-in assignors, by protocol name: ``range`` (:class:`RangePartitionAssignor`),
``roundrobin`` (:class:`RoundRobinPartitionAssignor`), ``sticky``
(:class:`StickyPartitionAssignor`) and ``cooperative-sticky``
(:class:`CooperativeStickyAssignor`). Custom assignors subclass
:class:`AbstractPartitionAssignor`; aiokafka 0.x and kafka-python ones are wrapped by
:func:`as_assignor`. All of this is pure computation, without I/O.
"""

from __future__ import annotations

from .abstract import AbstractPartitionAssignor, partitions_per_topic
from .codec import (
    ASSIGNMENT_VERSION,
    SUBSCRIPTION_VERSION,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from .compat import AssignorAdapter, as_assignor, to_assignment, to_subscription
from .range import RangePartitionAssignor
from .roundrobin import RoundRobinPartitionAssignor
from .sticky import CooperativeStickyAssignor, StickyPartitionAssignor
from .types import (
    Assignment,
    ClusterView,
    GroupMember,
    RebalanceProtocol,
    StaticCluster,
    Subscription,
)

__all__ = [
    "ASSIGNMENT_VERSION",
    "SUBSCRIPTION_VERSION",
    "AbstractPartitionAssignor",
    "Assignment",
    "AssignorAdapter",
    "ClusterView",
    "CooperativeStickyAssignor",
    "GroupMember",
    "RangePartitionAssignor",
    "RebalanceProtocol",
    "RoundRobinPartitionAssignor",
    "StaticCluster",
    "StickyPartitionAssignor",
    "Subscription",
    "as_assignor",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
    "partitions_per_topic",
    "to_assignment",
    "to_subscription",
]
