"""A fake broker on loopback for bytes a real broker never sends.

It answers ApiVersions itself (so a connection's handshake passes), optionally a few
Metadata requests naming itself as node 0 (so a client can bootstrap), and hands every
other request to a coroutine the test supplies, which writes whatever it likes::

    async def huge(writer, api_key, version, correlation_id):
        writer.write((2_000_000_000).to_bytes(4, "big"))

    async with FakeBroker(huge, healthy_metadata=1) as broker:
        client = AIOKafkaClient(bootstrap_servers=broker.bootstrap_servers)

Runs on the test's event loop; leaving the ``async with`` cancels and awaits every task
it started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType

from aiokafka.protocol.api import response_header_version
from aiokafka.protocol.messages import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FetchRequest,
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
)

__all__ = ["Answer", "FakeBroker", "response_frame"]

#: API key, min and max version the fake broker advertises.
SUPPORTED = [
    (ApiVersionsRequest.API_KEY, 0, 3),
    (MetadataRequest.API_KEY, 0, 12),
    (FetchRequest.API_KEY, 4, 12),
]

#: ``answer(writer, api_key, version, correlation_id)``: writes the response bytes.
Answer = Callable[[asyncio.StreamWriter, int, int, int], Awaitable[None]]


def response_frame(api_key: int, version: int, correlation_id: int, body: bytes) -> bytes:
    """A whole response frame: size prefix, header of the right version, ``body``."""
    header = correlation_id.to_bytes(4, "big", signed=True)
    if response_header_version(api_key, version) >= 1:
        header += b"\x00"  # no tagged fields
    return (len(header) + len(body)).to_bytes(4, "big") + header + body


class FakeBroker:
    """Answers ApiVersions, then each request with ``answer`` (or a Metadata response
    naming itself as node 0 while ``healthy_metadata`` lasts).

    Attributes:
        connections: Connections accepted so far.
    """

    def __init__(self, answer: Answer, healthy_metadata: int = 0) -> None:
        self.answer = answer
        self.healthy_metadata = healthy_metadata
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def open_connections(self) -> int:
        """Connections accepted and not yet ended."""
        return len(self._writers)

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def __aenter__(self) -> FakeBroker:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        self.close_connections()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()

    def close_connections(self) -> None:
        """Abort every open connection (the clients see EOF)."""
        for writer in list(self._writers):
            writer.transport.abort()

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                size = int.from_bytes(await reader.readexactly(4), "big")
                data = await reader.readexactly(size)
                api_key = int.from_bytes(data[0:2], "big")
                version = int.from_bytes(data[2:4], "big")
                corr = int.from_bytes(data[4:8], "big", signed=True)
                if api_key == ApiVersionsRequest.API_KEY:
                    keys = [
                        ApiVersion(api_key=key, min_version=low, max_version=high)
                        for key, low, high in SUPPORTED
                    ]
                    body = ApiVersionsResponse(api_keys=keys).encode(version)
                    # ApiVersions answers always use header v0.
                    writer.write(response_frame(api_key, 0, corr, body))
                elif api_key == MetadataRequest.API_KEY and self.healthy_metadata > 0:
                    self.healthy_metadata -= 1
                    broker = MetadataResponseBroker(node_id=0, host="127.0.0.1", port=self.port)
                    body = MetadataResponse(brokers=[broker], cluster_id="fake").encode(version)
                    writer.write(response_frame(api_key, version, corr, body))
                else:
                    await self.answer(writer, api_key, version, corr)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._writers.discard(writer)
            writer.transport.abort()
