"""The sender's ``acks=0`` path: the Produce request goes out through
``send_without_response`` (never ``send()`` or ``write_nowait``), its records resolve
to ``None`` once it is written, and a failed write is handled as with ``acks=1``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError, UnsupportedVersionError
from aiokafka.producer.accumulator import RecordAccumulator
from aiokafka.producer.config import ProducerConfig
from aiokafka.producer.sender import Sender
from aiokafka.record import CODEC_NONE
from aiokafka.structs import TopicPartition

from ._producer_stub import StubClient

TP = TopicPartition("t", 0)


class Acks0Client(StubClient):
    """Takes unanswered Produce requests; ``fail`` makes the write fail."""

    def __init__(self, fail: Exception | None = None) -> None:
        super().__init__()
        self.fail = fail
        self.written: list[tuple[int, str]] = []

    async def send(self, node: int, request: Any, **kw: Any) -> Any:
        raise AssertionError("acks=0 must not wait for a response")

    def write_nowait(self, node: int, request: Any, on_answer: Any, **kw: Any) -> bool:
        raise AssertionError("acks=0 must not register a response callback")

    async def send_without_response(self, node: int, request: Any, **kw: Any) -> None:
        await asyncio.sleep(0)  # as a real write: the task yields once
        if self.fail is not None:
            raise self.fail
        self.written.append((node, type(request).__name__))


async def start(client: Acks0Client, records: int) -> tuple[list[Any], Sender]:
    config = ProducerConfig.from_kwargs(
        acks=0, retry_backoff_ms=1, request_timeout_ms=1000, delivery_timeout_ms=1000
    )
    sender: Sender
    acc = RecordAccumulator.from_config(
        config, linger_ms=0, codec=CODEC_NONE, wakeup=lambda: sender.wakeup()
    )
    sender = Sender(client, acc, config, None)
    futures = []
    for i in range(records):
        fut = acc.append(TP, None, None, str(i).encode(), None)
        assert fut is not None
        futures.append(fut)
    sender.start()
    return futures, sender


async def test_records_resolve_to_none_once_written() -> None:
    client = Acks0Client()
    futures, sender = await start(client, 3)
    try:
        assert await asyncio.wait_for(asyncio.gather(*futures), 5) == [None, None, None]
    finally:
        await sender.close(1, KafkaConnectionError("closed"))
    assert client.written == [(1, "ProduceRequest")]


async def test_failed_write_retries_then_fails_the_records() -> None:
    # A retriable error is retried (the same sequence, as with acks=1), here until
    # the delivery timeout; a non-retriable one fails the records at once.
    retried = Acks0Client(fail=KafkaConnectionError("reset"))
    futures, sender = await start(retried, 2)
    try:
        with pytest.raises(KafkaTimeoutError) as timed_out:
            await asyncio.wait_for(asyncio.gather(*futures), 5)
    finally:
        await sender.close(1, KafkaConnectionError("closed"))
    assert isinstance(timed_out.value.__cause__, KafkaConnectionError)

    failed = Acks0Client(fail=UnsupportedVersionError("no Produce"))
    futures, sender = await start(failed, 2)
    try:
        with pytest.raises(UnsupportedVersionError):
            await asyncio.wait_for(asyncio.gather(*futures), 5)
    finally:
        await sender.close(1, KafkaConnectionError("closed"))
    assert retried.written == failed.written == []
