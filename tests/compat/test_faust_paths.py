"""aiokafka 0.14 import paths and requests that faust-streaming 0.15 uses.

faust's Kafka driver (``faust/transport/drivers/aiokafka.py``) and ``faust/auth.py``
import these names at module level, so without them ``faust`` could not load its
Kafka transport at all; the driver creates its topics by sending aiokafka 0.14's
``CreateTopicsRequest`` to the controller it reads from a ``MetadataRequest``. The
expected values were checked by running the same calls on aiokafka 0.14.0 against the
same broker: the same tuples, codes and messages.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import AbstractTokenProvider
from aiokafka.cluster import AIOKafkaClient
from aiokafka.conn import AbstractTokenProvider as ConnTokenProvider
from aiokafka.consumer.group_coordinator import OffsetCommitRequest
from aiokafka.consumer.internals014 import Fetcher014
from aiokafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError
from aiokafka.protocol._gen.offset_commit import OffsetCommitRequest as GeneratedCommit
from aiokafka.protocol.admin import CreateTopicsRequest
from aiokafka.protocol.metadata import MetadataRequest, MetadataRequest_v1
from aiokafka.structs import TopicPartition
from aiokafka.util import parse_kafka_version
from tests.support.wait import eventually
from tools.kafka.rig import KafkaCluster


def test_token_provider_is_the_one_in_abc() -> None:
    assert ConnTokenProvider is AbstractTokenProvider


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("2.8", (2, 8, 0)),
        ("1.0.1", (1, 0, 1)),
        (" 2.4.1 ", (2, 4, 1)),
        ("2.0.0rc1", (2, 0, 0)),
        ("v2.1", (2, 1, 0)),
        ("0.9", (0, 9, 0)),
    ],
)
def test_parse_kafka_version(text: str, parsed: tuple[int, int, int]) -> None:
    assert parse_kafka_version(text) == parsed


@pytest.mark.parametrize("text", ["0.10.2.1", "3.0", "0.8.2", "auto", "2", ""])
def test_parse_kafka_version_rejects(text: str) -> None:
    # aiokafka 0.14 accepts 0.9 <= version < 3.0 only, with two or three numbers.
    with pytest.raises(ValueError):
        parse_kafka_version(text)


def test_offset_commit_request_constants_and_constructor() -> None:
    assert OffsetCommitRequest.DEFAULT_GENERATION_ID == -1
    assert OffsetCommitRequest.DEFAULT_RETENTION_TIME == -1
    request = OffsetCommitRequest("g", 3, "m", -1, [("t", [(0, 42, "meta"), (1, 7, "")])])
    assert isinstance(request, GeneratedCommit)
    assert (request.group_id, request.generation_id_or_member_epoch, request.member_id) == (
        "g",
        3,
        "m",
    )
    (topic,) = request.topics
    assert topic.name == "t"
    assert [
        (p.partition_index, p.committed_offset, p.committed_metadata) for p in topic.partitions
    ] == [
        (0, 42, "meta"),
        (1, 7, ""),
    ]
    assert request.encode(2) and request.encode(9)


async def test_controller_id_and_create_topic_as_faust_does(kafka: KafkaCluster) -> None:
    topic = f"faust-{uuid.uuid4().hex[:8]}"
    async with AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers) as client:
        nodes = [broker.nodeId for broker in client.cluster.brokers()]
        response = await client.send(nodes[0], MetadataRequest([]))
        controller = response.controller_id
        assert controller in nodes and response.topics == []
        old = await client.send(nodes[0], MetadataRequest_v1([]))
        assert old.controller_id == controller

        # faust: (topic, partitions, replication, [], list(config.items())), timeout, False;
        # retention.ms comes as an int, which aiokafka 0.14 sends as its text too.
        config = [("cleanup.policy", "compact"), ("retention.ms", 60000)]
        request = CreateTopicsRequest([(topic, 2, 1, [], config)], 30000, False)
        created = await client.send(controller, request)
        assert created.topic_errors == [(topic, 0, None)]
        _, code, reason = (await client.send(controller, request)).topic_errors[0]
        assert code == TopicAlreadyExistsError.errno
        assert reason == f"Topic '{topic}' already exists."

        assert await client._wait_on_metadata(topic) == {0, 1}

        check = CreateTopicsRequest([(f"{topic}-v", 1, 1, [], [])], 30000, True)
        assert (await client.send(controller, check)).topic_errors == [(f"{topic}-v", 0, None)]
        with pytest.raises(UnknownTopicOrPartitionError):  # validate_only: not created
            await client._wait_on_metadata(f"{topic}-v")


class TP(NamedTuple):
    """faust's own ``TP`` named tuple (faust/types/tuples.py), equal to a TopicPartition."""

    topic: str
    partition: int


async def test_offset_lookups_take_another_topic_partition_tuple(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    # aiokafka 0.14 does not check these arguments; faust's table recovery passes its
    # TP to end_offsets/beginning_offsets (ours raised TypeError).
    topic = new_topic(partitions=2)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for _ in range(3):
            await producer.send_and_wait(topic, b"x", partition=1)
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers
    )
    async with consumer:
        tps = [TP(topic, 0), TP(topic, 1)]
        ends = await consumer.end_offsets(tps)
        assert ends == {TopicPartition(topic, 0): 0, TopicPartition(topic, 1): 3}
        assert ends[TP(topic, 1)] == 3 and all(type(k) is TopicPartition for k in ends)
        assert await consumer.beginning_offsets([(topic, 1)]) == {TopicPartition(topic, 1): 0}
        found = await consumer.offsets_for_times({TP(topic, 1): 0})
        assert found[TopicPartition(topic, 1)] is not None
        with pytest.raises(TypeError):
            await consumer.end_offsets([topic])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            await consumer.end_offsets([(topic, "1")])  # type: ignore[list-item]


async def test_faust_views_of_014_internals(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    """``_coordinator._metadata_snapshot``, ``consumer._fetcher`` (the ``Fetcher014``
    view faust's driver fetches through), ``_max_poll_records`` and ``_closed``, which
    faust also sets, and seek()/position() given faust's own ``TP`` tuple."""
    topic = new_topic(partitions=2)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(4):
            await producer.send_and_wait(topic, b"v", partition=i % 2)
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=f"g-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
    )
    assert consumer._fetcher is None and consumer._coordinator is None  # before start()
    assert consumer._max_poll_records is None
    async with consumer:
        fetcher = consumer._fetcher
        assert isinstance(fetcher, Fetcher014)

        async def assignment() -> frozenset[TopicPartition]:
            return consumer.assignment()

        await eventually(assignment, lambda tps: len(tps) == 2, timeout=30)
        coordinator = consumer._coordinator
        assert coordinator is not None
        assert coordinator._metadata_snapshot == {topic: 2}

        subs = fetcher._subscriptions
        assert fetcher._closed is False
        got: dict[TopicPartition, list[Any]] = {}
        with subs.fetch_context():
            while sum(map(len, got.values())) < 4:
                batch = await fetcher.fetched_records({TP(topic, 0), TP(topic, 1)}, timeout=5)
                for tp, records in batch.items():
                    got.setdefault(tp, []).extend(records)
        assert {tp: len(r) for tp, r in got.items()} == {
            TopicPartition(topic, 0): 2,
            TopicPartition(topic, 1): 2,
        }
        assignment = subs.subscription.assignment
        assert assignment is not None and assignment.active
        state = assignment.state_value(TP(topic, 1))
        assert state is not None and state.highwater == 2 and state.timestamp
        assert state.position is None
        assert assignment.state_value(TP(topic, 7)) is None
        consumer.seek(TP(topic, 0), 1)
        assert await consumer.position(TP(topic, 0)) == 1
        await coordinator.close()  # faust closes it before stop(): nothing happens
        consumer._closed = True  # faust sets it too; stop() is what stops
        assert consumer._closed is False and consumer.assignment()
    assert fetcher._closed is True and consumer._closed is True


async def test_subscribe_after_start_joins_once(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    # faust subscribes after start(); with aiokafka 0.14 the group stays in generation
    # 1. The first getmany() used to ask for a second rebalance, after which faust
    # seeks to the committed offsets and processes again what it had not committed.
    # The one join also assigns the partition and its record is read.
    topic = new_topic()
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"r0")
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=f"g-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
    )
    async with consumer:
        consumer.subscribe([topic])

        async def generation() -> int:
            coordinator = consumer._coordinator
            assert coordinator is not None
            return coordinator.generation

        first = await eventually(generation, lambda g: g > 0, timeout=30)
        values = []
        for _ in range(6):
            for records in (await consumer.getmany(timeout_ms=500)).values():
                values += [r.value for r in records]
        assert await generation() == first
        assert values == [b"r0"]
        assert consumer.assignment() == {TopicPartition(topic, 0)}
