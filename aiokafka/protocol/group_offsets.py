"""A group's committed offsets on the wire: OffsetCommit and OffsetFetch.

The consumer (``consumer/offsets.py``) and the admin client (``admin/groups.py``)
commit and fetch a group's offsets with the same requests; the request layouts and
the reading of OffsetFetch's two response layouts live here once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from aiokafka.errors import for_code
from aiokafka.protocol._gen import offset_commit as _oc
from aiokafka.protocol._gen import offset_fetch as _of
from aiokafka.protocol.topic_lists import by_topic, per_topic
from aiokafka.structs import OffsetAndMetadata, TopicPartition

__all__ = [
    "OFFSET_FETCH_GROUPS_MIN",
    "committed",
    "offset_commit_topics",
    "offset_fetch_request",
    "offset_fetch_topics",
]

#: First OffsetFetch version that asks per group (KIP-709); earlier versions ask about
#: one group at the top level of the request and response.
OFFSET_FETCH_GROUPS_MIN: Final = 8


def offset_commit_topics(
    offsets: Mapping[TopicPartition, OffsetAndMetadata],
) -> list[_oc.OffsetCommitRequestTopic]:
    """OffsetCommit's topic list committing ``offsets``. An unknown leader epoch is
    sent as -1; the encoder leaves the epoch out of versions before 6, which lack it."""

    def partition(tp: TopicPartition) -> _oc.OffsetCommitRequestPartition:
        oam = offsets[tp]
        epoch = oam.leader_epoch
        return _oc.OffsetCommitRequestPartition(
            partition_index=tp.partition,
            committed_offset=oam.offset,
            committed_leader_epoch=-1 if epoch is None else epoch,
            committed_metadata=oam.metadata,
        )

    return per_topic(offsets, _oc.OffsetCommitRequestTopic, partition)


def offset_fetch_request(
    group: str,
    partitions: Iterable[TopicPartition] | None,
    version: int,
    require_stable: bool,
) -> _of.OffsetFetchRequest:
    """OffsetFetch of ``group``'s committed offsets of ``partitions`` (``None``: of
    every partition with a commit), laid out for ``version``."""
    grouped = None if partitions is None else by_topic(partitions)
    if version >= OFFSET_FETCH_GROUPS_MIN:
        topics = None
        if grouped is not None:
            topics = [
                _of.OffsetFetchRequestTopics(name=t, partition_indexes=p)
                for t, p in grouped.items()
            ]
        return _of.OffsetFetchRequest(
            groups=[_of.OffsetFetchRequestGroup(group_id=group, topics=topics)],
            require_stable=require_stable,
        )
    old_topics = None
    if grouped is not None:
        old_topics = [
            _of.OffsetFetchRequestTopic(name=t, partition_indexes=p) for t, p in grouped.items()
        ]
    return _of.OffsetFetchRequest(group_id=group, topics=old_topics, require_stable=require_stable)


def offset_fetch_topics(
    response: _of.OffsetFetchResponse, version: int, group: str
) -> list[_of.OffsetFetchResponseTopics] | list[_of.OffsetFetchResponseTopic]:
    """The topics of the one group an :func:`offset_fetch_request` asked about (two
    classes with the same fields: v8+ answer per group, older versions at the top
    level).

    Raises:
        aiokafka.errors.KafkaError: the group's error code, typed.
    """
    topics: list[_of.OffsetFetchResponseTopics] | list[_of.OffsetFetchResponseTopic]
    if version >= OFFSET_FETCH_GROUPS_MIN:
        if not response.groups:
            raise for_code(-1)(f"OffsetFetch for group {group!r}: empty response")
        answer = response.groups[0]
        code, topics = answer.error_code, answer.topics
    else:
        code, topics = response.error_code, response.topics
    if code:
        raise for_code(code)(f"OffsetFetch for group {group!r}")
    return topics


def committed(
    partition: _of.OffsetFetchResponsePartitions | _of.OffsetFetchResponsePartition,
) -> OffsetAndMetadata:
    """A partition's committed offset in an OffsetFetch response (offset -1: none)."""
    epoch = partition.committed_leader_epoch
    return OffsetAndMetadata(
        partition.committed_offset,
        partition.metadata or "",
        leader_epoch=epoch if epoch >= 0 else None,
    )
