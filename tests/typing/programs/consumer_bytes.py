"""A consumer without deserializers: records hold bytes."""

from typing_extensions import assert_type

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition


async def main() -> None:
    consumer = AIOKafkaConsumer("events", bootstrap_servers="localhost:9092", group_id="g")
    await consumer.start()
    try:
        async for msg in consumer:
            assert_type(msg, ConsumerRecord[bytes, bytes])
            assert_type(msg.value, bytes | None)
            print(msg.topic, msg.offset, msg.key)
            break
        batches = await consumer.getmany(timeout_ms=1000)
        for tp, records in batches.items():
            assert_type(tp, TopicPartition)
            for record in records:
                assert_type(record.key, bytes | None)
        await consumer.commit()
    finally:
        await consumer.stop()
