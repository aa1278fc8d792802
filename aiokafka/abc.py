"""Interfaces that users implement: rebalance callbacks and OAUTHBEARER token providers."""

from __future__ import annotations

import abc
from collections.abc import Awaitable
from typing import Any

from aiokafka.structs import TopicPartition

__all__ = ["AbstractTokenProvider", "ConsumerRebalanceListener"]


class ConsumerRebalanceListener(abc.ABC):
    """Callbacks run when the set of partitions assigned to the consumer changes.

    They apply only when the consumer subscribes and Kafka manages the group; with
    ``assign()`` the partitions never move. The consumer waits for a callback to
    finish before it goes on with the rebalance, and every member of the group runs
    ``on_partitions_revoked`` before any member runs ``on_partitions_assigned``, so
    state saved in the first is visible to the new owner in the second.

    Each method may be a plain function or a coroutine function (``async def``); the
    consumer awaits whatever awaitable a method returns. Each call gets a new ``set``
    of :class:`~aiokafka.structs.TopicPartition` (as aiokafka passes), possibly empty.

    When the methods are called depends on the group protocol:

    * ``group_protocol="classic"`` with eager assignors (the default
      ``RoundRobinPartitionAssignor``, range, sticky): as in aiokafka and the Java
      client, every rebalance starts with ``on_partitions_revoked`` of everything the
      member owned (an empty set before the first join and whenever it owned
      nothing) and ends with ``on_partitions_assigned`` of the whole new assignment
      (possibly empty).
    * ``"classic"`` with ``cooperative-sticky`` (KIP-429): partitions kept through a
      rebalance are neither revoked nor assigned again. ``on_partitions_revoked``
      runs only when some partitions moved away; ``on_partitions_assigned`` runs
      after every rebalance with the partitions added (possibly none).
    * ``"consumer"`` (KIP-848): like cooperative, per reconciliation with the
      coordinator: ``on_partitions_revoked`` only with partitions to give up,
      ``on_partitions_assigned`` with the partitions added.

    A common use is saving offsets in a custom store when partitions are revoked and
    loading them when partitions are assigned.
    """

    @abc.abstractmethod
    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> Awaitable[None] | None:
        """Called at the start of a rebalance, after fetching for these partitions stopped.

        With manual commits, commit the offsets consumed so far here, or the records
        after them are delivered again to the next owner. Not called by ``stop()``.

        Args:
            revoked: The partitions that were assigned to this consumer before
                (empty at the start of an eager rebalance of a member that owned
                nothing, e.g. before its first assignment).
        """

    @abc.abstractmethod
    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> Awaitable[None] | None:
        """Called when a rebalance has completed, before fetching starts again.

        Args:
            assigned: Eager: every partition now assigned to this consumer (may
                include partitions it owned before). Cooperative and KIP-848: the
                partitions added by this rebalance.
        """

    def on_partitions_lost(self, lost: set[TopicPartition]) -> Awaitable[None] | None:
        """Called when partitions were lost without a clean revocation.

        This happens when the consumer finds it was dropped from the group (session
        timeout, fenced member): other members may already own the partitions, so
        committing their offsets would fail. The default, as in the Java client,
        calls :meth:`on_partitions_revoked`; override it to skip work that needs
        ownership.

        Args:
            lost: The partitions this consumer no longer owns.
        """
        return self.on_partitions_revoked(lost)


class AbstractTokenProvider(abc.ABC):
    """Supplies tokens for SASL OAUTHBEARER authentication.

    Implementations should reuse a token while it is valid, so that several
    connections opening at once do not each fetch a new one, and refresh it in time
    so that :meth:`token` always returns an unexpired token. A synchronous token
    source can be wrapped with ``loop.run_in_executor``.
    """

    def __init__(self, **config: Any) -> None:
        """Accept and ignore keyword configuration (aiokafka's signature)."""
        super().__init__()

    @abc.abstractmethod
    async def token(self) -> str:
        """Return the ID/access token sent to the broker."""

    def extensions(self) -> dict[str, str]:
        """Return SASL extensions to send with the initial client request (KIP-342).

        Optional: the default sends none.
        """
        return {}
