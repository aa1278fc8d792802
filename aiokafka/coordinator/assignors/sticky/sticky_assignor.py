"""aiokafka 0.x import path of :class:`StickyPartitionAssignor` (compatibility shim)."""

from aiokafka.consumer.group.assignors.sticky import (
    DEFAULT_GENERATION_ID,
    StickyPartitionAssignor,
)

__all__ = ["DEFAULT_GENERATION_ID", "StickyPartitionAssignor"]
