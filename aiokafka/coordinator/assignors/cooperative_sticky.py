"""kafka-python import path of :class:`CooperativeStickyAssignor` (compatibility shim)."""

from aiokafka.consumer.group.assignors.sticky import CooperativeStickyAssignor

__all__ = ["CooperativeStickyAssignor"]
