"""A share consumer whose partitions have leaders on three brokers: one share session
per broker, acknowledgements routed to each partition's leader."""

from __future__ import annotations

import sys
import uuid
from collections import Counter
from collections.abc import Callable

from aiokafka import AIOKafkaClient, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType
from aiokafka.share import AIOKafkaShareConsumer
from tools.kafka.rig import KafkaCluster

if sys.version_info >= (3, 11):
    from asyncio import timeout
else:  # Python 3.10
    from async_timeout import timeout


async def test_partitions_led_by_three_brokers(
    kafka_cluster: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    topic = new_topic(partitions=6, replication_factor=1, cluster=kafka_cluster)
    group = f"share-{uuid.uuid4().hex[:8]}"
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource(ConfigResourceType.GROUP, group): [
                    AlterConfigOp("share.auto.offset.reset", "earliest")
                ]
            }
        )
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        await client.set_topics([topic])
        leaders = {client.cluster.leader_for(TopicPartition(topic, p)) for p in range(6)}
    assert len(leaders) > 1, leaders  # several share sessions
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(120):
            await producer.send(topic, str(i).encode(), partition=i % 6)
    async with AIOKafkaShareConsumer(topic, group_id=group, bootstrap_servers=bootstrap) as c:
        seen: Counter[int] = Counter()
        async with timeout(60):
            while len(seen) < 120:
                for recs in (await c.getmany(timeout_ms=500)).values():
                    seen.update(int(r.value) for r in recs)
        # Earlier polls' acknowledgements went with the fetches; the rest now.
        results = await c.commit()
        assert all(e is None for e in results.values()), results
        assert await c.getmany(timeout_ms=1500) == {}
    assert sorted(seen) == list(range(120)) and set(seen.values()) == {1}
