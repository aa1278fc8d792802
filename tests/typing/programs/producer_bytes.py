"""A producer without serializers: send() takes bytes."""

from typing_extensions import assert_type

from aiokafka import AIOKafkaProducer
from aiokafka.structs import RecordMetadata


async def main() -> None:
    producer = AIOKafkaProducer(bootstrap_servers="localhost:9092", linger_ms=5)
    assert_type(producer, AIOKafkaProducer[bytes, bytes])
    await producer.start()
    try:
        future = await producer.send("events", b"value", key=b"key")
        metadata = await future
        assert_type(metadata, RecordMetadata)
        print(metadata.offset, metadata.partition)
        await producer.send_and_wait("events", value=b"other")
    finally:
        await producer.stop()
