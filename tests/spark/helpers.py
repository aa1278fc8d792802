"""Kafka-side helpers of the Spark tests (our client, driven synchronously)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import TopicPartition


def produce(bootstrap: str, topic: str, values: list[bytes], partition: int = 0) -> None:
    """Send ``values`` to one partition and wait for the acknowledgements."""

    async def go() -> None:
        async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
            for value in values:
                await producer.send(topic, value, partition=partition)
            await producer.flush()

    asyncio.run(go())


def produce_transactions(
    bootstrap: str, topic: str, batches: list[tuple[list[bytes], bool]], txn_id: str
) -> None:
    """One transaction per ``(values, commit)``: committed, or aborted when False."""

    async def go() -> None:
        async with AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id) as p:
            for values, commit in batches:
                opened: Any = p.begin_transaction()
                if asyncio.iscoroutine(opened):
                    await opened
                for value in values:
                    await p.send(topic, value, partition=0)
                await p.flush()
                if commit:
                    await p.commit_transaction()
                else:
                    await p.abort_transaction()

    asyncio.run(go())


def consume_all(
    bootstrap: str, topic: str, isolation_level: str = "read_committed"
) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every (partition, key, value) of ``topic`` up to its current end offsets."""

    async def go() -> list[tuple[int, bytes | None, bytes | None]]:
        consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            isolation_level=isolation_level,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            tps = [TopicPartition(topic, p) for p in sorted(await _partitions(bootstrap, topic))]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            ends = await consumer.end_offsets(tps)
            out: list[tuple[int, bytes | None, bytes | None]] = []
            deadline = time.monotonic() + 60
            while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
                assert time.monotonic() < deadline, f"{topic} not read to its end in 60 s"
                got = await consumer.getmany(timeout_ms=500)
                for tp, records in got.items():
                    out.extend((tp.partition, r.key, r.value) for r in records)
            return out
        finally:
            await consumer.stop()

    return asyncio.run(go())


async def _partitions(bootstrap: str, topic: str) -> set[int]:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        (described,) = await admin.describe_topics([topic], raise_errors=True)
        return {p.partition for p in described.partitions}


def delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    """Move the log start of ``topic``-``partition`` to ``before``."""

    async def go() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.delete_records({TopicPartition(topic, partition): before})

    asyncio.run(go())


def add_partitions(bootstrap: str, topic: str, total: int) -> None:
    """Grow ``topic`` to ``total`` partitions."""

    async def go() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_partitions({topic: NewPartitions(total_count=total)})

    asyncio.run(go())
