"""Produce pre-built record batches with ``create_batch()`` / ``send_batch()``.

``send()`` is the usual way to produce: the producer batches records per partition
itself. Building batches yourself is for code that already has records grouped by
partition (a bulk import, a replay of another log) and wants one future per batch
instead of one per record. A batch is bound for one partition and holds at most
``max_batch_size`` bytes; ``append()`` returns ``None`` when it is full.

Run it::

    python examples/batch_producer.py --bootstrap localhost:9092 --topic bulk --records 10000
"""

from __future__ import annotations

import argparse
import asyncio

from aiokafka import AIOKafkaProducer
from aiokafka.structs import RecordMetadata


async def produce_in_batches(bootstrap: str, topic: str, records: int) -> None:
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap, max_batch_size=64 * 1024, compression_type="gzip"
    ) as producer:
        partitions = sorted(await producer.partitions_for(topic))
        deliveries: list[asyncio.Future[RecordMetadata]] = []
        sent = 0
        batch = producer.create_batch()
        for i in range(records):
            key, value = f"key-{i}".encode(), f"record {i}".encode()
            if batch.append(key=key, value=value) is None:
                # Full: send it (round-robin over the partitions), start another.
                partition = partitions[len(deliveries) % len(partitions)]
                deliveries.append(await producer.send_batch(batch, topic, partition=partition))
                sent += batch.record_count()
                batch = producer.create_batch()
                batch.append(key=key, value=value)
        if batch.record_count():
            partition = partitions[len(deliveries) % len(partitions)]
            deliveries.append(await producer.send_batch(batch, topic, partition=partition))
            sent += batch.record_count()
        # Each future resolves to the metadata of its batch's first record.
        for metadata in await asyncio.gather(*deliveries):
            print(f"batch at {metadata.topic}[{metadata.partition}] offset {metadata.offset}")
        print(f"sent {sent} records in {len(deliveries)} batches")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--topic", default="bulk")
    parser.add_argument("--records", type=int, default=10000)
    args = parser.parse_args()
    asyncio.run(produce_in_batches(args.bootstrap, args.topic, args.records))


if __name__ == "__main__":
    main()
