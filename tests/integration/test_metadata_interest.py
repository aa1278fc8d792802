"""Which topics the client's Metadata requests name, read from the wire: a producer
asks for the topics it sends to, and forgetting its last topic asks for none, never
for every topic of the cluster (issue 16 item 3); a group leader keeps its topics
and so sees partitions added to them. The relay records each Metadata
request the client sends to the real broker."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from aiokafka.cluster.client import AIOKafkaClient
from aiokafka.errors import UnknownTopicOrPartitionError
from aiokafka.protocol._gen import metadata as _md
from aiokafka.share import AIOKafkaShareConsumer
from aiokafka.structs import TopicPartition
from tests.support.inject_relay import InjectingRelay
from tools.kafka.rig import KafkaCluster

METADATA = _md.MetadataRequest.API_KEY
ALL = None  # what a request asking for every topic carries


def asked(relay: InjectingRelay) -> list[list[str] | None]:
    """The topics of each Metadata request so far (``None``: every topic)."""
    out: list[list[str] | None] = []
    for version, body in relay.recorded[METADATA]:
        request = _md.MetadataRequest.decode(body, version)
        out.append(None if request.topics is None else [t.name for t in request.topics])
    return out


async def wait_for_requests(relay: InjectingRelay, count: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while len(relay.recorded[METADATA]) < count:
        assert time.monotonic() < deadline, f"only {len(relay.recorded[METADATA])} requests"
        await asyncio.sleep(0.05)


async def test_a_producer_asks_only_for_its_topics_and_none_after_forgetting(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    missing = f"interest-missing-{time.time_ns()}"
    node = kafka.nodes[0]
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.record(METADATA)
        async with AIOKafkaProducer(
            bootstrap_servers=relay.bootstrap_servers,
            metadata_max_age_ms=300,
            max_block_ms=1000,
            allow_auto_topic_creation=False,
        ) as p:
            assert asked(relay)[0] == []  # the bootstrap: brokers only, no topic
            # The producer's only topic turns out not to exist: it forgets it ...
            with pytest.raises(UnknownTopicOrPartitionError):
                await p.send(missing, b"v")
            assert missing in (asked(relay)[1] or [])
            assert p.client.topics == frozenset() and not p.client.wants_all_topics
            # ... and the periodic refreshes that follow ask for no topic, not all.
            seen = len(relay.recorded[METADATA])
            await wait_for_requests(relay, seen + 2)
            assert asked(relay)[seen:] == [[]] * (len(asked(relay)) - seen)

            # A topic it sends to is asked for, and only that one.
            md = await asyncio.wait_for(p.send_and_wait(topic, b"v"), 20)
            assert md.offset == 0
            seen = len(relay.recorded[METADATA])
            await wait_for_requests(relay, seen + 2)
            assert all(t == [topic] for t in asked(relay)[seen:])

        assert ALL not in asked(relay)
        # The unknown topic cost a bounded number of requests: the throttle spaced
        # the producer's look-ups over max_block_ms (no refresh loop).
        assert len(asked(relay)) < 40, len(asked(relay))


async def test_a_share_consumer_asks_for_its_subscription_never_for_every_topic(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    """The share consumer holds its subscription in an interest handle: the bootstrap
    and every refresh name the subscribed topic, and after unsubscribe() none (its
    client had no other owner, so aiokafka's "empty = every topic" used to apply)."""
    topic = new_topic()
    node = kafka.nodes[0]
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.record(METADATA)
        consumer = AIOKafkaShareConsumer(
            topic,
            group_id=f"interest-{uuid.uuid4().hex[:8]}",
            bootstrap_servers=relay.bootstrap_servers,
            metadata_max_age_ms=300,
        )
        async with consumer:
            await wait_for_requests(relay, 3)
            assert all(t == [topic] for t in asked(relay)), asked(relay)
            consumer.unsubscribe()
            seen = len(relay.recorded[METADATA])
            await wait_for_requests(relay, seen + 3)
            assert asked(relay)[-1] == []
        assert ALL not in asked(relay)


async def test_a_bare_client_keeps_aiokafkas_empty_set_meaning_every_topic(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    node = kafka.nodes[0]
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.record(METADATA)
        async with AIOKafkaClient(bootstrap_servers=relay.bootstrap_servers) as client:
            assert await client.set_topics([topic]) is True  # known from the bootstrap
            await client.force_metadata_update()
            await client.set_topics([])
            await client.force_metadata_update()
            assert client.wants_all_topics
            # Another owner registering ends that default: an empty union asks none.
            handle = client.topic_interest("test")
            await client.force_metadata_update()
            handle.close()
    requests = asked(relay)
    # aiokafka 0.14: a client nobody told asks for all; then the topics it was told.
    assert requests == [ALL, [topic], ALL, []]


async def test_a_group_leader_keeps_its_topics_and_sees_new_partitions(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=1)
    node = kafka.nodes[0]
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.record(METADATA)
        async with AIOKafkaConsumer(
            topic,
            bootstrap_servers=relay.bootstrap_servers,
            group_id=f"interest-{uuid.uuid4().hex[:8]}",
            metadata_max_age_ms=300,
            auto_offset_reset="earliest",
        ) as c:
            assert c.assignment() == {TopicPartition(topic, 0)}
            async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
                await admin.create_partitions({topic: NewPartitions(3)})
            # The leader's periodic refreshes name the group's topic, so it sees the
            # new partitions and rebalances (the group's new-partition detection).
            deadline = time.monotonic() + 30
            while len(c.assignment()) < 3:
                assert time.monotonic() < deadline, c.assignment()
                await c.getmany(timeout_ms=200)
            assert c.assignment() == {TopicPartition(topic, p) for p in range(3)}
    requests = asked(relay)
    assert requests[0] == []  # the consumer's bootstrap: no topic yet
    assert ALL not in requests
    assert requests[-1] == [topic]
