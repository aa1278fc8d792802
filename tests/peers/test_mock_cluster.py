"""Our producer and consumer against librdkafka's mock cluster (three in-process brokers).

The mock injects what a real broker rarely does on demand: request errors, late
answers, brokers going down, leaders moving. Every test checks the end result the way
a user would: all records are there once, in order per partition.

Clients connect through :class:`~tests.support.mock_cluster.MockRelay`, which undoes two
wire deviations of the mock (its ApiVersions v3+ answers and a trailing byte on flexible
responses); ``test_direct_connection`` shows whether they are still there.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.errors import KafkaConnectionError, KafkaProtocolError
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import TopicPartition
from tests.support.mock_cluster import ApiKey, CoordType, MockCluster, MockRelay

NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
NOT_ENOUGH_REPLICAS = 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20

# Generous for a 2-core machine running brokers next door; never a timing assertion.
DEADLINE = 60.0


def new_topic(mock: MockCluster, partitions: int = 3) -> str:
    topic = f"mock-{uuid.uuid4().hex[:10]}"
    mock.create_topic(topic, partitions=partitions, replication_factor=3)
    return topic


def producer_for(relay: MockRelay, **config: Any) -> AIOKafkaProducer:
    config.setdefault("enable_idempotence", True)
    config.setdefault("request_timeout_ms", 5000)
    config.setdefault("retry_backoff_ms", 50)
    return AIOKafkaProducer(bootstrap_servers=relay.bootstrap_servers, **config)


async def read_all(
    relay: MockRelay, topic: str, partitions: int, expected: int
) -> dict[int, list[bytes | None]]:
    """Values per partition from the start, reading until ``expected`` (bounded) + a bit."""
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=relay.bootstrap_servers,
        auto_offset_reset="earliest",
        request_timeout_ms=10000,
    )
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        out: dict[int, list[bytes | None]] = {p: [] for p in range(partitions)}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE
        count = 0
        while count < expected and loop.time() < deadline:
            for tp, records in (await consumer.getmany(timeout_ms=300)).items():
                out[tp.partition].extend(r.value for r in records)
                count += len(records)
        # Anything beyond `expected` would be a duplicate: look once more.
        for tp, records in (await consumer.getmany(timeout_ms=300)).items():
            out[tp.partition].extend(r.value for r in records)
        return out
    finally:
        await consumer.stop()


def expected_values(n: int, partitions: int) -> dict[int, list[bytes | None]]:
    out: dict[int, list[bytes | None]] = {p: [] for p in range(partitions)}
    for i in range(n):
        out[i % partitions].append(b"v%d" % i)
    return out


async def send_all(producer: AIOKafkaProducer, topic: str, n: int, partitions: int) -> None:
    futures = [
        await producer.send(topic, b"v%d" % i, key=b"k%d" % i, partition=i % partitions)
        for i in range(n)
    ]
    await asyncio.wait_for(asyncio.gather(*futures), DEADLINE)


async def test_direct_connection(mock_cluster: MockCluster) -> None:
    """Without the relay: passes once librdkafka's mock encodes ApiVersions like Kafka."""
    producer = AIOKafkaProducer(
        bootstrap_servers=mock_cluster.bootstrap_servers, request_timeout_ms=5000
    )
    try:
        await asyncio.wait_for(producer.start(), DEADLINE)
    except (KafkaConnectionError, KafkaProtocolError) as exc:
        if "ApiVersionsResponse" not in str(exc) and "MetadataResponse" not in str(exc):
            raise
        pytest.skip(
            "librdkafka mock deviation: it answers ApiVersions v3/v4 (which Kafka accepts) "
            "with a body in neither Kafka's v0 nor flexible layout, and appends an extra "
            f"tagged-field byte to flexible responses; our strict decoder refuses: {exc}"
        )
    finally:
        await producer.stop()


async def test_round_trip(mock_cluster: MockCluster, mock_relay: MockRelay) -> None:
    topic = new_topic(mock_cluster)
    async with producer_for(mock_relay, linger_ms=5) as producer:
        await send_all(producer, topic, 300, 3)
    assert await read_all(mock_relay, topic, 3, 300) == expected_values(300, 3)
    # The relay did rewrite (otherwise test_direct_connection would pass).
    assert mock_relay.fixes.get("ApiVersions re-encoded", 0) > 0


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
async def test_round_trip_codecs(
    mock_cluster: MockCluster, mock_relay: MockRelay, codec: str
) -> None:
    topic = new_topic(mock_cluster, partitions=1)
    async with producer_for(mock_relay, compression_type=codec, linger_ms=5) as producer:
        await send_all(producer, topic, 100, 1)
    assert await read_all(mock_relay, topic, 1, 100) == expected_values(100, 1)


async def test_retriable_produce_errors(mock_cluster: MockCluster, mock_relay: MockRelay) -> None:
    """Injected retriable Produce errors are retried: every record once, in order."""
    topic = new_topic(mock_cluster)
    async with producer_for(mock_relay, linger_ms=2) as producer:
        await send_all(producer, topic, 30, 3)  # connections and producer id are in place
        mock_cluster.push_request_errors(
            ApiKey.PRODUCE,
            [
                NOT_LEADER_OR_FOLLOWER,
                REQUEST_TIMED_OUT,
                NOT_ENOUGH_REPLICAS,
                NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                NOT_LEADER_OR_FOLLOWER,
                REQUEST_TIMED_OUT,
            ],
        )
        futures = [await producer.send(topic, b"v%d" % i, partition=i % 3) for i in range(30, 300)]
        await asyncio.wait_for(asyncio.gather(*futures), DEADLINE)
    assert await read_all(mock_relay, topic, 3, 300) == expected_values(300, 3)


async def test_late_produce_answers_are_deduplicated(
    mock_cluster: MockCluster, mock_relay: MockRelay
) -> None:
    """A Produce the broker appended but answered after our request timeout is retried;
    the idempotent producer's sequence numbers keep the retry from duplicating it."""
    topic = new_topic(mock_cluster, partitions=1)
    async with producer_for(mock_relay, request_timeout_ms=1000, linger_ms=2) as producer:
        await send_all(producer, topic, 10, 1)
        leader = producer.client.cluster.leader_for(TopicPartition(topic, 0))
        assert leader is not None
        # Appended, but answered after 3 s: the client gives up on it after 1 s.
        mock_cluster.broker_push_request_error_rtts(leader, ApiKey.PRODUCE, [(0, 3000)])
        futures = [await producer.send(topic, b"v%d" % i, partition=0) for i in range(10, 60)]
        await asyncio.wait_for(asyncio.gather(*futures), DEADLINE)
    got = await read_all(mock_relay, topic, 1, 60)
    want = expected_values(60, 1)
    if got != want and got[0] == want[0] + want[0][10:]:
        # Exactly the late batch twice, the original first: the retry was appended again.
        pytest.skip(
            "librdkafka mock deviation: it checks producer id/epoch/sequence only for "
            "transactional producers (rd_kafka_mock_validate_records returns early without a "
            "TransactionalId), so the retry of an idempotent batch that was appended but "
            "answered late is appended a second time; Kafka drops it as a duplicate"
        )
    assert got == want


async def test_broker_down_then_up(mock_cluster: MockCluster, mock_relay: MockRelay) -> None:
    """A partition leader goes away mid-stream and comes back; nothing lost or doubled."""
    topic = new_topic(mock_cluster)
    async with producer_for(mock_relay, linger_ms=2) as producer:
        await send_all(producer, topic, 60, 3)
        leader = producer.client.cluster.leader_for(TopicPartition(topic, 0))
        assert leader is not None
        mock_cluster.broker_set_down(leader)
        futures = [await producer.send(topic, b"v%d" % i, partition=i % 3) for i in range(60, 240)]
        await asyncio.sleep(1.0)  # let the producer hit the downed broker and retry
        mock_cluster.broker_set_up(leader)
        futures += [
            await producer.send(topic, b"v%d" % i, partition=i % 3) for i in range(240, 300)
        ]
        await asyncio.wait_for(asyncio.gather(*futures), DEADLINE)
    assert await read_all(mock_relay, topic, 3, 300) == expected_values(300, 3)


async def test_leader_change(mock_cluster: MockCluster, mock_relay: MockRelay) -> None:
    """Leadership moves mid-stream: the producer follows, and so does a running consumer."""
    topic = new_topic(mock_cluster, partitions=1)
    tp = TopicPartition(topic, 0)
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=mock_relay.bootstrap_servers, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        consumer.assign([tp])
        got: list[bytes | None] = []
        async with producer_for(mock_relay, linger_ms=2) as producer:
            await send_all(producer, topic, 50, 1)
            old = producer.client.cluster.leader_for(tp)
            assert old is not None
            new = next(b for b in mock_cluster.broker_ids if b != old)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + DEADLINE
            while len(got) < 50 and loop.time() < deadline:
                got += [r.value for r in (await consumer.getmany(tp, timeout_ms=300)).get(tp, [])]
            mock_cluster.partition_set_leader(topic, 0, new)
            futures = [await producer.send(topic, b"v%d" % i, partition=0) for i in range(50, 150)]
            await asyncio.wait_for(asyncio.gather(*futures), DEADLINE)
            assert producer.client.cluster.leader_for(tp) == new
        while len(got) < 150 and loop.time() < deadline:
            got += [r.value for r in (await consumer.getmany(tp, timeout_ms=300)).get(tp, [])]
        got += [r.value for r in (await consumer.getmany(tp, timeout_ms=300)).get(tp, [])]
    finally:
        await consumer.stop()
    assert got == [b"v%d" % i for i in range(150)]


async def test_commit_with_coordinator_errors(
    mock_cluster: MockCluster, mock_relay: MockRelay
) -> None:
    """FindCoordinator and OffsetCommit fail with retriable coordinator errors first;
    commit() still stores the offset, and committed() reads it back."""
    topic = new_topic(mock_cluster, partitions=1)
    tp = TopicPartition(topic, 0)
    group = f"g-{uuid.uuid4().hex[:8]}"
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=mock_relay.bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        request_timeout_ms=5000,
        retry_backoff_ms=50,
    )
    # Pin the coordinator first so that moving it later is a real move.
    mock_cluster.coordinator_set(CoordType.GROUP, group, 1)
    await consumer.start()
    try:
        consumer.assign([tp])
        mock_cluster.push_request_errors(
            ApiKey.FIND_COORDINATOR, [COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS]
        )
        mock_cluster.push_request_errors(
            ApiKey.OFFSET_COMMIT, [NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS]
        )
        await asyncio.wait_for(consumer.commit({tp: 42}), DEADLINE)
        assert await asyncio.wait_for(consumer.committed(tp), DEADLINE) == 42
        # Move the group's coordinator: the old one answers NOT_COORDINATOR, and the
        # consumer has to look the new one up.
        mock_cluster.coordinator_set(CoordType.GROUP, group, 2)
        await asyncio.wait_for(consumer.commit({tp: 43}), DEADLINE)
        assert await asyncio.wait_for(consumer.committed(tp), DEADLINE) == 43
    finally:
        await consumer.stop()
