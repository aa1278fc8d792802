"""aiokafka 0.x import path of :class:`RoundRobinPartitionAssignor` (compatibility shim)."""

from aiokafka.consumer.group.assignors.roundrobin import RoundRobinPartitionAssignor

__all__ = ["RoundRobinPartitionAssignor"]
