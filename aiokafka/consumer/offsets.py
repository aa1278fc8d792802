"""Offset look-ups and commits: ListOffsets, OffsetFetch and OffsetCommit.

Every call runs inside :meth:`AIOKafkaClient.call_with_retry`, so retriable errors
(leader moved, coordinator loading or moved, connection lost) refresh what needs
refreshing and try again until ``request_timeout_ms``. Each attempt only covers
the partitions still missing, so a partial success is not repeated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aiokafka.cluster import CoordinatorType
from aiokafka.cluster.connections import ConnectionGroup
from aiokafka.cluster.ports import OffsetsRequestClient
from aiokafka.errors import (
    CommitFailedError,
    IllegalGenerationError,
    IllegalOperation,
    IllegalStateError,
    KafkaError,
    RebalanceInProgressError,
    UnknownMemberIdError,
    for_code,
)
from aiokafka.protocol import messages as m
from aiokafka.protocol.group_offsets import (
    committed,
    offset_commit_topics,
    offset_fetch_request,
    offset_fetch_topics,
)
from aiokafka.protocol.topic_lists import per_topic
from aiokafka.structs import OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

# Defined with the subscription checks (the consumer imports that module, not this one).
from .subscription import BadArgumentError, check_partitions

__all__ = [
    "EARLIEST_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "BadArgumentError",
    "OffsetsClient",
    "normalize_offsets",
]

#: ListOffsets' special timestamps.
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2


# Errors meaning "this member no longer owns what it commits": retrying cannot help.
_COMMIT_FAILED = (IllegalGenerationError, UnknownMemberIdError, RebalanceInProgressError)


class OffsetsClient:
    """Offset requests of one consumer.

    Args:
        client: The started cluster client.
        group_id: The consumer group (``None`` disables commits and committed look-ups).
        group_instance_id: Static member id, sent with commits.
    """

    def __init__(
        self,
        client: OffsetsRequestClient,
        group_id: str | None,
        group_instance_id: str | None = None,
    ) -> None:
        self._client = client
        self._group_id = group_id
        self._group_instance_id = group_instance_id
        #: Topics looked up that are not assigned (kept, as a consumer asks again).
        self._interest = client.topic_interest("offset look-ups")

    def _deadline(self, timeout_ms: int | None) -> float:
        if timeout_ms is None:
            timeout_ms = self._client.config.request_timeout_ms
        return time.monotonic() + timeout_ms / 1000

    # -- ListOffsets --------------------------------------------------------------------

    async def lookup(
        self, timestamps: Mapping[TopicPartition, int], isolation_level: int
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """:meth:`list_offsets` for partitions of any topic, also one the client does
        not track yet (it is added first, so its leaders are known).

        Returns:
            ``{tp: OffsetAndTimestamp or None}`` with every key of ``timestamps``.

        Raises:
            aiokafka.errors.KafkaError: as :meth:`list_offsets`.
        """
        client = self._client
        missing = {tp.topic for tp in timestamps} - set(client.cluster.topics)
        if missing:
            await self._interest.add(missing)
        found = await self.list_offsets(timestamps, isolation_level=isolation_level)
        return {tp: found.get(tp) for tp in timestamps}

    async def special_offsets(
        self, partitions: Iterable[TopicPartition], timestamp: int, isolation_level: int
    ) -> dict[TopicPartition, int]:
        """The earliest (``EARLIEST_TIMESTAMP``) or end (``LATEST_TIMESTAMP``) offset of
        each partition: the consumer's ``beginning_offsets``/``end_offsets``.

        Raises:
            TypeError, ValueError: ``partitions`` is not an iterable of
                ``TopicPartition``.
            aiokafka.errors.KafkaError: as :meth:`list_offsets`.
        """
        wanted = dict.fromkeys(check_partitions(partitions), timestamp)
        found = await self.lookup(wanted, isolation_level)
        return {tp: v.offset for tp, v in found.items() if v is not None}

    async def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int], isolation_level: int
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The consumer's ``offsets_for_times``: :meth:`lookup` after checking the
        arguments (named ``timestamps`` in the errors).

        Raises:
            ValueError: a timestamp is negative or not an int.
            aiokafka.errors.KafkaError: as :meth:`list_offsets`.
        """
        wanted: dict[TopicPartition, int] = {}
        for tp, ts in timestamps.items():
            (part,) = check_partitions([tp], "timestamps")
            if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
                raise ValueError(f"timestamps: the target timestamp of {tp} must be >= 0")
            wanted[part] = ts
        return await self.lookup(wanted, isolation_level)

    async def list_offsets(
        self,
        timestamps: Mapping[TopicPartition, int],
        *,
        isolation_level: int = 0,
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """Offsets by timestamp (or ``LATEST_TIMESTAMP``/``EARLIEST_TIMESTAMP``).

        Returns:
            ``{tp: OffsetAndTimestamp}``; ``None`` where no record has a timestamp at
            or after the target.

        Raises:
            aiokafka.errors.KafkaTimeoutError: not done within ``timeout_ms``
                (default ``request_timeout_ms``).
            aiokafka.errors.KafkaError: a non-retriable error (e.g. authorization).
        """
        result: dict[TopicPartition, OffsetAndTimestamp | None] = {}
        missing = dict(timestamps)

        async def attempt() -> None:
            by_node: dict[int, dict[TopicPartition, int]] = {}
            for tp, ts in missing.items():
                by_node.setdefault(self._client.leader_for(tp), {})[tp] = ts
            outcomes = await asyncio.gather(
                *(self._list_node(node, tps, isolation_level) for node, tps in by_node.items()),
                return_exceptions=True,
            )
            error: BaseException | None = None
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    error = error or outcome
                    continue
                found, failed = outcome
                for tp, value in found.items():
                    result[tp] = value
                    missing.pop(tp, None)
                error = error or failed
            if error is not None:
                raise error

        if missing:
            await self._client.call_with_retry(attempt, self._deadline(timeout_ms))
        return result

    async def _list_node(
        self, node: int, tps: dict[TopicPartition, int], isolation_level: int
    ) -> tuple[dict[TopicPartition, OffsetAndTimestamp | None], KafkaError | None]:
        version = await self._client.api_version(node, m.ListOffsetsRequest.API_KEY)
        topics = per_topic(
            tps,
            m.ListOffsetsTopic,
            lambda tp: m.ListOffsetsPartition(
                partition_index=tp.partition,
                # v4+ and ignorable: the encoder drops it below v4.
                current_leader_epoch=self._client.cluster.leader_epoch(tp),
                timestamp=tps[tp],
            ),
        )
        request = m.ListOffsetsRequest(
            replica_id=-1,
            isolation_level=isolation_level if version >= 2 else 0,
            topics=topics,
        )
        response = await self._client.send(node, request, max_version=version)
        found: dict[TopicPartition, OffsetAndTimestamp | None] = {}
        error: KafkaError | None = None
        for t in response.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if p.error_code:
                    error = error or for_code(p.error_code)(f"ListOffsets {tp}")
                    continue
                offset = p.offset
                if version == 0:
                    offset = p.old_style_offsets[0] if p.old_style_offsets else -1
                if offset < 0:
                    found[tp] = None
                else:
                    epoch = p.leader_epoch if p.leader_epoch >= 0 else None
                    ts = p.timestamp if p.timestamp >= 0 else None
                    found[tp] = OffsetAndTimestamp(offset, ts, leader_epoch=epoch)
        return found, error

    # -- OffsetFetch --------------------------------------------------------------------

    def _require_group(self) -> str:
        if self._group_id is None:
            raise IllegalOperation("Requires group_id")
        return self._group_id

    async def fetch_committed(
        self, partitions: list[TopicPartition], *, timeout_ms: int | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offsets (``None`` where nothing is committed).

        Raises:
            aiokafka.errors.IllegalOperation: no ``group_id``.
            aiokafka.errors.KafkaTimeoutError: not done within the timeout.
        """
        group = self._require_group()
        if not partitions:
            return {}

        async def attempt() -> dict[TopicPartition, OffsetAndMetadata | None]:
            node = await self._client.coordinator_for(group)
            version = await self._client.api_version(
                node, m.OffsetFetchRequest.API_KEY, group=ConnectionGroup.COORDINATION
            )
            # Wait for pending transactional commits (KIP-447) where supported.
            request = offset_fetch_request(group, partitions, version, version >= 7)
            response = await self._client.send(
                node, request, max_version=version, group=ConnectionGroup.COORDINATION
            )
            out: dict[TopicPartition, OffsetAndMetadata | None] = {}
            for t in offset_fetch_topics(response, version, group):
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    if p.error_code:
                        raise for_code(p.error_code)(f"OffsetFetch {tp} for group {group!r}")
                    out[tp] = committed(p) if p.committed_offset >= 0 else None
            return out

        return await self._client.call_with_retry(
            attempt, self._deadline(timeout_ms), coordinator=(group, CoordinatorType.GROUP)
        )

    # -- OffsetCommit -------------------------------------------------------------------

    async def commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        *,
        generation: int = -1,
        member_id: str = "",
        timeout_ms: int | None = None,
    ) -> None:
        """Commit ``offsets`` for the group.

        With ``generation=-1`` and an empty ``member_id`` (the defaults) the commit
        is a standalone one, as Kafka allows for consumers that assign partitions
        themselves; the broker refuses it while the group has active members.

        Raises:
            aiokafka.errors.IllegalOperation: no ``group_id``.
            aiokafka.errors.CommitFailedError: the broker says this member no longer
                owns the partitions (generation/member unknown, rebalance running,
                or an active group refuses a standalone commit).
            aiokafka.errors.KafkaError: other non-retriable errors (e.g. metadata
                too large, authorization).
        """
        group = self._require_group()
        remaining = dict(offsets)
        if not remaining:
            return

        async def attempt() -> None:
            node = await self._client.coordinator_for(group)
            version = await self._client.api_version(
                node, m.OffsetCommitRequest.API_KEY, group=ConnectionGroup.COORDINATION
            )
            request = m.OffsetCommitRequest(
                group_id=group,
                generation_id_or_member_epoch=generation,
                member_id=member_id,
                group_instance_id=self._group_instance_id if version >= 7 else None,
                topics=offset_commit_topics(remaining),
            )
            response = await self._client.send(
                node, request, max_version=version, group=ConnectionGroup.COORDINATION
            )
            error: KafkaError | None = None
            for t in response.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    if not p.error_code:
                        remaining.pop(tp, None)
                        continue
                    exc = for_code(p.error_code)(f"OffsetCommit {tp} for group {group!r}")
                    if isinstance(exc, _COMMIT_FAILED):
                        raise CommitFailedError(_commit_failed_text(exc, member_id)) from exc
                    error = error or exc
            if error is not None:
                raise error

        await self._client.call_with_retry(
            attempt, self._deadline(timeout_ms), coordinator=(group, CoordinatorType.GROUP)
        )


def _commit_failed_text(exc: KafkaError, member_id: str) -> str:
    if not member_id:
        return (
            f"Commit cannot be completed: {exc!r}. The group has active members or "
            "rebalanced; the partitions may belong to another member now."
        )
    return (
        f"Commit cannot be completed: {exc!r}. The consumer was removed from the group "
        "or the group rebalanced, so the partitions may belong to another member now. "
        "If getone()/getmany() were not called for longer than max_poll_interval_ms, "
        "increase max_poll_interval_ms or reduce max_poll_records; then poll again to "
        "rejoin."
    )


def normalize_offsets(
    offsets: Mapping[TopicPartition, Any], is_assigned: Callable[[TopicPartition], bool]
) -> dict[TopicPartition, OffsetAndMetadata]:
    """``commit()``'s argument as ``{tp: OffsetAndMetadata}``, checked as aiokafka does:
    the whole structure first, then the assignment.

    Accepts ``{tp: offset}``, ``{tp: (offset, metadata)}`` or ``{tp: OffsetAndMetadata}``.

    Raises:
        ValueError: empty or not a mapping, a malformed value or a negative offset.
        BadArgumentError: a key is not a TopicPartition or metadata is not a str
            (a TypeError as in aiokafka, and a ValueError as raised here before).
        IllegalStateError: a partition is not assigned.
    """
    if not offsets or not isinstance(offsets, Mapping):
        raise ValueError(
            f"offsets must be a non-empty dict of TopicPartition to offset: {offsets!r}"
        )
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for tp, value in offsets.items():
        if not isinstance(tp, TopicPartition):
            raise BadArgumentError(f"Key should be TopicPartition instance, got {tp!r}")
        if isinstance(value, OffsetAndMetadata):
            om = value
        elif isinstance(value, int) and not isinstance(value, bool):
            om = OffsetAndMetadata(value, "")
        else:
            try:
                offset, metadata = value
            except (TypeError, ValueError):
                raise ValueError(
                    f"offsets: value for {tp} must be an offset or (offset, metadata), "
                    f"got {value!r}"
                ) from None
            if not isinstance(metadata, str):
                raise BadArgumentError(f"Metadata should be a string, got {metadata!r} for {tp}")
            if not isinstance(offset, int) or isinstance(offset, bool):
                raise ValueError(f"offsets: offset for {tp} must be an int, got {offset!r}")
            om = OffsetAndMetadata(offset, metadata)
        if om.offset < 0:
            raise ValueError(f"offsets: offset for {tp} must be >= 0, got {om.offset}")
        out[tp] = om
    for tp in out:
        if not is_assigned(tp):
            raise IllegalStateError(f"Partition {tp} is not assigned")
    return out
