"""aiokafka 0.x import path of :class:`RangePartitionAssignor` (compatibility shim)."""

from aiokafka.consumer.group.assignors.range import RangePartitionAssignor

__all__ = ["RangePartitionAssignor"]
