"""aiokafka 0.14's import path of the OffsetCommit request (compatibility shim).

faust-streaming 0.15 reads ``OffsetCommitRequest.DEFAULT_GENERATION_ID`` (imported
through ``aiokafka.consumer.group_coordinator``) to tell whether the consumer has
joined its group yet. The request is the generated one with aiokafka 0.14's
constructor and constants. Its response is the generated one: ``topics`` holds objects
(``name``, ``partitions[i].partition_index``, ``.error_code``), not aiokafka 0.14's
``(topic, [(partition, error_code)])`` tuples. aiokafka 0.14's ``OffsetFetchRequest``
is not offered: :meth:`aiokafka.AIOKafkaConsumer.committed` reads committed offsets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from aiokafka.protocol._gen.offset_commit import OffsetCommitRequest as _GeneratedRequest
from aiokafka.protocol._gen.offset_commit import (
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from aiokafka.protocol._gen.offset_commit import OffsetCommitResponse as OffsetCommitResponse

__all__ = ["OffsetCommitRequest", "OffsetCommitResponse"]


class OffsetCommitRequest(_GeneratedRequest):
    """``OffsetCommitRequest(consumer_group, consumer_group_generation_id, consumer_id,
    retention_time, topics)``, as in aiokafka 0.14.

    Args:
        consumer_group: The group id.
        consumer_group_generation_id: The group's generation,
            :attr:`DEFAULT_GENERATION_ID` outside a group generation.
        consumer_id: The member id, ``""`` outside a group generation.
        retention_time: Milliseconds to keep the offsets (version 2 to 4 only),
            :attr:`DEFAULT_RETENTION_TIME` for the broker's setting.
        topics: ``[(topic, [(partition, offset, metadata), ...]), ...]``.
    """

    __slots__ = ()

    #: The generation sent when the consumer is not in a group generation.
    DEFAULT_GENERATION_ID: ClassVar[int] = -1
    #: Keep the offsets for the broker's ``offsets.retention.minutes``.
    DEFAULT_RETENTION_TIME: ClassVar[int] = -1

    def __init__(
        self,
        consumer_group: str,
        consumer_group_generation_id: int,
        consumer_id: str,
        retention_time: int,
        topics: Sequence[tuple[str, Sequence[tuple[int, int, str]]]],
    ) -> None:
        super().__init__(
            group_id=consumer_group,
            generation_id_or_member_epoch=consumer_group_generation_id,
            member_id=consumer_id,
            retention_time_ms=retention_time,
            topics=[
                OffsetCommitRequestTopic(
                    name=topic,
                    partitions=[
                        OffsetCommitRequestPartition(
                            partition_index=p, committed_offset=o, committed_metadata=m
                        )
                        for p, o, m in partitions
                    ],
                )
                for topic, partitions in topics
            ],
        )
