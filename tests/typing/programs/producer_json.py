"""A producer with serializers: send() takes what they take."""

import json
from typing import Any

from typing_extensions import assert_type

from aiokafka import AIOKafkaProducer


def to_json(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode()


async def main() -> None:
    async with AIOKafkaProducer(
        bootstrap_servers=["localhost:9092"],
        key_serializer=str.encode,
        value_serializer=to_json,
        acks="all",
        compression_type="gzip",
    ) as producer:
        assert_type(producer, AIOKafkaProducer[str, dict[str, Any]])
        await producer.send_and_wait("events", {"n": 1}, key="user-1")
