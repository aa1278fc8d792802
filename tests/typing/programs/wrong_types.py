"""Mistakes mypy must report (this program is expected to fail the check)."""

import json

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


async def main() -> None:
    producer = AIOKafkaProducer(bootstrap_servers="localhost:9092")
    await producer.send("events", "text, not bytes")
    AIOKafkaConsumer("events", lingerms=5)
    consumer = AIOKafkaConsumer("events", value_deserializer=json.loads)
    msg = await consumer.getone()
    length: str = len(msg.topic)
    print(length)
