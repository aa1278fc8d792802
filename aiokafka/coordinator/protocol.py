"""aiokafka 0.x names of the embedded consumer protocol structs (compatibility shim)."""

from aiokafka.consumer.group.assignors.compat import (
    ConsumerProtocol,
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)

__all__ = ["ConsumerProtocol", "ConsumerProtocolMemberAssignment", "ConsumerProtocolMemberMetadata"]
