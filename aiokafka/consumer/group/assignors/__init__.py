"""Partition assignors: who in a consumer group reads which partitions.

Built-in assignors, by protocol name: ``range`` (:class:`RangePartitionAssignor`),
``roundrobin`` (:class:`RoundRobinPartitionAssignor`), ``sticky``
(:class:`StickyPartitionAssignor`) and ``cooperative-sticky``
(:class:`CooperativeStickyAssignor`). Custom assignors subclass
:class:`AbstractPartitionAssignor`; aiokafka 0.x and kafka-python ones are wrapped by
:func:`as_assignor`. All of this is pure computation, without I/O.

The names below are imported on first use (PEP 562): a consumer imports
:mod:`.roundrobin` for its default strategy, and the other assignors, the legacy
adapter and the wire codec load with the group membership that uses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiokafka._extensions import lazy_exports

if TYPE_CHECKING:
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

# Public name -> submodule that defines it.
_LAZY = {
    "AbstractPartitionAssignor": "abstract",
    "partitions_per_topic": "abstract",
    "ASSIGNMENT_VERSION": "codec",
    "SUBSCRIPTION_VERSION": "codec",
    "decode_assignment": "codec",
    "decode_subscription": "codec",
    "encode_assignment": "codec",
    "encode_subscription": "codec",
    "AssignorAdapter": "compat",
    "as_assignor": "compat",
    "to_assignment": "compat",
    "to_subscription": "compat",
    "RangePartitionAssignor": "range",
    "RoundRobinPartitionAssignor": "roundrobin",
    "CooperativeStickyAssignor": "sticky",
    "StickyPartitionAssignor": "sticky",
    "Assignment": "types",
    "ClusterView": "types",
    "GroupMember": "types",
    "RebalanceProtocol": "types",
    "StaticCluster": "types",
    "Subscription": "types",
}

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


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
