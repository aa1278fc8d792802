"""Share-group admin calls against the rig's Kafka."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType
from aiokafka.errors import NonEmptyGroupError
from aiokafka.share import AIOKafkaShareConsumer
from aiokafka.structs import TopicPartition

if sys.version_info >= (3, 11):
    from asyncio import timeout
else:  # Python 3.10
    from async_timeout import timeout


async def test_share_group_admin_round_trip(
    kafka, admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = f"share-admin-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    await admin.incremental_alter_configs(
        {
            ConfigResource(ConfigResourceType.GROUP, group): [
                AlterConfigOp("share.auto.offset.reset", "earliest")
            ]
        }
    )
    configs = await admin.describe_configs([ConfigResource(ConfigResourceType.GROUP, group)])
    assert "share.auto.offset.reset" in repr(configs)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(10):
            await producer.send(topic, str(i).encode())
    async with AIOKafkaShareConsumer(
        topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers, client_id="share-admin"
    ) as consumer:
        got = 0
        async with timeout(30):
            while got < 10:
                got += sum(len(r) for r in (await consumer.getmany(timeout_ms=500)).values())
        assert list((await consumer.commit()).values()) == [None]
        assert group in [g.group_id for g in await admin.list_share_groups()]
        (described,) = await admin.describe_share_groups([group])
        assert described.error is None and described.state == "Stable"
        (member,) = described.members
        assert member.member_id == consumer.member_id and member.client_id == "share-admin"
        assert tp in member.assignment
        # Offsets are changed only while the group has no members.
        # An active group cannot be deleted.
        refused = await admin.delete_share_groups([group])
        assert isinstance(refused[group], NonEmptyGroupError)
    assert tp in await admin.describe_share_group_offsets(group)
    await admin.alter_share_group_offsets(group, {tp: 4})
    assert (await admin.describe_share_group_offsets(group, [tp]))[tp].start_offset == 4
    # The group starts again at offset 4: records 4..9 are delivered anew.
    async with AIOKafkaShareConsumer(
        topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers
    ) as consumer:
        again: list[int] = []
        async with timeout(30):
            while len(again) < 6:
                for recs in (await consumer.getmany(timeout_ms=500)).values():
                    again.extend(r.offset for r in recs)
        assert sorted(again) == list(range(4, 10))
    await admin.delete_share_group_offsets(group, [topic])
    assert tp not in await admin.describe_share_group_offsets(group)
    assert await admin.delete_share_groups([group]) == {group: None}
    assert group not in [g.group_id for g in await admin.list_share_groups()]


async def test_share_group_offsets_while_members_work(
    kafka, admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    # What DescribeShareGroupOffsets reports during consumption (the same numbers as
    # Kafka's Admin.listShareGroupOffsets): nothing until the first acknowledgement
    # is written, then an exact lag.
    topic = new_topic()
    group = f"share-lag-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    await admin.incremental_alter_configs(
        {
            ConfigResource(ConfigResourceType.GROUP, group): [
                AlterConfigOp("share.auto.offset.reset", "earliest")
            ]
        }
    )
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(5):
            await producer.send_and_wait(topic, str(i).encode())
    async with AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_mode="explicit",
    ) as consumer:
        records = []
        async with timeout(30):
            while len(records) < 5:
                for recs in (await consumer.getmany(timeout_ms=500)).values():
                    records.extend(recs)
        unknown = (await admin.describe_share_group_offsets(group))[tp]
        assert (unknown.start_offset, unknown.lag) == (-1, -1)  # acquired, none acknowledged
        for r in records[:2]:
            consumer.acknowledge(r, "accept")
        for r in records[2:]:
            consumer.acknowledge(r, "release")
        assert list((await consumer.commit()).values()) == [None]
        for _ in range(50):  # (the broker answers the commit once the state is written)
            offsets = (await admin.describe_share_group_offsets(group))[tp]
            if offsets.lag != -1:
                break
            await asyncio.sleep(0.2)
        assert offsets.lag == 3  # the released records
        assert 0 <= offsets.start_offset <= 2  # (Kafka 4.3 still says 0 here)
