"""JSON values and string keys with the producer's serializers and the consumer's
deserializers.

A serializer turns what the application passes to ``send()`` into bytes; a
deserializer turns the bytes back into what ``ConsumerRecord.key`` and ``.value``
hold. The producer calls its serializers for ``None`` too (as aiokafka does), so a
serializer that should keep tombstones maps ``None`` to ``None``; the consumer does
not call its deserializers for ``None``.

Run it::

    python examples/json_serialization.py --bootstrap localhost:9092 --topic orders
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition


def serialize(value: Any) -> bytes | None:
    if value is None:
        return None  # a tombstone stays a record without a value (not b"null")
    # Compact separators: the bytes are stored and sent for every record.
    return json.dumps(value, separators=(",", ":")).encode()


def deserialize(data: bytes) -> Any:
    return json.loads(data)


ORDERS = [
    {"order": 1, "items": ["tea", "scone"], "total": 7.5},
    {"order": 2, "items": ["coffee"], "total": 3.0},
    None,  # a tombstone: deletes key "customer-1" in a compacted topic
]


async def produce(bootstrap: str, topic: str) -> None:
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        value_serializer=serialize,
        key_serializer=str.encode,
    ) as producer:
        for order in ORDERS:
            await producer.send_and_wait(topic, order, key="customer-1")


async def consume(bootstrap: str, topic: str) -> list[Any]:
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        value_deserializer=deserialize,
        key_deserializer=bytes.decode,
    ) as consumer:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        values = []
        async for record in consumer:
            print(f"{record.key}: {record.value}")
            values.append(record.value)
            if len(values) == len(ORDERS):
                return values
    raise AssertionError("unreachable: the loop returns")


async def run(bootstrap: str, topic: str) -> None:
    await produce(bootstrap, topic)
    values = await consume(bootstrap, topic)
    assert values == ORDERS, values
    print(f"read back {len(values)} records as sent")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--topic", default="orders")
    args = parser.parse_args()
    asyncio.run(run(args.bootstrap, args.topic))


if __name__ == "__main__":
    main()
