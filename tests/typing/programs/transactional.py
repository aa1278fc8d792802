"""A consume-transform-produce loop with transactions."""

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition


async def main() -> None:
    consumer = AIOKafkaConsumer(
        "in",
        bootstrap_servers="localhost:9092",
        group_id="copier",
        enable_auto_commit=False,
        isolation_level="read_committed",
    )
    producer = AIOKafkaProducer(bootstrap_servers="localhost:9092", transactional_id="copier-1")
    await consumer.start()
    await producer.start()
    try:
        while True:
            batches = await consumer.getmany(timeout_ms=1000)
            if not batches:
                continue
            async with producer.transaction():
                offsets: dict[TopicPartition, int] = {}
                for tp, records in batches.items():
                    for record in records:
                        await producer.send("out", record.value, key=record.key)
                    offsets[tp] = records[-1].offset + 1
                await producer.send_offsets_to_transaction(offsets, "copier")
    finally:
        await producer.stop()
        await consumer.stop()
