"""Subscriptions without a group_id against a real broker: new topics matching a
pattern and new partitions of subscribed topics are picked up; internal topics are
hidden unless ``exclude_internal_topics=False``."""

from __future__ import annotations

import asyncio
import uuid

from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster

from .test_consumer_fetch import NewTopic, consumer, produce, read

OFFSETS_TOPIC = "__consumer_offsets"


async def ensure_offsets_topic(kafka: KafkaCluster, topic: str) -> None:
    """A group commit makes the broker create ``__consumer_offsets``."""
    async with consumer(kafka, group_id=f"g-{uuid.uuid4().hex[:8]}") as c:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        await c.commit({tp: 0})


async def test_pattern_without_group_picks_up_a_topic_created_later(
    kafka: KafkaCluster,
) -> None:
    prefix = f"nogroup-pattern-{uuid.uuid4().hex[:8]}"
    first = await asyncio.to_thread(kafka.create_topic, f"{prefix}-a")
    produce(kafka.bootstrap_servers, first, [b"a0", b"a1"])
    async with consumer(kafka, metadata_max_age_ms=300) as c:
        c.subscribe(pattern=rf"{prefix}-.*")
        got = await read(c, 2)
        assert [(r.topic, r.value) for r in got] == [(first, b"a0"), (first, b"a1")]
        assert c.subscription() == {first}

        second = await asyncio.to_thread(kafka.create_topic, f"{prefix}-b", 2)
        produce(kafka.bootstrap_servers, second, [b"b0"], partition=1)
        # The topic did not exist at subscribe(): only re-matching the pattern on a
        # metadata update can find it (auto_offset_reset=earliest picks up b0).
        got = await read(c, 1, timeout=20)
        assert [(r.topic, r.partition, r.value) for r in got] == [(second, 1, b"b0")]
        assert c.subscription() == {first, second}
        assert c.assignment() == {
            TopicPartition(first, 0),
            TopicPartition(second, 0),
            TopicPartition(second, 1),
        }
        # A topic not matching the pattern is never assigned.
        other = await asyncio.to_thread(kafka.create_topic, f"x{prefix}-c")
        produce(kafka.bootstrap_servers, other, [b"c0"])
        assert await read(c, 1, timeout=1.5) == []
        assert {tp.topic for tp in c.assignment()} == {first, second}


async def test_subscribe_without_group_picks_up_new_partitions(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=1)
    async with consumer(kafka, metadata_max_age_ms=300) as c:
        c.subscribe([topic])
        assert await c.getmany(timeout_ms=200) == {}
        assert c.assignment() == {TopicPartition(topic, 0)}
        async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
            await admin.create_partitions({topic: NewPartitions(3)})
        await asyncio.to_thread(kafka.wait_topic, topic, 3)
        produce(kafka.bootstrap_servers, topic, [b"p2"], partition=2)
        got = await read(c, 1, timeout=20)
        assert [(r.partition, r.value) for r in got] == [(2, b"p2")]
        assert c.assignment() == {TopicPartition(topic, p) for p in range(3)}


async def test_topics_excludes_internal_topics(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    await ensure_offsets_topic(kafka, topic)
    async with consumer(kafka) as c:
        topics = await c.topics()
        assert topic in topics
        assert OFFSETS_TOPIC not in topics
    async with consumer(kafka, exclude_internal_topics=False) as c:
        assert OFFSETS_TOPIC in await c.topics()


async def test_pattern_never_matches_internal_topics_when_excluded(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    await ensure_offsets_topic(kafka, topic)
    pattern = rf"__consumer_offsets|{topic}"
    async with consumer(kafka, metadata_max_age_ms=300) as c:
        c.subscribe(pattern=pattern)
        await c.getmany(timeout_ms=100)
        assert c.subscription() == {topic}
        # Several metadata updates later the pattern still ignores the internal topic.
        await asyncio.sleep(1.0)
        assert c.subscription() == {topic}
        assert {tp.topic for tp in c.assignment()} == {topic}
    # The control: with the option off the same pattern does match it.
    async with consumer(kafka, exclude_internal_topics=False) as c:
        c.subscribe(pattern=pattern)
        await c.getmany(timeout_ms=0)
        assert c.subscription() == {topic, OFFSETS_TOPIC}
