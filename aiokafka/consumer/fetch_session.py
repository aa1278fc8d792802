"""Incremental fetch sessions (KIP-227), one per broker; no I/O, no asyncio.

The request itself is built by :func:`build_fetch_request`.

A full fetch with ``session_id=0, epoch=0`` asks the broker to create a session;
later requests name the session and the next epoch and carry only the partitions
whose fetch parameters changed, plus the partitions to drop
(``forgotten_topics_data``). The broker answers with only the partitions that have
news. After ``FETCH_SESSION_ID_NOT_FOUND`` / ``INVALID_FETCH_SESSION_EPOCH`` or any
failed request the session is forgotten and the next fetch is a full one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from aiokafka.errors import StaleMetadata
from aiokafka.protocol import messages as m
from aiokafka.structs import TopicPartition

if TYPE_CHECKING:
    from uuid import UUID

    from aiokafka.cluster.metadata import ClusterMetadata

    from .config import ConsumerConfig

__all__ = [
    "FIRST_TOPIC_ID_VERSION",
    "FetchPlan",
    "FetchSession",
    "PartitionFetch",
    "build_fetch_request",
]

#: Fetch versions from 13 name topics by id (taken from the metadata).
FIRST_TOPIC_ID_VERSION = 13

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


def build_fetch_request(
    plan: FetchPlan, version: int, cluster: ClusterMetadata, cfg: ConsumerConfig
) -> tuple[m.FetchRequest, dict[UUID, str]]:
    """The Fetch request (at ``version``) for ``plan``.

    Every partition carries the leader epoch the metadata has for it
    (``current_leader_epoch``, v9+), so a broker that is no longer its leader, or leads
    under another epoch, fences the fetch instead of serving a stale log (KIP-320);
    ``rack_id`` (v11+) lets the leader pick a replica in the client's rack (KIP-392).

    Fields a version lacks are left to the generated encoder, which drops them there.

    Returns:
        ``(request, {topic_id: topic name})``; the map is empty below v13.

    Raises:
        StaleMetadata: a topic has no known id at a version that needs one.
    """
    use_ids = version >= FIRST_TOPIC_ID_VERSION
    ids: dict[Any, str] = {}
    topics: dict[str, list[Any]] = {}
    for tp, pf in plan.to_send.items():
        topics.setdefault(tp.topic, []).append(
            m.FetchRequestFetchPartition(
                partition=tp.partition,
                current_leader_epoch=pf.current_leader_epoch,
                fetch_offset=pf.fetch_offset,
                partition_max_bytes=pf.max_bytes,
            )
        )
    fetch_topics = []
    for topic, parts in topics.items():
        if use_ids:
            topic_id = cluster.topic_id(topic)
            if topic_id is None:  # checked by the caller on the same snapshot
                raise StaleMetadata(f"no topic id known for {topic!r}")
            ids[topic_id] = topic
            fetch_topics.append(m.FetchRequestFetchTopic(topic_id=topic_id, partitions=parts))
        else:
            fetch_topics.append(m.FetchRequestFetchTopic(topic=topic, partitions=parts))
    forgotten: dict[str, list[int]] = {}
    for tp in plan.forgotten:
        forgotten.setdefault(tp.topic, []).append(tp.partition)
    forgotten_data = []
    for topic, parts_ in forgotten.items():
        if use_ids:
            topic_id = cluster.topic_id(topic)
            if topic_id is None:
                continue
            ids[topic_id] = topic
            forgotten_data.append(
                m.FetchRequestForgottenTopic(topic_id=topic_id, partitions=parts_)
            )
        else:
            forgotten_data.append(m.FetchRequestForgottenTopic(topic=topic, partitions=parts_))
    if use_ids:
        for tp in plan.wanted:  # partitions the session holds answer by id too
            topic_id = cluster.topic_id(tp.topic)
            if topic_id is not None:
                ids[topic_id] = tp.topic
    request = m.FetchRequest(
        replica_id=-1,
        max_wait_ms=cfg.fetch_max_wait_ms,
        min_bytes=cfg.fetch_min_bytes,
        max_bytes=cfg.fetch_max_bytes,
        isolation_level=cfg.isolation_level_code,
        session_id=plan.session_id,
        session_epoch=plan.epoch,
        topics=fetch_topics,
        # The generated encoder drops the fields above at versions without them;
        # this one it refuses (it is never filled there: no session below v7).
        forgotten_topics_data=forgotten_data if version >= 7 else [],
        rack_id=cfg.client.client_rack or "",
    )
    return request, ids
