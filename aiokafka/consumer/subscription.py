"""What the consumer reads: subscription or manual assignment, and per-partition state.

:class:`SubscriptionState` is plain state with no I/O (and no asyncio), shared by the
consumer facade, the fetcher and, in a later stage, the group coordinator:

* the *mode*: nothing yet, manual assignment (``assign()``), a topic list or a
  pattern (``subscribe()``, partitions then assigned by the group);
* the *assignment*: one :class:`PartitionState` per partition with the fetch
  position (and the leader epoch of the record before it; the state is the
  position's only writer), pause flag, the
  highwater / last stable / log start offsets seen in the last fetch, and a pending
  offset reset.

Every change that can invalidate fetched-but-unreturned data (a new assignment, a
seek, a reset) bumps :attr:`PartitionState.epoch` and calls the registered change
listeners, so the fetcher drops stale buffers and wakes up without polling.
"""

from __future__ import annotations

import enum
import re
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import IllegalStateError
from aiokafka.structs import TopicPartition

__all__ = [
    "BadArgumentError",
    "PartitionState",
    "PositionCursor",
    "SubscriptionState",
    "SubscriptionType",
    "check_partitions",
]


class BadArgumentError(TypeError, ValueError):
    """A bad argument that aiokafka 0.14 rejects with ``TypeError`` where this package
    raised ``ValueError``: code written for either catches it."""


class SubscriptionType(enum.Enum):
    """How the consumer got its partitions."""

    NONE = "none"
    USER_ASSIGNED = "user_assigned"
    AUTO_TOPICS = "auto_topics"
    AUTO_PATTERN = "auto_pattern"


class PositionCursor(Protocol):
    """What a :class:`PartitionState` follows (see :meth:`PartitionState.follow`)."""

    def consumed_position(self) -> tuple[int, int | None] | None:
        """``(position, leader epoch)`` after the records handed out since the state
        began following, or ``None`` if none was."""


class PartitionState:
    """Fetch state of one assigned partition.

    The position has one writer, this class (franz-go's ``cursor.setOffset``): the
    fetch path hands out records through :meth:`advance` and :meth:`skip_to` (and
    :meth:`follow`), the user and the group move it through :meth:`seek`,
    :meth:`request_reset`, :meth:`reset_to` and :meth:`clear_position`. ``position``,
    ``position_epoch`` and ``reset_strategy`` are read-only to everyone else.

    ``async for`` hands out one record per call; a method call per record to move the
    position cost about a fifth of that loop's CPU. So the fetch path may instead
    let this state :meth:`follow` a :class:`PositionCursor` (the chunk being read):
    while it is followed, the position is what the cursor says it has handed out,
    read when someone asks; the next write (any method here, and :meth:`set_paused`)
    first stores that position and stops following. So ``cursor is chunk`` also tells
    the chunk that nothing moved the position, paused or unassigned the partition
    since it was followed: all its hot path checks per record.

    Attributes:
        paused: ``pause()`` was called (written through :meth:`set_paused`).
        cursor: The followed :class:`PositionCursor`, or ``None`` (written only by
            this class; a plain slot because the ``async for`` hot path reads it per
            record).
        highwater: High watermark from the last fetch response.
        last_stable_offset: LSO from the last fetch response (-1 if the broker sent
            none).
        log_start_offset: Log start offset from the last fetch response.
        last_poll_ms: Wall time (ms) the last fetch response for it was handled.
        preferred_read_replica: KIP-392 replica to fetch from, or -1 for the leader.
        preferred_until: ``time.monotonic()`` after which the leader is asked again.
        epoch: Bumped whenever the position is moved from outside the fetch path (and
            when the partition is unassigned); data fetched under an older epoch is
            dropped. Written only by this class's methods; a plain slot because the
            ``async for`` hot path reads it per record.
    """

    __slots__ = (
        "_position",
        "_position_epoch",
        "_reset_strategy",
        "cursor",
        "epoch",
        "highwater",
        "last_poll_ms",
        "last_stable_offset",
        "log_start_offset",
        "paused",
        "preferred_read_replica",
        "preferred_until",
    )

    def __init__(self) -> None:
        self._position: int | None = None
        self._position_epoch: int | None = None
        self._reset_strategy: str | None = None
        self.cursor: PositionCursor | None = None
        self.paused = False
        self.highwater: int | None = None
        self.last_stable_offset: int | None = None
        self.log_start_offset: int | None = None
        self.last_poll_ms: int | None = None
        self.preferred_read_replica = -1
        self.preferred_until = 0.0
        self.epoch = 0

    @property
    def position(self) -> int | None:
        """Offset of the next record to return, or ``None`` until it is known
        (committed offset looked up or reset)."""
        return self.position_and_epoch[0]

    @property
    def position_epoch(self) -> int | None:
        """Leader epoch of the batch of the last returned record (sent with commits
        for truncation detection, KIP-320), or ``None``."""
        return self.position_and_epoch[1]

    @property
    def position_and_epoch(self) -> tuple[int | None, int | None]:
        """``(position, position_epoch)``, read together (one look at the cursor)."""
        cursor = self.cursor
        if cursor is not None and (moved := cursor.consumed_position()) is not None:
            return moved
        return self._position, self._position_epoch

    @property
    def reset_strategy(self) -> str | None:
        """Pending reset (``"earliest"``/``"latest"``/``"none"``) or ``None``."""
        return self._reset_strategy

    @property
    def has_valid_position(self) -> bool:
        """A position is known and no reset is pending."""
        # A followed cursor only moves a known position: _position is not None then.
        return self._position is not None and self._reset_strategy is None

    @property
    def is_fetchable(self) -> bool:
        """Records may be fetched now (valid position, not paused)."""
        return self._position is not None and self._reset_strategy is None and not self.paused

    def _unfollow(self) -> None:
        # Store what the followed cursor handed out: the next write starts from there.
        cursor = self.cursor
        if cursor is not None:
            self.cursor = None
            moved = cursor.consumed_position()
            if moved is not None:
                self._position, self._position_epoch = moved

    # -- the fetch path: records handed out (fetched data stays valid) -------------------

    def advance(self, offset: int, leader_epoch: int | None) -> None:
        """Records before ``offset`` were handed out, the last one written under
        ``leader_epoch``."""
        self.cursor = None
        self._position = offset
        self._position_epoch = leader_epoch

    def skip_to(self, offset: int) -> None:
        """Nothing before ``offset`` will be handed out (control or aborted batches,
        records before the fetch offset); the position's leader epoch stays."""
        self._unfollow()
        self._position = offset

    def follow(self, cursor: PositionCursor) -> None:
        """From now on the position is where ``cursor`` says it has handed out records
        to (``consumed_position()``; ``None``: none yet, the position stays), until
        the next write or :meth:`unfollow`."""
        if self.cursor is not None:
            self._unfollow()
        self.cursor = cursor

    def unfollow(self, cursor: PositionCursor) -> None:
        """Stop following ``cursor`` (if it is followed), keeping the position it
        reached: it is about to forget what it handed out."""
        if self.cursor is cursor:
            self._unfollow()

    # -- moves from outside the fetch path (fetched data becomes stale) ------------------

    def seek(self, offset: int, leader_epoch: int | None = None) -> None:
        """Move the position (from outside the fetch path)."""
        self.cursor = None
        self._position = offset
        self._position_epoch = leader_epoch
        self._reset_strategy = None
        self.epoch += 1

    def request_reset(self, strategy: str) -> None:
        """Look the position up again by ``strategy`` (``"earliest"``/``"latest"``;
        ``"none"`` raises ``NoOffsetForPartitionError`` when it is looked up)."""
        self._unfollow()
        self._reset_strategy = strategy
        self.epoch += 1

    def reset_to(self, offset: int) -> None:
        """The pending reset found ``offset``. No epoch bump: :meth:`request_reset`
        made fetched data stale already, and nothing is fetched while it is pending."""
        self.cursor = None
        self._position = offset
        self._position_epoch = None
        self._reset_strategy = None

    def clear_position(self) -> None:
        """Forget the position so it is looked up again (committed offset or reset)."""
        self.cursor = None
        self._position = None
        self._position_epoch = None
        self._reset_strategy = None
        self.epoch += 1

    def invalidate(self) -> None:
        """The partition was unassigned: its fetched data is stale."""
        self._unfollow()
        self.epoch += 1

    def set_paused(self, paused: bool) -> None:
        """``pause()`` (True) or ``resume()`` (False): a paused partition hands out no
        records, so a followed cursor is let go."""
        if paused:
            self._unfollow()
        self.paused = paused

    def __repr__(self) -> str:
        return (
            f"PartitionState(position={self.position}, paused={self.paused}, "
            f"reset={self._reset_strategy}, highwater={self.highwater})"
        )


ChangeListener = Callable[[], None]


class SubscriptionState:
    """Subscription mode, assigned partitions and their fetch state.

    Args:
        default_reset: ``auto_offset_reset`` (``"earliest"``, ``"latest"`` or
            ``"none"``), used when a partition has no committed offset or its
            position fell out of range.
    """

    def __init__(self, default_reset: str = "latest") -> None:
        self.default_reset = default_reset
        self.type = SubscriptionType.NONE
        self.subscribed_topics: frozenset[str] = frozenset()
        self.subscribed_pattern: re.Pattern[str] | None = None
        self.listener: ConsumerRebalanceListener | None = None
        self._assignment: dict[TopicPartition, PartitionState] = {}
        self._listeners: list[ChangeListener] = []
        #: Bumped on every change of the assigned set (not on seeks).
        self.assignment_version = 0
        #: An assignment (possibly empty) was installed since the subscription last
        #: changed (aiokafka's "No partitions assigned" is its absence).
        self.assignment_received = False
        #: ``None``, or (while assigned partitions of topics no longer subscribed
        #: wait for the group to revoke them) the assigned partitions whose records
        #: may still be returned.
        self.returnable: frozenset[TopicPartition] | None = None

    # -- change notification ------------------------------------------------------------

    def add_listener(self, callback: ChangeListener) -> None:
        """Call ``callback()`` after every assignment, position, pause or reset change."""
        self._listeners.append(callback)

    def remove_listener(self, callback: ChangeListener) -> None:
        """Stop calling ``callback``."""
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _changed(self) -> None:
        for callback in list(self._listeners):
            callback()

    # -- mode ---------------------------------------------------------------------------

    def _set_type(self, new: SubscriptionType) -> None:
        if self.type is SubscriptionType.NONE:
            self.type = new
        elif self.type is not new:
            raise IllegalStateError(
                "Subscription to topics, partitions and pattern are mutually exclusive"
            )

    def assign_from_user(self, partitions: Iterable[TopicPartition]) -> None:
        """Manual assignment; replaces the previous one.

        Raises:
            IllegalStateError: the consumer subscribed (use one or the other).
            TypeError: an element is not a TopicPartition.
        """
        parts = check_partitions(partitions, "partitions")
        self._set_type(SubscriptionType.USER_ASSIGNED)
        self._set_assignment(parts)

    def subscribe(
        self, topics: Iterable[str], listener: ConsumerRebalanceListener | None = None
    ) -> None:
        """Subscribe to a topic list (partitions come from the group)."""
        names = frozenset(topics)
        for t in names:
            if not isinstance(t, str) or not t:
                raise TypeError(f"topics: invalid topic name {t!r}")
        self._set_type(SubscriptionType.AUTO_TOPICS)
        self.subscribed_topics = names
        self.listener = listener
        self.assignment_received = False
        self._refresh_returnable()
        self._changed()

    def subscribe_pattern(
        self, pattern: str | re.Pattern[str], listener: ConsumerRebalanceListener | None = None
    ) -> None:
        """Subscribe to every topic matching ``pattern``."""
        self._set_type(SubscriptionType.AUTO_PATTERN)
        self.subscribed_pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.listener = listener
        self.assignment_received = False
        self._changed()

    def change_subscription(self, topics: Iterable[str]) -> None:
        """Replace the subscribed topics (pattern subscriptions resolving to topics)."""
        if self.type not in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN):
            raise IllegalStateError("not subscribed to topics")
        self.subscribed_topics = frozenset(topics)
        self._refresh_returnable()
        self._changed()

    def assign_from_subscribed(self, partitions: Iterable[TopicPartition]) -> None:
        """Install the assignment a group rebalance produced (group coordinator only).

        Raises:
            IllegalStateError: not subscribed, or a partition is not of a
                subscribed topic.
        """
        parts = check_partitions(partitions, "partitions")
        if self.type not in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN):
            raise IllegalStateError("assign_from_subscribed needs a subscription")
        for tp in parts:
            if tp.topic not in self.subscribed_topics:
                raise IllegalStateError(f"{tp} is not of a subscribed topic")
        self.assignment_received = True
        self._set_assignment(parts)

    def unsubscribe(self) -> None:
        """Drop the subscription or manual assignment; back to mode NONE."""
        self.type = SubscriptionType.NONE
        self.subscribed_topics = frozenset()
        self.subscribed_pattern = None
        self.listener = None
        self.assignment_received = False
        self._set_assignment([])

    def _set_assignment(self, partitions: list[TopicPartition]) -> None:
        old = self._assignment
        # Partitions kept across a reassignment keep their position (as aiokafka).
        self._assignment = {tp: old.get(tp) or PartitionState() for tp in partitions}
        for tp, state in old.items():
            if tp not in self._assignment:
                state.invalidate()  # fetched data of a removed partition is now stale
        self.assignment_version += 1
        self._refresh_returnable()
        self._changed()

    def _refresh_returnable(self) -> None:
        # As aiokafka (and Java) at subscribe(): records of topics no longer
        # subscribed are not handed out, even before the rebalance revokes them (so
        # their positions, which auto-commit commits on revocation, stay put).
        if self.partitions_auto_assigned and any(
            tp.topic not in self.subscribed_topics for tp in self._assignment
        ):
            self.returnable = frozenset(
                tp for tp in self._assignment if tp.topic in self.subscribed_topics
            )
        else:
            self.returnable = None

    # -- queries ------------------------------------------------------------------------

    @property
    def is_subscribed_or_assigned(self) -> bool:
        """``subscribe()`` or ``assign()`` was called (and not undone by ``unsubscribe()``)."""
        return self.type is not SubscriptionType.NONE

    @property
    def partitions_auto_assigned(self) -> bool:
        """Partitions come from group membership (``subscribe()``)."""
        return self.type in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN)

    def assigned_partitions(self) -> frozenset[TopicPartition]:
        """The assigned partitions."""
        return frozenset(self._assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        """``tp`` is assigned."""
        return tp in self._assignment

    def state(self, tp: TopicPartition) -> PartitionState:
        """The state of an assigned partition.

        Raises:
            IllegalStateError: ``tp`` is not assigned.
        """
        try:
            return self._assignment[tp]
        except KeyError:
            raise IllegalStateError(f"No current assignment for partition {tp}") from None

    def get(self, tp: TopicPartition) -> PartitionState | None:
        """The state of ``tp``, or ``None`` if it is not assigned (fast path)."""
        return self._assignment.get(tp)

    def items(self) -> list[tuple[TopicPartition, PartitionState]]:
        """``(tp, state)`` of every assigned partition (a copy, safe to mutate around)."""
        return list(self._assignment.items())

    def fetchable_partitions(self) -> list[TopicPartition]:
        """Assigned partitions with a valid position that are not paused."""
        return [tp for tp, s in self._assignment.items() if s.is_fetchable]

    def missing_positions(self) -> list[TopicPartition]:
        """Assigned partitions whose position is unknown or awaiting a reset."""
        return [tp for tp, s in self._assignment.items() if not s.has_valid_position]

    def paused_partitions(self) -> frozenset[TopicPartition]:
        """Paused assigned partitions."""
        return frozenset(tp for tp, s in self._assignment.items() if s.paused)

    def all_consumed_offsets(self) -> dict[TopicPartition, tuple[int, int | None]]:
        """``{tp: (position, leader_epoch)}`` of partitions with a known position."""
        return {
            tp: (s.position, s.position_epoch)
            for tp, s in self._assignment.items()
            if s.position is not None
        }

    # -- changes ------------------------------------------------------------------------

    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int | None = None) -> None:
        """Set the next offset to return for ``tp``.

        Raises:
            IllegalStateError: ``tp`` is not assigned.
        """
        self.state(tp).seek(offset, leader_epoch)
        self._changed()

    def request_reset(self, tps: Iterable[TopicPartition], strategy: str | None = None) -> None:
        """Mark partitions for an offset reset (``earliest``/``latest``; default policy)."""
        strategy = strategy or self.default_reset
        for tp in tps:
            self.state(tp).request_reset(strategy)
        self._changed()

    def clear_position(self, tp: TopicPartition) -> None:
        """Forget the position so it is looked up again (committed offset or reset)."""
        self.state(tp).clear_position()
        self._changed()

    def pause(self, tps: Iterable[TopicPartition]) -> None:
        """Stop fetching and returning records of ``tps``."""
        for tp in tps:
            self.state(tp).set_paused(True)
        self._changed()

    def resume(self, tps: Iterable[TopicPartition]) -> None:
        """Undo :meth:`pause`."""
        for tp in tps:
            self.state(tp).set_paused(False)
        self._changed()

    def update_fetch_metadata(
        self,
        state: PartitionState,
        highwater: int,
        last_stable_offset: int,
        log_start_offset: int,
    ) -> None:
        """Record the offsets a fetch response reported for a partition."""
        state.highwater = highwater
        state.last_stable_offset = last_stable_offset
        if log_start_offset >= 0:
            state.log_start_offset = log_start_offset
        state.last_poll_ms = int(time.time() * 1000)


def check_partitions(partitions: Iterable[Any], name: str = "partitions") -> list[TopicPartition]:
    """``partitions`` as a list of TopicPartitions without duplicates.

    A ``(topic, partition)`` pair of another tuple type counts as the TopicPartition
    it equals: aiokafka 0.14 checks nothing here, and faust-streaming passes its own
    ``TP`` named tuple to ``seek()``, ``position()`` and the offset look-ups.

    Raises:
        TypeError: a str/bytes instead of an iterable, or an element that is neither
            a TopicPartition nor such a pair (the message starts with ``name``).
    """
    if isinstance(partitions, str | bytes):
        raise TypeError(f"{name} must be an iterable of TopicPartition")
    result: list[TopicPartition] = []
    for tp in partitions:
        if not isinstance(tp, TopicPartition):
            if not (
                isinstance(tp, tuple)
                and len(tp) == 2
                and isinstance(tp[0], str)
                and type(tp[1]) is int
            ):
                raise TypeError(f"{name}: expected TopicPartition, got {tp!r}")
            tp = TopicPartition(tp[0], tp[1])
        result.append(tp)
    return list(dict.fromkeys(result))
