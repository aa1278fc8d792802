"""Pick the membership implementation for a consumer's ``group_protocol``.

It lives apart from :mod:`.membership` because both implementations import the base
class from there; a factory inside that module would need function-level imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .classic import ClassicMembership
from .consumer_protocol import ConsumerProtocolMembership

if TYPE_CHECKING:
    from aiokafka.cluster import AIOKafkaClient
    from aiokafka.consumer.config import ConsumerConfig
    from aiokafka.consumer.offsets import OffsetsClient
    from aiokafka.consumer.subscription import SubscriptionState

    from .membership import GroupMembership, MembershipHooks

__all__ = ["create_membership"]


def create_membership(
    client: AIOKafkaClient,
    subscriptions: SubscriptionState,
    config: ConsumerConfig,
    offsets: OffsetsClient,
    hooks: MembershipHooks,
) -> GroupMembership:
    """The membership implementation for ``config.group_protocol``."""
    if config.group_protocol == "consumer":
        return ConsumerProtocolMembership(client, subscriptions, config, offsets, hooks)
    return ClassicMembership(client, subscriptions, config, offsets, hooks)
