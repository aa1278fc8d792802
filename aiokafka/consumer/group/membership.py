"""What the consumer facade needs from group membership, whatever the protocol.

Two implementations: the classic protocol (JoinGroup/SyncGroup/Heartbeat, client-side
assignors, eager or cooperative) in ``classic.py`` and the KIP-848 consumer protocol
(ConsumerGroupHeartbeat, server-side assignors) in ``consumer_protocol.py``.
:func:`.factory.create_membership` picks one by ``group_protocol``.

A membership owns one background task (joining, heartbeats, reconciliation) started by
:meth:`GroupMembership.start` and stopped by :meth:`GroupMembership.close`. It installs
assignments into the :class:`~aiokafka.consumer.subscription.SubscriptionState`
(``assign_from_subscribed``), runs the user's rebalance listener in the documented
order, and commits the consumed offsets of partitions it is about to give up (through
``MembershipHooks.commit_revoked``) while it still owns them.
"""

from __future__ import annotations

import abc
import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from aiokafka.errors import IllegalStateError
from aiokafka.metrics.consumer import CoordinatorMetrics
from aiokafka.structs import ConsumerGroupMetadata, TopicPartition

if TYPE_CHECKING:
    from aiokafka.cluster.ports import GroupClient
    from aiokafka.consumer.config import ConsumerConfig
    from aiokafka.consumer.offsets import OffsetsClient
    from aiokafka.consumer.subscription import SubscriptionState

__all__ = [
    "GroupMembership",
    "MembershipHooks",
    "run_listener",
    "wait_first_assignment",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MembershipHooks:
    """Callbacks from the membership into the consumer facade.

    Attributes:
        commit_revoked: With auto-commit, commit the consumed offsets of these
            partitions (called before they are revoked, while still owned). Must
            not raise for commit failures; it logs them.
        stop_fetching: Drop buffered records and in-flight fetch results of these
            partitions (called before the listener's revoke callback).
    """

    commit_revoked: Callable[[list[TopicPartition]], Awaitable[None]]
    stop_fetching: Callable[[list[TopicPartition]], None]


async def run_listener(
    callback: Callable[[set[TopicPartition]], Awaitable[None] | None],
    partitions: Iterable[TopicPartition],
    what: str,
) -> None:
    """Call a rebalance listener method (plain or coroutine) with a new ``set`` of the
    partitions (what aiokafka passes) and await its result.

    A listener that raises is logged and does not stop the rebalance, as in the Java
    client; ``CancelledError`` is never swallowed.
    """
    tps = set(partitions)
    try:
        result = callback(tps)
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("Rebalance listener %s(%s) raised", what, sorted(tps))


class GroupMembership(abc.ABC):
    """One consumer's membership of its group.

    Args:
        client: The started cluster client.
        subscriptions: The consumer's subscription state (mode AUTO_TOPICS or
            AUTO_PATTERN).
        config: The consumer's validated config (group id, timeouts, assignors).
        offsets: Offset requests of this consumer (commits go through it).
        hooks: Callbacks into the consumer facade.
    """

    def __init__(
        self,
        client: GroupClient,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        offsets: OffsetsClient,
        hooks: MembershipHooks,
    ) -> None:
        if config.group_id is None:
            raise ValueError("group_id: group membership needs a group_id")
        self._client = client
        self._subscriptions = subscriptions
        self._config = config
        self._offsets = offsets
        self._hooks = hooks
        self._group_id: str = config.group_id
        #: Commit latency, rebalances (see ``docs/metrics.md``).
        self.metrics = CoordinatorMetrics()
        #: The topics the group needs metadata of (the subscribed topics or the
        #: pattern's matches; a classic leader adds every member's topics).
        self._interest = client.topic_interest(f"group {self._group_id}")
        self._task: asyncio.Task[None] | None = None  # _run(), from start()
        # When the application last polled (max_poll_interval_ms bookkeeping).
        self._last_poll = time.monotonic()
        self._setup(config)

    @abc.abstractmethod
    def _setup(self, config: ConsumerConfig) -> None:
        """The protocol's own state, set at the end of the constructor (which has
        checked ``config.group_id`` and set ``_group_id``, ``_interest``, ``_task``
        and ``_last_poll``)."""

    #: The membership task is named ``aiokafka-<TASK_NAME>-<group id>``.
    TASK_NAME: ClassVar[str]

    def start(self) -> None:
        """Start the background task that joins the group and keeps the membership.

        Raises:
            aiokafka.errors.IllegalStateError: called twice.
        """
        if self._task is not None:
            raise IllegalStateError(f"{type(self).__name__}.start() called twice")
        self._last_poll = time.monotonic()
        name = f"aiokafka-{self.TASK_NAME}-{self._group_id}"
        self._task = asyncio.create_task(self._run(), name=name)

    @abc.abstractmethod
    async def _run(self) -> None:
        """The membership task: join the group, then keep the membership until
        :meth:`close` (or a fatal error)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop the task; leave the group unless the member is static (KIP-345).

        The facade commits consumed offsets before calling this. Bounded by
        ``request_timeout_ms``; never raises a broker error.
        """

    @abc.abstractmethod
    def poll_called(self) -> None:
        """Note that the application polled (``max_poll_interval_ms`` bookkeeping)."""

    @abc.abstractmethod
    def subscription_changed(self) -> None:
        """The subscribed topics changed: rejoin with the new subscription."""

    @abc.abstractmethod
    def group_metadata(self) -> ConsumerGroupMetadata:
        """The current group id, generation (or member epoch), member id, instance id."""

    @abc.abstractmethod
    async def commit(self, offsets: dict[TopicPartition, object]) -> None:
        """Commit offsets with this member's generation and member id.

        Raises:
            aiokafka.errors.CommitFailedError: the member lost the partitions.
        """

    @abc.abstractmethod
    def check_errors(self) -> None:
        """Raise a fatal membership error (e.g. authorization, fenced instance) once."""

    @abc.abstractmethod
    async def wait_until_assigned(self, timeout: float | None) -> bool:
        """Wait until the member has joined and holds an assignment; False on timeout."""


async def wait_first_assignment(membership: GroupMembership, timeout: float) -> bool:
    """Wait until ``membership`` holds its first assignment (possibly empty).

    Returns:
        False if ``timeout`` seconds passed first.

    Raises:
        aiokafka.errors.KafkaError: a fatal membership error (as ``check_errors``).
    """
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if await membership.wait_until_assigned(min(left, 1.0)):
            return True
        membership.check_errors()
