"""Consumer groups on the three-broker cluster while brokers die and come back.

The group coordinator's broker (and, separately, a partition leader's broker) is
killed during group consumption and restarted: consumption must resume with nothing
lost, and the committed offsets must reach the end. Broker kills and restarts block,
so they run in a thread while the consumers keep polling.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster

from .test_consumer_group import committed_offsets

NewTopic = Callable[..., str]

pytestmark = pytest.mark.cluster


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int, tag: bytes) -> None:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5}
    )
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, value=b"%s-%d-%d" % (tag, p, i), partition=p)
    assert producer.flush(60) == 0


class Poller:
    """Members polling in one background task, collecting every record value."""

    def __init__(self, consumers: list[AIOKafkaConsumer[Any, Any]]) -> None:
        self.consumers = consumers
        self.values: list[bytes] = []
        self._running = True
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        while self._running:
            for c in self.consumers:
                batch = await c.getmany(timeout_ms=50)
                self.values.extend(r.value or b"" for recs in batch.values() for r in recs)

    async def wait(self, what: str, predicate: Callable[[], bool], timeout: float = 120) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate():
            if self._task.done():
                self._task.result()  # raise what stopped the loop
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.2)

    async def stop(self) -> None:
        self._running = False
        await asyncio.wait_for(self._task, 60)


def members(cluster: KafkaCluster, group: str, topic: str) -> list[AIOKafkaConsumer[Any, Any]]:
    out: list[AIOKafkaConsumer[Any, Any]] = []
    for _ in range(2):
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=cluster.bootstrap_servers,
            group_id=group,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=100,
            session_timeout_ms=10000,
            heartbeat_interval_ms=500,
            auto_commit_interval_ms=500,
            request_timeout_ms=10000,
            metadata_max_age_ms=5000,
        )
        c.subscribe([topic])
        out.append(c)
    return out


async def run_with_kill(
    cluster: KafkaCluster, new_topic: NewTopic, pick_victim: Callable[..., Any]
) -> None:
    topic = new_topic(partitions=6, replication_factor=3, cluster=cluster)
    group = f"g-fault-{uuid.uuid4().hex[:8]}"
    tps = [TopicPartition(topic, p) for p in range(6)]
    produce(cluster.bootstrap_servers, topic, 6, 30, b"a")
    consumers = members(cluster, group, topic)
    for c in consumers:
        await c.start()
    poller = Poller(consumers)
    victim: int | None = None
    try:
        await poller.wait("first round", lambda: len(set(poller.values)) == 180)
        victim = await pick_victim(consumers[0], group, tps[0])
        await asyncio.to_thread(cluster.kill, victim)
        await asyncio.to_thread(produce, cluster.bootstrap_servers, topic, 6, 30, b"b")
        await poller.wait("second round", lambda: len(set(poller.values)) == 360)
        await asyncio.to_thread(cluster.restart, victim)
        victim = None
        await asyncio.to_thread(produce, cluster.bootstrap_servers, topic, 6, 30, b"c")
        await poller.wait("third round", lambda: len(set(poller.values)) == 540)
        ends = await consumers[0].end_offsets(tps)
        assert all(v == 90 for v in ends.values())
        committed: dict[TopicPartition, int] = {}
        for _ in range(200):
            committed = await committed_offsets(cluster, group)
            if committed == ends:
                break
            await asyncio.sleep(0.3)
        assert committed == ends
    finally:
        await poller.stop()
        for c in consumers:
            await c.stop()
        if victim is not None:
            await asyncio.to_thread(cluster.restart, victim)
    expected = {
        b"%s-%d-%d" % (t, p, i) for t in (b"a", b"b", b"c") for p in range(6) for i in range(30)
    }
    assert set(poller.values) == expected


async def test_group_survives_coordinator_loss(
    kafka_cluster: KafkaCluster, new_topic: NewTopic
) -> None:
    async def coordinator(c: AIOKafkaConsumer[Any, Any], group: str, tp: TopicPartition) -> int:
        assert c._client is not None
        return await c._client.coordinator_for(group)

    await run_with_kill(kafka_cluster, new_topic, coordinator)


async def test_group_survives_partition_leader_loss(
    kafka_cluster: KafkaCluster, new_topic: NewTopic
) -> None:
    async def leader(c: AIOKafkaConsumer[Any, Any], group: str, tp: TopicPartition) -> int:
        assert c._client is not None
        coordinator = await c._client.coordinator_for(group)
        # Prefer a leader that is not the coordinator, so this test differs from the
        # coordinator one.
        for p in range(6):
            node = c._client.cluster.leader_for(TopicPartition(tp.topic, p))
            if node is not None and node != coordinator:
                return node
        node = c._client.cluster.leader_for(tp)
        assert node is not None
        return node

    await run_with_kill(kafka_cluster, new_topic, leader)
