"""``async with`` on every client: start() on entry, stop()/close() on exit, the
exception never suppressed (aiokafka 0.14's semantics)."""

from __future__ import annotations

import pytest

from aiokafka import AIOKafkaAdminClient, AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.cluster import AIOKafkaClient
from aiokafka.options import StartClose, StartStop
from aiokafka.share.consumer import AIOKafkaShareConsumer


class _Stops(StartStop):
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def start(self) -> None:
        self.calls.append("start")

    async def stop(self) -> None:
        self.calls.append("stop")


class _Closes(StartClose):
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def start(self) -> None:
        self.calls.append("start")

    async def close(self) -> None:
        self.calls.append("close")


async def test_start_stop() -> None:
    client = _Stops()
    async with client as entered:
        assert entered is client
        assert client.calls == ["start"]
    assert client.calls == ["start", "stop"]


async def test_start_close_does_not_suppress() -> None:
    client = _Closes()
    with pytest.raises(KeyError):
        async with client:
            raise KeyError("x")
    assert client.calls == ["start", "close"]


@pytest.mark.parametrize(
    ("cls", "mixin"),
    [
        (AIOKafkaProducer, StartStop),
        (AIOKafkaConsumer, StartStop),
        (AIOKafkaShareConsumer, StartStop),
        (AIOKafkaAdminClient, StartClose),
        (AIOKafkaClient, StartClose),
    ],
)
def test_clients_use_the_mixin(cls: type, mixin: type) -> None:
    assert issubclass(cls, mixin)
    assert "__aenter__" not in vars(cls) and "__aexit__" not in vars(cls)
