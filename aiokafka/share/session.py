"""Share sessions: ShareFetch and ShareAcknowledge to each partition leader.

A share session (per broker, per member) remembers the partitions this member
fetches; each request carries the next session epoch (0 opens, -1 closes) and only
the changes: partitions added, partitions forgotten, acknowledgements.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from aiokafka.cluster.client import AIOKafkaClient
from aiokafka.errors import (
    InvalidShareSessionEpochError,
    KafkaError,
    NotLeaderForPartitionError,
    ShareSessionNotFoundError,
    for_code,
)
from aiokafka.metrics.share import ShareFetchMetrics
from aiokafka.protocol import messages as _messages
from aiokafka.structs import TopicPartition

from .acks import to_batches
from .records import ShareConsumerRecord, acquired_records

log = logging.getLogger(__name__)

#: ``{partition: None if acknowledged, else the error}``.
AckResults = dict[TopicPartition, KafkaError | None]
Fetched = dict[TopicPartition, tuple[list[ShareConsumerRecord[Any, Any]], list[int]]]

_SESSION_LOST = (ShareSessionNotFoundError, InvalidShareSessionEpochError)

# ShareAcquireMode of ShareFetch v2 (KIP-1206); the field is ignorable, so a v1 request
# drops it and the broker acquires whole batches.
_BATCH_OPTIMIZED, _RECORD_LIMIT = 0, 1


def _batches(batch_type: Callable[..., Any], acks: dict[int, int]) -> list[Any]:
    """The runs of ``acks`` as ``batch_type`` structs (ShareFetch and ShareAcknowledge
    each have their own generated ``AcknowledgementBatch`` class)."""
    return [
        batch_type(first_offset=first, last_offset=last, acknowledge_types=types)
        for first, last, types in to_batches(acks)
    ]


class _Session:
    __slots__ = ("epoch", "partitions")

    def __init__(self) -> None:
        self.epoch = 0
        self.partitions: set[TopicPartition] = set()


class ShareSessions:
    """The member's share session with each broker.

    Args:
        client: The consumer's client (metadata gives leaders and topic ids).
        group_id: The share group.
        member_id: This member's id.
        metrics: Where requests and acknowledgements are counted (a new one when not
            given).
    """

    def __init__(
        self,
        client: AIOKafkaClient,
        group_id: str,
        member_id: str,
        metrics: ShareFetchMetrics | None = None,
    ) -> None:
        self._client = client
        self._group_id = group_id
        self._member_id = member_id
        self._sessions: dict[int, _Session] = {}
        #: Sensors of these sessions' ShareFetch requests and acknowledgements.
        self.metrics = metrics if metrics is not None else ShareFetchMetrics()

    def _by_leader(self, tps: Iterable[TopicPartition]) -> dict[int, set[TopicPartition]]:
        cluster = self._client.cluster
        out: dict[int, set[TopicPartition]] = {}
        for tp in tps:
            leader = cluster.leader_for(tp)
            if leader is not None and cluster.topic_id(tp.topic) is not None:
                out.setdefault(leader, set()).add(tp)
        return out

    def _topic_id(self, tp: TopicPartition) -> Any:
        return self._client.cluster.topic_id(tp.topic)

    async def fetch(
        self,
        assignment: frozenset[TopicPartition],
        acks: dict[TopicPartition, dict[int, int]],
        *,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        max_records: int,
        key_deserializer: Callable[[bytes], object] | None,
        value_deserializer: Callable[[bytes], object] | None,
        record_limit: bool = False,
    ) -> tuple[Fetched, AckResults]:
        """One ShareFetch per leader of ``assignment`` (in parallel), carrying the
        acknowledgements of those leaders' partitions; other acknowledgements go in
        ShareAcknowledge requests. Sessions of brokers that lead none of the
        assigned partitions are closed. ``record_limit`` asks each broker to acquire
        at most ``max_records`` records (ShareFetch v2's record-limit acquire mode)
        instead of whole batches."""
        wanted = self._by_leader(assignment)
        for node in [n for n in self._sessions if n not in wanted]:
            wanted[node] = set()
        if any(tp not in tps for tp in assignment for tps in [set().union(*wanted.values())]):
            # A partition without a known leader or topic id: ask metadata again.
            self._client.request_refresh("share fetch: a leader or topic id unknown")
        fetch_acks: dict[int, dict[TopicPartition, dict[int, int]]] = {}
        leftover: dict[TopicPartition, dict[int, int]] = {}
        by_tp_leader = {tp: n for n, tps in wanted.items() for tp in tps}
        for tp, a in acks.items():
            leader = by_tp_leader.get(tp)
            if leader is None:
                leftover[tp] = a
            else:
                fetch_acks.setdefault(leader, {})[tp] = a
        limits = (max_wait_ms, min_bytes, max_bytes, max_records)
        deserializers = (key_deserializer, value_deserializer)
        jobs = [
            self._fetch_one(
                node, tps, fetch_acks.get(node, {}), limits, record_limit, deserializers
            )
            for node, tps in wanted.items()
        ]
        fetched: Fetched = {}
        results: AckResults = {}
        for part_results, part_fetched in await asyncio.gather(*jobs):
            results.update(part_results)
            fetched.update(part_fetched)
        if leftover:
            results.update(await self._acknowledge(leftover, closing=False))
        self.metrics.acknowledged(acks, results)
        return fetched, results

    async def _fetch_one(
        self,
        node: int,
        tps: set[TopicPartition],
        acks: dict[TopicPartition, dict[int, int]],
        limits: tuple[int, int, int, int],
        record_limit: bool,
        deserializers: tuple[Callable[[bytes], object] | None, Callable[[bytes], object] | None],
    ) -> tuple[AckResults, Fetched]:
        max_wait_ms, min_bytes, max_bytes, max_records = limits
        session = self._sessions.setdefault(node, _Session())
        added = tps if session.epoch == 0 else tps - session.partitions
        removed = set() if session.epoch == 0 else session.partitions - tps
        topics: dict[Any, list[Any]] = {}
        for tp in added | set(acks):
            topics.setdefault(self._topic_id(tp), []).append(
                _messages.ShareFetchRequestFetchPartition(
                    partition_index=tp.partition,
                    acknowledgement_batches=_batches(
                        _messages.ShareFetchRequestAcknowledgementBatch, acks.get(tp, {})
                    ),
                )
            )
        forgotten: dict[Any, list[int]] = {}
        for tp in removed:
            tid = self._topic_id(tp)
            if tid is not None:
                forgotten.setdefault(tid, []).append(tp.partition)
        if not tps and session.epoch == 0:
            self._sessions.pop(node, None)
            return {tp: NotLeaderForPartitionError(str(tp)) for tp in acks}, {}
        request = _messages.ShareFetchRequest(
            group_id=self._group_id,
            member_id=self._member_id,
            share_session_epoch=session.epoch if tps else -1,
            max_wait_ms=max_wait_ms if tps else 0,
            min_bytes=min_bytes,
            max_bytes=max_bytes,
            max_records=max_records,
            batch_size=max_records,
            share_acquire_mode=_RECORD_LIMIT if record_limit else _BATCH_OPTIMIZED,
            topics=[
                _messages.ShareFetchRequestFetchTopic(topic_id=tid, partitions=parts)
                for tid, parts in topics.items()
            ],
            forgotten_topics_data=[
                _messages.ShareFetchRequestForgottenTopic(topic_id=tid, partitions=parts)
                for tid, parts in forgotten.items()
            ],
        )
        try:
            started = time.monotonic()
            resp = await self._client.send(node, request)
            self.metrics.fetch_done(time.monotonic() - started, resp.throttle_time_ms)
            if resp.error_code:
                raise for_code(resp.error_code)(f"ShareFetch: {resp.error_message or ''}")
        except KafkaError as exc:
            log.info("ShareFetch to node %s failed: %s", node, exc)
            self._sessions.pop(node, None)
            if not isinstance(exc, _SESSION_LOST):
                self._client.request_refresh(f"ShareFetch to node {node} failed")
            return {tp: exc for tp in acks}, {}
        if not tps:
            self._sessions.pop(node, None)
        else:
            session.epoch += 1
            session.partitions = set(tps)
        cluster = self._client.cluster
        results: AckResults = {}
        out: Fetched = {}
        # {topic: (records, bytes)} of this response, for the metrics.
        counts: dict[str, tuple[int, int]] = {}
        for topic in resp.responses:
            name = cluster.topic_name(topic.topic_id)
            if name is None:
                continue
            for part in topic.partitions:
                tp = TopicPartition(name, part.partition_index)
                if tp in acks:
                    results[tp] = (
                        for_code(part.acknowledge_error_code)(
                            part.acknowledge_error_message or str(tp)
                        )
                        if part.acknowledge_error_code
                        else None
                    )
                if part.error_code:
                    log.info("ShareFetch %s: error %s", tp, part.error_code)
                    self._client.request_refresh(f"ShareFetch {tp}: error {part.error_code}")
                    continue
                if part.acquired_records:
                    decoded = out[tp] = acquired_records(
                        tp, part.records, part.acquired_records, *deserializers
                    )
                    n, size = counts.get(name, (0, 0))
                    counts[name] = (n + len(decoded[0]), size + len(part.records or b""))
        self.metrics.fetched(counts)
        for tp in acks:
            results.setdefault(tp, None)
        return results, out

    async def acknowledge(
        self, acks: dict[TopicPartition, dict[int, int]], *, closing: bool = False
    ) -> AckResults:
        """ShareAcknowledge to each leader (in parallel); ``closing`` ends the
        sessions too."""
        results = await self._acknowledge(acks, closing=closing)
        self.metrics.acknowledged(acks, results)
        return results

    async def _acknowledge(
        self, acks: dict[TopicPartition, dict[int, int]], *, closing: bool
    ) -> AckResults:
        by_node: dict[int, dict[TopicPartition, dict[int, int]]] = {}
        results: AckResults = {}
        cluster = self._client.cluster
        for tp, a in acks.items():
            node = cluster.leader_for(tp)
            if node is None or node not in self._sessions:
                results[tp] = NotLeaderForPartitionError(f"{tp}: no share session with its leader")
                continue
            by_node.setdefault(node, {})[tp] = a
        nodes = set(by_node) | (set(self._sessions) if closing else set())
        for part in await asyncio.gather(
            *(self._ack_one(node, by_node.get(node, {}), closing) for node in nodes)
        ):
            results.update(part)
        return results

    async def _ack_one(
        self, node: int, acks: dict[TopicPartition, dict[int, int]], closing: bool
    ) -> AckResults:
        session = self._sessions.get(node)
        if session is None:
            return {tp: ShareSessionNotFoundError(str(tp)) for tp in acks}
        topics: dict[Any, list[Any]] = {}
        for tp, a in acks.items():
            topics.setdefault(self._topic_id(tp), []).append(
                _messages.AcknowledgePartition(
                    partition_index=tp.partition,
                    acknowledgement_batches=_batches(
                        _messages.ShareAcknowledgeRequestAcknowledgementBatch, a
                    ),
                )
            )
        body = _messages.ShareAcknowledgeRequest(
            group_id=self._group_id,
            member_id=self._member_id,
            share_session_epoch=-1 if closing else session.epoch,
            topics=[
                _messages.AcknowledgeTopic(topic_id=tid, partitions=parts)
                for tid, parts in topics.items()
            ],
        )
        try:
            resp = await self._client.send(node, body)
            if resp.error_code:
                raise for_code(resp.error_code)(f"ShareAcknowledge: {resp.error_message or ''}")
        except KafkaError as exc:
            self._sessions.pop(node, None)
            return {tp: exc for tp in acks}
        if closing:
            self._sessions.pop(node, None)
        else:
            session.epoch += 1
        cluster = self._client.cluster
        results: AckResults = {}
        for t in resp.responses:
            name = cluster.topic_name(t.topic_id)
            for p in t.partitions:
                if name is None:
                    continue
                tp = TopicPartition(name, p.partition_index)
                results[tp] = (
                    for_code(p.error_code)(p.error_message or str(tp)) if p.error_code else None
                )
        for tp in acks:
            results.setdefault(tp, None)
        return results

    async def close(self, acks: dict[TopicPartition, dict[int, int]]) -> AckResults:
        """Send the last acknowledgements and close every session."""
        return await self.acknowledge(acks, closing=True)
