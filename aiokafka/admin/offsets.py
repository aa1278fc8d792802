"""Partition-leader operations: list offsets, delete records.

Each request goes to the partition's leader; partitions are grouped per leader and
the leaders are asked concurrently. A partition whose leader moved
(NOT_LEADER_OR_FOLLOWER, a lost connection, ...) is retried alone after a metadata
refresh.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiokafka.admin._base import AdminBase, error_for, raise_first
from aiokafka.admin.results import ListOffsetsResultInfo
from aiokafka.admin.types import (
    IsolationLevel,
    OffsetSpec,
    RecordsToDelete,
    check_count,
)
from aiokafka.protocol._gen import delete_records as _dr
from aiokafka.protocol._gen import list_offsets as _lo
from aiokafka.protocol.topic_lists import per_topic
from aiokafka.structs import TopicPartition

__all__ = ["OffsetsMixin"]

# ListOffsets ReplicaId of a client (not a follower).
_CONSUMER_REPLICA_ID = -1


def _what(tp: TopicPartition) -> str:
    return f"{tp.topic}[{tp.partition}]"


class OffsetsMixin(AdminBase):
    """Partition-leader operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def list_offsets(
        self,
        topic_partition_offsets: Mapping[TopicPartition, OffsetSpec],
        isolation_level: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> dict[TopicPartition, ListOffsetsResultInfo]:
        """Look up offsets per partition: earliest, latest, by timestamp, or the
        record with the largest timestamp.

        Args:
            topic_partition_offsets: Partition -> :class:`OffsetSpec`.
            isolation_level: ``READ_COMMITTED`` makes ``latest`` the last stable
                offset (before open transactions).

        Returns:
            Per partition the offset found (-1 if no record has a timestamp at or
            after the one asked).

        Raises:
            aiokafka.errors.UnknownTopicOrPartitionError: a partition does not exist.
            aiokafka.errors.KafkaError: other per-partition errors (the exception
                names every failed partition).
        """
        specs = dict(topic_partition_offsets)
        for tp, spec in specs.items():
            if not isinstance(spec, OffsetSpec):
                raise TypeError(f"topic_partition_offsets[{tp}] must be an OffsetSpec")
        level = IsolationLevel(isolation_level)
        # READ_COMMITTED needs v2+ and max-timestamp v7+; the codec refuses a lower
        # negotiated version with UnsupportedVersionError instead of silently
        # ignoring the request.

        async def send(node: int, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
            request = _lo.ListOffsetsRequest(
                replica_id=_CONSUMER_REPLICA_ID,
                isolation_level=int(level),
                topics=per_topic(
                    tps,
                    _lo.ListOffsetsTopic,
                    lambda tp: _lo.ListOffsetsPartition(
                        partition_index=tp.partition, timestamp=specs[tp].timestamp
                    ),
                ),
                timeout_ms=self._request_timeout_ms,
            )
            response = await self._client.send(node, request)
            out: dict[TopicPartition, Any] = {}
            for t in response.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    out[tp] = error_for(p.error_code, None, f"list offsets of {_what(tp)}") or (
                        ListOffsetsResultInfo(
                            p.offset,
                            p.timestamp,
                            p.leader_epoch if p.leader_epoch >= 0 else None,
                        )
                    )
            return out

        outcome = await self._per_leader(specs, send)
        raise_first(outcome)
        return outcome

    async def delete_records(
        self,
        records_to_delete: Mapping[TopicPartition, RecordsToDelete | int],
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, int]:
        """Delete records before an offset, moving each partition's log start.

        Args:
            records_to_delete: Partition -> :class:`RecordsToDelete` or the offset
                (-1 deletes everything up to the high watermark).
            timeout_ms: How long the leader may wait for followers; default
                ``request_timeout_ms``.

        Returns:
            Per partition the new low watermark (log start offset).

        Raises:
            aiokafka.errors.OffsetOutOfRangeError: an offset beyond the high
                watermark.
            aiokafka.errors.PolicyViolationError: e.g. a compacted topic. Per
                partition: the exception names every failure; the others are deleted.
        """
        offsets: dict[TopicPartition, int] = {}
        for tp, value in records_to_delete.items():
            before = value.before_offset if isinstance(value, RecordsToDelete) else value
            offsets[tp] = check_count(f"records_to_delete[{tp}]", before, -1)
        timeout = self._request_timeout_ms if timeout_ms is None else timeout_ms
        check_count("timeout_ms", timeout, 0)

        async def send(node: int, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
            request = _dr.DeleteRecordsRequest(
                topics=per_topic(
                    tps,
                    _dr.DeleteRecordsTopic,
                    lambda tp: _dr.DeleteRecordsPartition(
                        partition_index=tp.partition, offset=offsets[tp]
                    ),
                ),
                timeout_ms=timeout,
            )
            response = await self._client.send(
                node, request, timeout_ms=self._send_timeout(timeout)
            )
            out: dict[TopicPartition, Any] = {}
            for t in response.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    out[tp] = (
                        error_for(p.error_code, None, f"delete records of {_what(tp)}")
                        or p.low_watermark
                    )
            return out

        outcome = await self._per_leader(offsets, send, self._deadline(timeout))
        raise_first(outcome)
        return outcome
