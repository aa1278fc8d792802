"""AIOKafkaShareConsumer against the rig's Kafka (share groups are on by default in 4.x)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType
from aiokafka.share import AIOKafkaShareConsumer, ShareConsumerRecord

pytestmark = []


async def _produce(bootstrap: str, topic: str, n: int) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(n):
            await producer.send(topic, str(i).encode())
        await producer.flush()


def _group() -> str:
    return f"share-{uuid.uuid4().hex[:8]}"


async def _group_configs(bootstrap: str, group: str, **configs: str) -> None:
    # Group configs (KIP-932) through incremental alter configs on a GROUP resource.
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource(ConfigResourceType.GROUP, group): [
                    AlterConfigOp(name.replace("_", "."), value) for name, value in configs.items()
                ]
            }
        )


async def _set_earliest(bootstrap: str, group: str) -> None:
    await _group_configs(bootstrap, group, share_auto_offset_reset="earliest")


async def test_one_member_receives_and_accepts(kafka, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, topic, 10)
    async with AIOKafkaShareConsumer(
        topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers
    ) as c:
        got: list[ShareConsumerRecord[bytes, bytes]] = []
        async with asyncio.timeout(30):
            while len(got) < 10:
                for recs in (await c.getmany(timeout_ms=1000)).values():
                    got.extend(recs)
        assert sorted(int(r.value) for r in got) == list(range(10))
        assert all(r.delivery_count == 1 for r in got)
        results = await c.commit()
        assert results and all(e is None for e in results.values())
