"""Share-group admin calls against the rig's Kafka."""

from __future__ import annotations

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
