"""The short snippets of the user guide (docs/guide/*.rst include these functions), run
as one program against a broker by tests/integration/test_examples.py so that none of
them goes stale.

Run it::

    python examples/guide_snippets.py --bootstrap localhost:9092 --prefix snippets
"""

from __future__ import annotations

import argparse
import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.consumer.group.assignors import CooperativeStickyAssignor
from aiokafka.errors import KafkaError
from aiokafka.structs import RecordMetadata


async def send_one(bootstrap: str, topic: str) -> RecordMetadata:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        delivery = await producer.send(topic, b"payload", key=b"user-1")
        metadata = await delivery  # RecordMetadata(topic, partition, offset, ...)
    return metadata


async def three_ways_to_read(
    consumer: AIOKafkaConsumer[bytes, bytes], expected: int
) -> list[ConsumerRecord[bytes, bytes]]:
    received = []

    record = await consumer.getone()  # the next record
    received.append(record)

    batches = await consumer.getmany(timeout_ms=1000, max_records=5)
    for _tp, records in batches.items():  # {TopicPartition: [ConsumerRecord, ...]}
        received.extend(records)

    async for record in consumer:  # until the consumer is stopped (or break)
        received.append(record)
        if len(received) >= expected:
            break
    return received


def cooperative_consumer(bootstrap: str, topic: str, group: str) -> AIOKafkaConsumer[bytes, bytes]:
    return AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
    )


async def write_atomically(bootstrap: str, orders: str, audit: str) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{orders}-0")
    await producer.start()  # registers the id, fences older instances
    try:
        async with producer.transaction():  # begin; commit on exit, abort on an error
            await producer.send(orders, b"order 17: 2 x tea")
            await producer.send(audit, b"order 17 accepted")
    finally:
        await producer.stop()


async def deliver(producer: AIOKafkaProducer, topic: str, value: bytes) -> str:
    try:
        delivery = await producer.send(topic, value)
        await delivery
    except KafkaError as exc:
        if exc.retriable:
            # The client's own retries ran out (delivery_timeout_ms): the cluster
            # has been unhealthy that long. Try again later, or give up.
            return f"try again later: {exc!r}"
        # Sending the same record again would fail the same way.
        return f"rejected: {type(exc).__name__}"
    return "delivered"


async def run(bootstrap: str, prefix: str) -> None:
    names = [f"{prefix}-{name}" for name in ("events", "orders", "audit")]
    events, orders, audit = names
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(name, 1, 1) for name in names], raise_errors=True)

    metadata = await send_one(bootstrap, events)
    print(f"send_one: {metadata.topic}[{metadata.partition}] offset {metadata.offset}")

    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(9):
            await producer.send(events, b"event %d" % i)
        print(f"deliver small: {await deliver(producer, events, b'fine')}")
        print(f"deliver huge: {await deliver(producer, events, b'x' * 2_000_000)}")

    async with AIOKafkaConsumer(bootstrap_servers=bootstrap) as consumer:
        tp = TopicPartition(events, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        records = await three_ways_to_read(consumer, 11)
        print(f"three_ways_to_read: offsets {[r.offset for r in records]}")

    consumer = cooperative_consumer(bootstrap, events, f"{prefix}-group")
    async with consumer:
        record = await asyncio.wait_for(consumer.getone(), 60)
        print(f"cooperative_consumer: offset {record.offset}, assigned {consumer.assignment()}")

    await write_atomically(bootstrap, orders, audit)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed"
    ) as consumer:
        tps = [TopicPartition(orders, 0), TopicPartition(audit, 0)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        committed = [await asyncio.wait_for(consumer.getone(), 30) for _ in tps]
        print(f"write_atomically: {sorted(r.value for r in committed if r.value)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--prefix", default="snippets")
    args = parser.parse_args()
    asyncio.run(run(args.bootstrap, args.prefix))


if __name__ == "__main__":
    main()
