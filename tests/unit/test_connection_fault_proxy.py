"""The fault proxy used by integration/chaos tests, checked against an echo server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from tests.support.fault_proxy import FaultProxy


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[FaultProxy]:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with FaultProxy("127.0.0.1", port) as p:
        yield p
    server.close()
    await server.wait_closed()


async def _roundtrip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
    writer.write(b"ping")
    await writer.drain()
    return await asyncio.wait_for(reader.readexactly(4), 2)


async def test_forwards(proxy: FaultProxy) -> None:
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    assert await _roundtrip(reader, writer) == b"ping"
    assert proxy.connections_total == 1
    writer.close()
    await writer.wait_closed()


async def test_cut_closes_connections(proxy: FaultProxy) -> None:
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    await _roundtrip(reader, writer)
    proxy.cut()
    with pytest.raises((asyncio.IncompleteReadError, ConnectionError)):
        await asyncio.wait_for(reader.readexactly(1), 2)
    writer.close()
    # A new connection works after a cut.
    reader2, writer2 = await asyncio.open_connection(proxy.host, proxy.port)
    assert await _roundtrip(reader2, writer2) == b"ping"
    writer2.close()
    await writer2.wait_closed()


async def test_stall_and_resume(proxy: FaultProxy) -> None:
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    proxy.stall()
    writer.write(b"ping")
    await writer.drain()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(reader.readexactly(4), 0.3)
    assert proxy.open_connections == 1  # stalled, not closed
    proxy.resume()
    assert await asyncio.wait_for(reader.readexactly(4), 2) == b"ping"
    writer.close()
    await writer.wait_closed()


async def test_delay(proxy: FaultProxy) -> None:
    proxy.delay_ms = 150
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    start = time.monotonic()
    await _roundtrip(reader, writer)
    # Delayed once each way.
    assert time.monotonic() - start >= 0.29
    writer.close()
    await writer.wait_closed()


async def test_refuse(proxy: FaultProxy) -> None:
    proxy.refuse = True
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    with pytest.raises((asyncio.IncompleteReadError, ConnectionError)):
        await _roundtrip(reader, writer)
    writer.close()
