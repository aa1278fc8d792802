"""Avro in the Confluent wire format, through the real broker, against confluent-kafka.

confluent-kafka's own ``AvroSerializer``/``AvroDeserializer`` are the peer; its
in-process registry (``SchemaRegistryClient.new_client({"url": "mock://..."})``) is
behind both sides, once through our ``ConfluentSchemaRegistry`` adapter and once used
directly, so both sides see the same ids. What we write, confluent reads; what
confluent writes, we read, across a schema change.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.serialization import (
    AvroDeserializer,
    AvroSerializer,
    ConfluentSchemaRegistry,
    SchemaNotFoundError,
    SchemaSerializationError,
    topic_subject,
)
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(120)

ORDER_V1 = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "item", "type": "string"},
            {"name": "note", "type": ["null", "string"], "default": None},
        ],
    }
)
ORDER_V2 = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "item", "type": "string"},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "quantity", "type": "int", "default": 1},
        ],
    }
)
V1_ORDERS = [
    {"id": 1, "item": "tea", "note": None},
    {"id": 2, "item": "scone", "note": "warm, please"},
    {"id": 3, "item": "jam ✓", "note": None},
]
V2_ORDERS = [
    {"id": 4, "item": "coffee", "note": None, "quantity": 2},
    {"id": 5, "item": "cake", "note": "to go", "quantity": 1},
]


def _registry_client() -> SchemaRegistryClient:
    # Each test its own in-process registry: ids start afresh.
    return SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})


def _read_raw(bootstrap: str, topic: str, expected: int) -> list[Any]:
    """Read ``expected`` messages of partition 0 with confluent-kafka's consumer."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"avro-reader-{time.time_ns()}",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([CTopicPartition(topic, 0, 0)])
        out: list[Any] = []
        deadline = time.monotonic() + 30
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=100, timeout=0.5):
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                out.append(msg)
        return out
    finally:
        consumer.close()


def _produce_with_confluent(
    bootstrap: str,
    topic: str,
    serializer: CAvroSerializer,
    values: list[dict[str, Any]],
    partition: int = 0,
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    ctx = SerializationContext(topic, MessageField.VALUE)
    for value in values:
        producer.produce(
            topic,
            value=serializer(value, ctx),
            key=str(value["id"]).encode(),
            partition=partition,
        )
    assert producer.flush(30) == 0


async def test_confluent_reads_what_we_write(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    client = _registry_client()
    serializer = AvroSerializer(ConfluentSchemaRegistry(client), topic_subject(topic), ORDER_V1)
    schema_id = await serializer.register()
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, value_serializer=serializer
    ) as producer:
        for order in V1_ORDERS:
            await producer.send_and_wait(topic, order, key=str(order["id"]).encode())

    msgs = await asyncio.to_thread(_read_raw, kafka.bootstrap_servers, topic, len(V1_ORDERS))
    ctx = SerializationContext(topic, MessageField.VALUE)
    # The registry holds our schema under confluent's default subject for the topic.
    assert client.get_latest_version(f"{topic}-value").schema_id == schema_id
    theirs = CAvroDeserializer(client)
    assert [theirs(m.value(), ctx) for m in msgs] == V1_ORDERS
    # Byte for byte what confluent's serializer writes for the same values.
    their_serializer = CAvroSerializer(client, ORDER_V1)
    assert [m.value() for m in msgs] == [their_serializer(v, ctx) for v in V1_ORDERS]
    assert all(m.value()[:5] == b"\x00" + schema_id.to_bytes(4, "big") for m in msgs)


async def test_we_read_what_confluent_writes_across_a_schema_change(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """The consumer's deserializer knows v1 only; the first v2 record raises
    SchemaNotFoundError naming its id, and after resolve() the same record is read:
    nothing is skipped or read twice."""
    topic = new_topic()
    client = _registry_client()
    await asyncio.to_thread(
        _produce_with_confluent,
        kafka.bootstrap_servers,
        topic,
        CAvroSerializer(client, ORDER_V1),
        V1_ORDERS,
    )
    v1_id = client.get_latest_version(topic_subject(topic)).schema_id

    deserializer = AvroDeserializer(ConfluentSchemaRegistry(client), reader_schema=ORDER_V2)
    await deserializer.resolve(v1_id)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        value_deserializer=deserializer,
        key_deserializer=bytes.decode,
        auto_offset_reset="earliest",
    ) as consumer:
        consumer.assign([tp])
        got = [await asyncio.wait_for(consumer.getone(), 30) for _ in V1_ORDERS]
        # v1 records read into v2: the new field gets its default.
        assert [r.value for r in got] == [{**o, "quantity": 1} for o in V1_ORDERS]

        # A producer moves to v2 (confluent registers it: a new id).
        await asyncio.to_thread(
            _produce_with_confluent,
            kafka.bootstrap_servers,
            topic,
            CAvroSerializer(client, ORDER_V2),
            V2_ORDERS,
        )
        v2_id = client.get_latest_version(topic_subject(topic)).schema_id
        assert v2_id != v1_id
        with pytest.raises(SchemaNotFoundError, match=f"schema id {v2_id} is not resolved"):
            await asyncio.wait_for(consumer.getone(), 30)
        # The record stayed: the consumer raises again until the id is resolved.
        assert await consumer.position(tp) == len(V1_ORDERS)
        with pytest.raises(SchemaNotFoundError) as info:
            await asyncio.wait_for(consumer.getone(), 30)
        await deserializer.resolve(info.value.schema_id)
        later = [await asyncio.wait_for(consumer.getone(), 30) for _ in V2_ORDERS]
    assert [(r.offset, r.key, r.value) for r in later] == [
        (len(V1_ORDERS) + i, str(o["id"]), o) for i, o in enumerate(V2_ORDERS)
    ]


async def test_async_deserialize_on_a_bytes_consumer(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """The other way to consume: records stay bytes and deserialize() fetches each
    new id from the registry as it meets it (here, two ids in one read)."""
    topic = new_topic()
    client = _registry_client()
    for schema, values in ((ORDER_V1, V1_ORDERS), (ORDER_V2, V2_ORDERS)):
        await asyncio.to_thread(
            _produce_with_confluent,
            kafka.bootstrap_servers,
            topic,
            CAvroSerializer(client, schema),
            values,
        )
    deserializer = AvroDeserializer(ConfluentSchemaRegistry(client))
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        values = []
        deadline = time.monotonic() + 60
        while len(values) < len(V1_ORDERS) + len(V2_ORDERS):
            assert time.monotonic() < deadline, values
            batches = await consumer.getmany(timeout_ms=1000)
            for records in batches.values():
                values.extend([await deserializer.deserialize(r.value) for r in records])
    # Each record read with its writer's schema (no reader schema given).
    assert values == V1_ORDERS + V2_ORDERS
    assert len(deserializer.resolved_ids) == 2


@pytest.mark.parametrize("partitions", [1, 2])
async def test_getmany_hands_out_what_it_took_before_an_unresolved_id(
    kafka: KafkaCluster, new_topic: NewTopic, partitions: int
) -> None:
    """v1 records, then v2 records (the last partition), all fetched before the first
    getmany(): the v1 records come back, the next call raises SchemaNotFoundError, and
    after resolve() the v2 records follow. No record is lost (the position had moved
    past the v1 records when the v2 batch failed to decode)."""
    topic = new_topic(partitions=partitions)
    client = _registry_client()
    await asyncio.to_thread(
        _produce_with_confluent,
        kafka.bootstrap_servers,
        topic,
        CAvroSerializer(client, ORDER_V1),
        V1_ORDERS,
    )
    await asyncio.to_thread(
        _produce_with_confluent,
        kafka.bootstrap_servers,
        topic,
        CAvroSerializer(client, ORDER_V2),
        V2_ORDERS,
        partitions - 1,
    )
    v1_id = client.get_version(topic_subject(topic), 1).schema_id
    deserializer = AvroDeserializer(ConfluentSchemaRegistry(client), reader_schema=ORDER_V2)
    await deserializer.resolve(v1_id)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    got: list[tuple[int, int, Any]] = []
    raised: list[int] = []
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        value_deserializer=deserializer,
        auto_offset_reset="earliest",
    ) as consumer:
        consumer.assign(tps)
        deadline = time.monotonic() + 60
        while len(got) < len(V1_ORDERS) + len(V2_ORDERS):
            assert time.monotonic() < deadline, (got, raised)
            try:
                batches = await consumer.getmany(timeout_ms=1000)
            except SchemaNotFoundError as exc:
                raised.append(exc.schema_id)
                await deserializer.resolve(exc.schema_id)
                continue
            for tp, records in batches.items():
                got.extend((tp.partition, r.offset, r.value) for r in records)
    first_v2 = len(V1_ORDERS) if partitions == 1 else 0
    assert sorted(got, key=lambda g: g[:2]) == [
        *((0, i, {**o, "quantity": 1}) for i, o in enumerate(V1_ORDERS)),
        *((partitions - 1, first_v2 + i, o) for i, o in enumerate(V2_ORDERS)),
    ]
    assert len(raised) == 1  # once, for the v2 id; then it was resolved


async def test_send_raises_for_a_value_that_does_not_match_and_writes_nothing(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    client = _registry_client()
    serializer = AvroSerializer(ConfluentSchemaRegistry(client), topic_subject(topic), ORDER_V1)
    await serializer.register()
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, value_serializer=serializer
    ) as producer:
        with pytest.raises(SchemaSerializationError, match=r"shop\.Order\.id is <x>"):
            await producer.send(topic, {"id": "x", "item": "tea", "note": None})
        metadata = await producer.send_and_wait(topic, V1_ORDERS[0])
    # The bad value never reached the broker: the good one is the topic's first record.
    assert metadata.offset == 0
    msgs = await asyncio.to_thread(_read_raw, kafka.bootstrap_servers, topic, 1)
    assert (
        CAvroDeserializer(client)(msgs[0].value(), SerializationContext(topic, MessageField.VALUE))
        == V1_ORDERS[0]
    )
