"""The response frame-size limit, and memory that stays bounded when a peer abuses it.

A real broker never announces a 2 GB frame and then streams bytes, and is never an
HTTP server; these need a fake peer on loopback. The limit's option is checked in
every client's config.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.cluster import AIOKafkaClient, ClientConfig
from aiokafka.errors import KafkaConnectionError, KafkaProtocolError
from aiokafka.net.config import ConnectionConfig, InvalidOptionError
from aiokafka.net.connection import AIOKafkaConnection
from aiokafka.net.frames import (
    DEFAULT_MAX_RESPONSE_SIZE,
    frame_size_error,
    response_allowance,
)
from aiokafka.protocol.messages import (
    FetchRequest,
    FetchRequestFetchPartition,
    FetchRequestFetchTopic,
    MetadataRequest,
)
from tests.support.fake_broker import FakeBroker

MiB = 1024 * 1024
HUGE = 2_000_000_000


# -- the pure parts -----------------------------------------------------------------


def test_frame_size_error_names_broker_size_limit_and_asks() -> None:
    err = frame_size_error(HUGE, DEFAULT_MAX_RESPONSE_SIZE, "10.0.0.1:9092 (node 3)", b"w5\x94\x00")
    assert isinstance(err, KafkaProtocolError) and err.retriable
    text = str(err)
    assert "10.0.0.1:9092 (node 3)" in text
    assert str(HUGE) in text and str(DEFAULT_MAX_RESPONSE_SIZE) in text
    assert "max_response_size" in text and "Kafka broker" in text
    http = frame_size_error(int.from_bytes(b"HTTP", "big"), 100, "h:80", b"HTTP")
    assert "'HTTP'" in str(http)
    negative = frame_size_error(-1, 100, "h:1", b"\xff\xff\xff\xff")
    assert "invalid response frame size -1" in str(negative) and "Kafka broker" in str(negative)


def fetch_request(max_bytes: int, partition_bytes: list[int]) -> FetchRequest:
    parts = [
        FetchRequestFetchPartition(partition=i, partition_max_bytes=size)
        for i, size in enumerate(partition_bytes)
    ]
    topic = FetchRequestFetchTopic(topic="t", partitions=parts)
    return FetchRequest(max_bytes=max_bytes, topics=[topic])


def test_fetch_allowance_follows_max_bytes_with_headroom() -> None:
    assert response_allowance(MetadataRequest(topics=None), 12) == 0
    big = fetch_request(300 * MiB, [MiB])
    assert 300 * MiB < response_allowance(big, 12) < 400 * MiB
    # v0-v2 have no max_bytes: the partitions' limits add up.
    assert 3 * MiB < response_allowance(fetch_request(2**31 - 1, [MiB] * 3), 2) < 5 * MiB
    assert response_allowance(fetch_request(2**31 - 1, [MiB]), 12) == 2**31 - 1


def test_max_response_size_option_is_validated_and_reaches_connections() -> None:
    assert ClientConfig().connection.max_response_size == DEFAULT_MAX_RESPONSE_SIZE
    assert ClientConfig(max_response_size=5 * MiB).connection.max_response_size == 5 * MiB
    with pytest.raises(ValueError, match="max_response_size"):
        ClientConfig(max_response_size=1000)
    with pytest.raises(ValueError, match="max_response_size"):
        ClientConfig(max_response_size=2**31)
    with pytest.raises(InvalidOptionError, match="max_response_size"):
        ConnectionConfig(max_response_size="100")  # type: ignore[arg-type]
    # Every client takes it as a keyword.
    producer = AIOKafkaProducer(max_response_size=7 * MiB)
    assert producer.config.client.connection.max_response_size == 7 * MiB
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(max_response_size=8 * MiB)
    assert consumer.config.client.connection.max_response_size == 8 * MiB
    admin = AIOKafkaAdminClient(max_response_size=9 * MiB)
    assert admin.config.connection.max_response_size == 9 * MiB


# -- a fake broker that announces 2 GB and streams -------------------------------


class HugeFrames:
    """Answers with a 2,000,000,000-byte length prefix, then bytes as fast as the
    client reads them (at most 64 MiB per connection, in case the client does buffer
    them: enough to show, not enough to hurt the machine)."""

    def __init__(self) -> None:
        self.streamed = 0

    async def __call__(
        self, writer: asyncio.StreamWriter, api_key: int, version: int, corr: int
    ) -> None:
        writer.write(HUGE.to_bytes(4, "big"))
        chunk = b"\x00" * MiB
        for _ in range(64):
            writer.write(chunk)
            await writer.drain()
            self.streamed += len(chunk)


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


# -- connections against it ---------------------------------------------------------


async def test_huge_length_prefix_fails_fast_with_typed_error_and_frees_streams() -> None:
    huge = HugeFrames()
    async with FakeBroker(huge) as broker:
        conn = AIOKafkaConnection("127.0.0.1", broker.port, ConnectionConfig(), node_id=4)
        await conn.connect()
        start = time.monotonic()
        with pytest.raises(KafkaProtocolError) as info:
            await conn.send(MetadataRequest(topics=None))
        assert time.monotonic() - start < 5
        text = str(info.value)
        assert f"127.0.0.1:{broker.port} (node 4)" in text
        assert str(HUGE) in text and str(DEFAULT_MAX_RESPONSE_SIZE) in text
        assert "is 127.0.0.1" in text and "a Kafka broker" in text
        assert conn.closed and conn.close_error is info.value
        await conn.close()
    # Failed on the prefix: the fake broker got to stream little before the abort.
    assert huge.streamed < 16 * MiB


async def test_negative_length_prefix_is_rejected() -> None:
    async def negative(writer: asyncio.StreamWriter, *_: int) -> None:
        writer.write((-5).to_bytes(4, "big", signed=True))

    async with FakeBroker(negative) as broker:
        conn = AIOKafkaConnection("127.0.0.1", broker.port, ConnectionConfig(), node_id=1)
        await conn.connect()
        with pytest.raises(KafkaProtocolError, match="invalid response frame size -5"):
            await conn.send(MetadataRequest(topics=None))
        await conn.close()


async def test_fetch_raises_the_connection_limit_to_its_max_bytes() -> None:
    received = asyncio.Event()

    async def silent(*_: object) -> None:
        received.set()

    async with FakeBroker(silent) as broker:
        config = ConnectionConfig(max_response_size=2 * MiB)
        conn = AIOKafkaConnection("127.0.0.1", broker.port, config, node_id=1)
        await conn.connect()
        assert conn.frame_limit == 2 * MiB
        send = asyncio.create_task(conn.send(fetch_request(300 * MiB, [MiB])))
        await asyncio.wait_for(received.wait(), 10)
        assert conn.frame_limit > 300 * MiB
        await conn.close()
        with pytest.raises(KafkaConnectionError):
            await send


async def test_http_server_gives_the_typed_error_quickly() -> None:
    async def http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            await reader.read(100)
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            await reader.read()  # keep the socket open, as a keep-alive server would
        writer.transport.abort()

    server = await asyncio.start_server(http, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        conn = AIOKafkaConnection("127.0.0.1", port, ConnectionConfig(request_timeout_ms=30000))
        start = time.monotonic()
        with pytest.raises(KafkaProtocolError, match=r"'HTTP'.*a Kafka broker"):
            await conn.connect()
        assert time.monotonic() - start < 5
        # Through a client: bootstrap reports it, with the hint, at once.
        client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=30000)
        start = time.monotonic()
        with pytest.raises(KafkaConnectionError, match="a Kafka broker"):
            await client.start()
        assert time.monotonic() - start < 5
    finally:
        server.close()
        await server.wait_closed()


async def test_memory_stays_bounded_over_20_retries_against_a_huge_frame() -> None:
    async with FakeBroker(HugeFrames(), healthy_metadata=1) as broker:
        client = AIOKafkaClient(
            bootstrap_servers=f"127.0.0.1:{broker.port}",
            request_timeout_ms=5000,
            reconnect_backoff_ms=0,
            reconnect_backoff_max_ms=0,
        )
        await client.start()  # bootstrap gets the one healthy Metadata answer
        try:
            with pytest.raises(KafkaProtocolError):  # warm up: connection to node 0
                await client.send(0, MetadataRequest(topics=None))
            before = rss_bytes()
            connections = broker.connections
            start = time.monotonic()
            for _ in range(20):
                with pytest.raises(KafkaProtocolError, match="exceeds the limit"):
                    await client.send(0, MetadataRequest(topics=None))
            elapsed = time.monotonic() - start
            grown = rss_bytes() - before
        finally:
            await client.close()
        assert broker.connections - connections == 20  # a new connection per retry
        assert grown < 100 * MiB, f"RSS grew by {grown / MiB:.0f} MiB over 20 retries"
        # Nothing waited for the frame: each retry failed on the length prefix.
        assert elapsed < 20


async def test_close_while_the_socket_opens_leaves_nothing_open() -> None:
    # close() drops the streams it finds; one that opens after it must not survive.
    async def unused(*_: object) -> None:
        raise AssertionError("no request expected")

    async with FakeBroker(unused) as broker:
        conn = AIOKafkaConnection("127.0.0.1", broker.port, ConnectionConfig())
        connecting = asyncio.create_task(conn.connect())
        await asyncio.sleep(0)  # connect() is now inside open_connection()
        await asyncio.wait_for(conn.close(), 5)
        with pytest.raises(KafkaConnectionError):
            await asyncio.wait_for(connecting, 5)
        assert conn.closed
        # The fake broker sees the connection end (its serving task finishes).
        for _ in range(100):
            if broker.open_connections == 0:
                break
            await asyncio.sleep(0.05)
        assert broker.open_connections == 0
