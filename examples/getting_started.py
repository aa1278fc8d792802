"""The smallest complete program: produce a few records, then read them back as a
member of a consumer group.

Run it against any broker (``python -m tools.kafka start`` starts one here)::

    python examples/getting_started.py --bootstrap localhost:9092 --topic greetings
"""

from __future__ import annotations

import argparse
import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

GREETINGS = [b"hello", b"hallo", b"bonjour"]


async def produce(bootstrap: str, topic: str) -> None:
    # `async with` starts the producer (connects) and stops it (sends what is
    # still buffered, then disconnects).
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for greeting in GREETINGS:
            # send() queues the record and returns a future; awaiting the future
            # waits until the broker has stored it.
            delivery = await producer.send(topic, greeting, key=b"greetings")
            metadata = await delivery
            print(
                f"produced {greeting!r} to partition {metadata.partition} "
                f"at offset {metadata.offset}"
            )


async def consume(bootstrap: str, topic: str, group: str) -> None:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        # A new group starts at the oldest record (the default is the newest).
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        received = 0
        async for record in consumer:
            print(
                f"consumed {record.value!r} from partition {record.partition} "
                f"at offset {record.offset}"
            )
            received += 1
            if received == len(GREETINGS):
                break
    finally:
        # Commits the consumed offsets (auto-commit is on) and leaves the group.
        await consumer.stop()


async def main(bootstrap: str, topic: str, group: str) -> None:
    await produce(bootstrap, topic)
    await consume(bootstrap, topic, group)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--topic", default="greetings")
    parser.add_argument("--group", default="greeters")
    args = parser.parse_args()
    asyncio.run(main(args.bootstrap, args.topic, args.group))
