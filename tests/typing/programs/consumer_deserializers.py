"""Deserializers set the records' key and value types."""

import json
from typing import Any

from typing_extensions import assert_type

from aiokafka import AIOKafkaConsumer, ConsumerRecord


def key_text(raw: bytes) -> str:
    return raw.decode()


async def main() -> None:
    consumer = AIOKafkaConsumer(
        "events",
        bootstrap_servers="localhost:9092",
        value_deserializer=json.loads,
        auto_offset_reset="earliest",
    )
    assert_type(consumer, AIOKafkaConsumer[bytes, Any])
    async with AIOKafkaConsumer(
        "events", key_deserializer=key_text, value_deserializer=json.loads
    ) as typed:
        msg = await typed.getone()
        assert_type(msg, ConsumerRecord[str, Any])
        assert_type(msg.key, str | None)
        print(msg.value["field"] if msg.value else None)
