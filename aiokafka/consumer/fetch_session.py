"""Incremental fetch sessions (KIP-227), one per broker; no I/O, no asyncio.

A full fetch with ``session_id=0, epoch=0`` asks the broker to create a session;
later requests name the session and the next epoch and carry only the partitions
whose fetch parameters changed, plus the partitions to drop
(``forgotten_topics_data``). The broker answers with only the partitions that have
news. After ``FETCH_SESSION_ID_NOT_FOUND`` / ``INVALID_FETCH_SESSION_EPOCH`` or any
failed request the session is forgotten and the next fetch is a full one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from aiokafka.structs import TopicPartition

__all__ = ["FetchPlan", "FetchSession", "PartitionFetch"]

_INITIAL_EPOCH = 0
_MAX_EPOCH = 2**31 - 1


class PartitionFetch(NamedTuple):
    """What one partition asks for in a Fetch request."""

    fetch_offset: int
    current_leader_epoch: int
    max_bytes: int


class FetchPlan(NamedTuple):
    """One Fetch request to build.

    Attributes:
        session_id: The session to use (0: none yet).
        epoch: The session epoch to send (0: create a session).
        to_send: Partitions to list in the request.
        forgotten: Partitions to list in ``forgotten_topics_data``.
        wanted: Every partition the request covers (sent or cached by the broker).
    """

    session_id: int
    epoch: int
    to_send: dict[TopicPartition, PartitionFetch]
    forgotten: list[TopicPartition]
    wanted: dict[TopicPartition, PartitionFetch]

    @property
    def is_full(self) -> bool:
        """A full fetch (every partition listed, no session assumed)."""
        return self.epoch == _INITIAL_EPOCH


class FetchSession:
    """Client side of one broker's fetch session.

    Use: ``plan = session.plan(wanted)``, send the request, then
    ``session.on_response(plan, response_session_id)`` or ``session.reset()`` on
    any error.
    """

    __slots__ = ("_sent", "epoch", "full_fetches", "incremental_fetches", "session_id")

    def __init__(self) -> None:
        self.session_id = 0
        self.epoch = _INITIAL_EPOCH
        # The partition set and parameters the broker's session holds.
        self._sent: dict[TopicPartition, PartitionFetch] = {}
        self.full_fetches = 0
        self.incremental_fetches = 0

    def plan(self, wanted: Mapping[TopicPartition, PartitionFetch]) -> FetchPlan:
        """Decide what the next request for ``wanted`` lists."""
        wanted = dict(wanted)
        if self.session_id == 0 or self.epoch == _INITIAL_EPOCH:
            return FetchPlan(0, _INITIAL_EPOCH, wanted, [], wanted)
        sent = self._sent
        to_send = {tp: pf for tp, pf in wanted.items() if sent.get(tp) != pf}
        forgotten = [tp for tp in sent if tp not in wanted]
        return FetchPlan(self.session_id, self.epoch, to_send, forgotten, wanted)

    def on_response(self, plan: FetchPlan, response_session_id: int) -> None:
        """The request of ``plan`` succeeded (top-level error 0)."""
        if plan.is_full:
            self.full_fetches += 1
            if response_session_id == 0:
                # The broker did not create a session (cache full, or disabled):
                # keep sending full fetches, asking again each time.
                self.reset()
                return
            self.session_id = response_session_id
            self.epoch = 1
        else:
            self.incremental_fetches += 1
            self.epoch = self.epoch + 1 if self.epoch < _MAX_EPOCH else 1
        self._sent = plan.wanted

    def reset(self) -> None:
        """Forget the session; the next request is a full fetch creating a new one."""
        self.session_id = 0
        self.epoch = _INITIAL_EPOCH
        self._sent = {}

    def __repr__(self) -> str:
        return f"FetchSession(id={self.session_id}, epoch={self.epoch}, parts={len(self._sent)})"
