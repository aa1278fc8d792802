"""aiokafka 0.x ``AbstractPartitionAssignor`` (compatibility shim).

Existing subclasses keep working: they are wrapped by
:class:`aiokafka.consumer.group.assignors.compat.AssignorAdapter`. New assignors
should subclass :class:`aiokafka.consumer.group.assignors.AbstractPartitionAssignor`.
"""

from aiokafka.consumer.group.assignors.compat import (
    LegacyPartitionAssignor as AbstractPartitionAssignor,
)
from aiokafka.consumer.group.assignors.types import RebalanceProtocol

__all__ = ["AbstractPartitionAssignor", "RebalanceProtocol"]
