"""Pick the membership implementation for a consumer's ``group_protocol``.

It lives apart from :mod:`.membership` because both implementations import the base
class from there; a factory inside that module would make an import cycle. Here the
implementation is imported when a consumer with a group starts, not when
:mod:`aiokafka` is imported: a process runs one of the two, and each pulls in its own
state machines and wire codecs (with the assignors for the classic protocol). Neither
imports this module, so the function-level imports below hide no cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiokafka.cluster.ports import GroupClient
    from aiokafka.consumer.config import ConsumerConfig
    from aiokafka.consumer.offsets import OffsetsClient
    from aiokafka.consumer.subscription import SubscriptionState

    from .membership import GroupMembership, MembershipHooks

__all__ = ["create_membership"]


def create_membership(
    client: GroupClient,
    subscriptions: SubscriptionState,
    config: ConsumerConfig,
    offsets: OffsetsClient,
    hooks: MembershipHooks,
) -> GroupMembership:
    """The membership implementation for ``config.group_protocol``."""
    # Imported here for import cost only (see the module docstring): no cycle.
    if config.group_protocol == "consumer":
        from .consumer_protocol import ConsumerProtocolMembership

        return ConsumerProtocolMembership(client, subscriptions, config, offsets, hooks)
    from .classic import ClassicMembership

    return ClassicMembership(client, subscriptions, config, offsets, hooks)
