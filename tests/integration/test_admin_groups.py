"""Admin client against a real broker: consumer groups and their offsets.

The group is driven by kafka-python's consumer (a second, independent client), so
what the admin client writes is checked by how a real member behaves.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import (
    GroupIdNotFound,
    GroupSubscribedToTopicError,
    IllegalGenerationError,
    NonEmptyGroup,
    UnknownMemberIdError,
)
from aiokafka.structs import OffsetAndMetadata, TopicPartition
from tools.kafka.rig import KafkaCluster


def _produce(kafka: KafkaCluster, topic: str, partitions: int, per_partition: int) -> None:
    import kafka as kafka_python

    producer = kafka_python.KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
    for p in range(partitions):
        for i in range(per_partition):
            producer.send(topic, value=b"%d-%d" % (p, i), partition=p)
    producer.flush()
    producer.close()


def _consumer(kafka: KafkaCluster, group: str, topic: str) -> Any:
    import kafka as kafka_python

    return kafka_python.KafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
    )


def _first_offsets(consumer: Any, partitions: int) -> dict[int, int]:
    # Poll until a record of every partition was seen (joining the group takes a few
    # polls); the first offset per partition shows where the group resumed.
    first: dict[int, int] = {}
    for _ in range(60):
        for tp, records in consumer.poll(timeout_ms=500).items():
            if records:
                first.setdefault(tp.partition, records[0].offset)
        if len(first) == partitions:
            break
    return first


async def test_group_offsets_roundtrip_and_consumer_resumes(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    await asyncio.to_thread(_produce, kafka, topic, 2, 10)
    group = f"admin-group-{uuid.uuid4().hex[:8]}"
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)

    await admin.alter_consumer_group_offsets(
        group, {tp0: 3, tp1: OffsetAndMetadata(5, "from-admin")}
    )
    offsets = await admin.list_consumer_group_offsets(group)
    assert offsets == {tp0: OffsetAndMetadata(3, ""), tp1: OffsetAndMetadata(5, "from-admin")}
    only = await admin.list_consumer_group_offsets(
        group, partitions=[tp1, TopicPartition(topic, 7)]
    )
    assert only[tp1].offset == 5 and only[TopicPartition(topic, 7)].offset == -1

    lag = await admin.describe_consumer_group_offsets(group)
    assert {tp: (d.committed_offset, d.log_end_offset, d.lag) for tp, d in lag.items()} == {
        tp0: (3, 10, 7),
        tp1: (5, 10, 5),
    }

    listed = {g.group_id: g for g in await admin.list_consumer_groups()}
    assert group in listed and listed[group].state == "Empty"
    # A group that only has committed offsets has no protocol type yet.
    group_id, protocol_type = listed[group][:2]
    assert (group_id, protocol_type) == (group, "")
    assert group in {g.group_id for g in await admin.list_consumer_groups(states=["Empty"])}

    # Second path: a kafka-python member of the group resumes from those offsets.
    consumer = await asyncio.to_thread(_consumer, kafka, group, topic)
    try:
        first = await asyncio.to_thread(_first_offsets, consumer, 2)
        assert first == {0: 3, 1: 5}

        (desc,) = await admin.describe_consumer_groups([group])
        assert desc.error is None and desc.state == "Stable"
        assert desc.protocol_type == "consumer"
        assert desc.coordinator is not None
        (member,) = desc.members
        assert sorted(member.assignment) == [tp0, tp1]
        listed = {g.group_id: g for g in await admin.list_consumer_groups()}
        assert listed[group].protocol_type == "consumer"
        assert listed[group].state == "Stable"

        # An active group refuses offset changes and deletion.
        with pytest.raises((UnknownMemberIdError, IllegalGenerationError)):
            await admin.alter_consumer_group_offsets(group, {tp0: 0})
        with pytest.raises(GroupSubscribedToTopicError):
            await admin.delete_consumer_group_offsets(group, [tp0])
        result = await admin.delete_consumer_groups([group])
        assert isinstance(result[group], NonEmptyGroup)
    finally:
        await asyncio.to_thread(consumer.close, autocommit=False)

    await admin.delete_consumer_group_offsets(group, [tp0])
    assert await admin.list_consumer_group_offsets(group) == {
        tp1: OffsetAndMetadata(5, "from-admin")
    }

    assert await admin.delete_consumer_groups([group]) == {group: None}
    assert group not in {g.group_id for g in await admin.list_consumer_groups()}
    again = await admin.delete_consumer_groups([group])
    assert isinstance(again[group], GroupIdNotFound)
    (gone,) = await admin.describe_consumer_groups([group])
    assert gone.state == "Dead" and gone.members == []


async def test_describe_unknown_and_many_groups(admin: AIOKafkaAdminClient) -> None:
    groups = [f"admin-none-{uuid.uuid4().hex[:8]}" for _ in range(4)]
    described = await admin.describe_consumer_groups(groups)
    assert [d.group_id for d in described] == groups
    assert all(d.state == "Dead" and d.error is None for d in described)


async def test_bad_group_arguments(admin: AIOKafkaAdminClient) -> None:
    with pytest.raises(ValueError, match="group_id"):
        await admin.list_consumer_group_offsets("")
    with pytest.raises(TypeError, match="TopicPartition"):
        await admin.alter_consumer_group_offsets("g", {("t", 0): 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="offsets"):
        await admin.alter_consumer_group_offsets("g", {TopicPartition("t", 0): -5})
