"""Consumer groups with the classic protocol against a real broker.

Every wait is bounded; timeouts are generous because the machine is shared.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.errors import IllegalOperation
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

FAST = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 500}


def produce(bootstrap: str, topic: str, values: Iterable[bytes], partitions: int) -> None:
    """Write records round-robin over ``partitions`` with confluent-kafka."""
    import confluent_kafka

    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i, v in enumerate(values):
        producer.produce(topic, value=v, partition=i % partitions)
    assert producer.flush(30) == 0


def group_consumer(kafka: KafkaCluster, group: str, **config: Any) -> AIOKafkaConsumer[Any, Any]:
    config.setdefault("auto_offset_reset", "earliest")
    config.setdefault("fetch_max_wait_ms", 100)
    for k, v in FAST.items():
        config.setdefault(k, v)
    return AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap_servers, group_id=group, **config)


class Log(ConsumerRebalanceListener):
    """Records every callback as ``(kind, sorted partitions)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, list[TopicPartition]]] = []

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.events.append(("revoked", sorted(revoked)))

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        self.events.append(("assigned", sorted(assigned)))

    def on_partitions_lost(self, lost: list[TopicPartition]) -> None:
        self.events.append(("lost", sorted(lost)))


async def wait_until(what: str, predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


async def poll_until(
    consumers: list[AIOKafkaConsumer[Any, Any]],
    what: str,
    predicate: Callable[[], bool],
    sink: list[tuple[str, int, int]] | None = None,
    timeout: float = 60.0,
) -> None:
    """Poll every consumer (so none hits max_poll_interval) until ``predicate()``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        for c in consumers:
            batch = await c.getmany(timeout_ms=50)
            if sink is not None:
                for tp, recs in batch.items():
                    sink.extend((tp.topic, tp.partition, r.offset) for r in recs)


async def test_two_members_share_partitions_range(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=4)
    group = f"g-{uuid.uuid4().hex[:8]}"
    produce(kafka.bootstrap_servers, topic, [b"%d" % i for i in range(200)], 4)
    log1, log2 = Log(), Log()
    c1 = group_consumer(kafka, group, partition_assignment_strategy=["range"])
    c2 = group_consumer(kafka, group, partition_assignment_strategy=["range"])
    seen: list[tuple[str, int, int]] = []
    c1.subscribe([topic], listener=log1)
    await c1.start()
    try:
        await poll_until([c1], "c1 owns all", lambda: len(c1.assignment()) == 4, seen)
        c2.subscribe([topic], listener=log2)
        await c2.start()
        try:
            await poll_until(
                [c1, c2],
                "both own two",
                lambda: len(c1.assignment()) == 2 and len(c2.assignment()) == 2,
                seen,
            )
            assert c1.assignment() | c2.assignment() == {TopicPartition(topic, p) for p in range(4)}
            await poll_until([c1, c2], "all records", lambda: len(set(seen)) >= 200, seen)
            meta1, meta2 = c1.group_metadata(), c2.group_metadata()
            assert meta1.generation_id == meta2.generation_id >= 1
            assert meta1.member_id and meta2.member_id and meta1.member_id != meta2.member_id
        finally:
            await c2.stop()
        await poll_until([c1], "c1 owns all again", lambda: len(c1.assignment()) == 4, seen)
    finally:
        await c1.stop()
    assert {(t, p, o) for t, p, o in seen} == {(topic, p, o) for p in range(4) for o in range(50)}
    # Eager: revoked everything before each rejoin, then assigned.
    assert log1.events[0] == ("assigned", [TopicPartition(topic, p) for p in range(4)])
    assert ("revoked", [TopicPartition(topic, p) for p in range(4)]) in log1.events
    assert log2.events and log2.events[0][0] == "assigned"


async def test_group_metadata_without_subscription(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    c = group_consumer(kafka, "g-meta-" + uuid.uuid4().hex[:6])
    await c.start()
    try:
        c.assign([TopicPartition(topic, 0)])
        meta = c.group_metadata()
        assert (meta.generation_id, meta.member_id) == (-1, "")
    finally:
        await c.stop()
    c2 = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap_servers)
    with pytest.raises(IllegalOperation):
        c2.group_metadata()


async def committed_offsets(kafka: KafkaCluster, group: str) -> dict[TopicPartition, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        found = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {tp: om.offset for tp, om in found.items() if om is not None}
