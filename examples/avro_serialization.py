"""Avro values in the Confluent wire format, with schema ids pinned by the application.

The producer's ``value_serializer`` and the consumer's ``value_deserializer`` are
aiokafka's Avro pair (``pip install "aiokafka[avro]"``). Each value is written as
magic byte 0, a 4-byte schema id and the Avro bytes, as the Confluent serializers
write it, so Java, librdkafka and Kafka Connect readers that know the same ids read
these records.

There is no schema registry here: the ids are pinned in the code (``StaticSchemas``)
and every producer and consumer of the topic ships the same table. Schemas are looked
up at set-up (``register()``, ``resolve()``), never per record.

Run it::

    python examples/avro_serialization.py --bootstrap localhost:9092 --topic orders
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.serialization import (
    AvroDeserializer,
    AvroSerializer,
    StaticSchemas,
    topic_subject,
)

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "order", "type": "long"},
        {"name": "items", "type": {"type": "array", "items": "string"}},
        {"name": "total", "type": "double"},
    ],
}
# Version 2 adds a field with a default: a reader on v2 reads v1 records too.
ORDER_V2 = {
    **ORDER_V1,
    "fields": [*ORDER_V1["fields"], {"name": "currency", "type": "string", "default": "EUR"}],
}

# Never reuse an id for another schema. A new version gets a new id, and consumers
# must know it (be deployed) before producers write it.
SCHEMAS = StaticSchemas({1: ORDER_V1, 2: ORDER_V2})


async def produce(bootstrap: str, topic: str, schema: dict[str, Any], orders: list[Any]) -> None:
    serializer = AvroSerializer(SCHEMAS, topic_subject(topic), schema)
    await serializer.register()  # set-up: the schema's id (here: looked up in SCHEMAS)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap, value_serializer=serializer, key_serializer=str.encode
    ) as producer:
        for order in orders:
            # The serializer runs inside send(): a value that does not match the
            # schema raises SchemaSerializationError here, naming the field.
            await producer.send_and_wait(topic, order, key="customer-1")


async def consume(bootstrap: str, topic: str, count: int) -> list[Any]:
    # Decode every record into v2, whichever version wrote it.
    deserializer = AvroDeserializer(SCHEMAS, reader_schema=ORDER_V2)
    await deserializer.resolve(*SCHEMAS.ids)  # set-up: parse every writer schema once
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        value_deserializer=deserializer,
        key_deserializer=bytes.decode,
    ) as consumer:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        values = []
        async for record in consumer:
            print(f"{record.key}: {record.value}")
            values.append(record.value)
            if len(values) == count:
                return values
    raise AssertionError("unreachable: the loop returns")


# With a schema registry instead of pinned ids:
#
#     # pip install "confluent-kafka[schemaregistry]"
#     from confluent_kafka.schema_registry import SchemaRegistryClient
#     from aiokafka.serialization import ConfluentSchemaRegistry, SchemaNotFoundError
#
#     registry = ConfluentSchemaRegistry(
#         SchemaRegistryClient({"url": "http://registry:8081"})
#     )
#     serializer = AvroSerializer(registry, topic_subject(topic), ORDER_V2)
#     await serializer.register()  # registers v2 under "<topic>-value" (once)
#
#     deserializer = AvroDeserializer(registry, reader_schema=ORDER_V2)
#     await deserializer.resolve(serializer.schema_id)
#     ...
#     while True:
#         try:
#             record = await consumer.getone()
#         except SchemaNotFoundError as exc:
#             # A producer moved to a schema this process has not seen: fetch it
#             # once; the consumer kept the record and returns it next.
#             await deserializer.resolve(exc.schema_id)
#             continue
#         handle(record.value)


async def run(bootstrap: str, topic: str) -> None:
    v1_orders = [{"order": 1, "items": ["tea", "scone"], "total": 7.5}]
    v2_orders = [
        {"order": 2, "items": ["coffee"], "total": 3.0, "currency": "GBP"},
        None,  # a tombstone stays one: no Avro, no schema id
    ]
    await produce(bootstrap, topic, ORDER_V1, v1_orders)  # the old application
    await produce(bootstrap, topic, ORDER_V2, v2_orders)  # the new one
    values = await consume(bootstrap, topic, count=3)
    assert values == [{**v1_orders[0], "currency": "EUR"}, *v2_orders], values
    print(f"read back {len(values)} records; the v1 record got v2's default currency")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--topic", default="orders")
    args = parser.parse_args()
    asyncio.run(run(args.bootstrap, args.topic))


if __name__ == "__main__":
    main()
