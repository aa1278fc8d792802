"""A TCP proxy for fault injection between a client and a real broker.

The proxy forwards bytes both ways and can, at any time:

* ``cut()``: abort every open connection (both sides see a reset/EOF);
* ``stall()`` / ``resume()``: stop forwarding without closing anything, so requests
  sit unanswered (a hung broker or a black-holed network);
* ``delay_ms``: hold each forwarded chunk for that long (latency);
* ``refuse = True``: accept and immediately close new connections.

Example::

    async with FaultProxy("127.0.0.1", broker_port) as proxy:
        conn = await connect(proxy.host, proxy.port)
        proxy.cut()

Everything runs on the test's event loop; ``close()`` cancels and awaits every task it
started, so nothing outlives the test.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType

__all__ = ["FaultProxy"]

_CHUNK = 65536


class _Pair:
    """One proxied client connection and its upstream connection."""

    def __init__(self, client_writer: asyncio.StreamWriter) -> None:
        self.client_writer = client_writer
        self.upstream_writer: asyncio.StreamWriter | None = None
        self.tasks: list[asyncio.Task[None]] = []

    def abort(self) -> None:
        for writer in (self.client_writer, self.upstream_writer):
            if writer is not None:
                writer.transport.abort()


class FaultProxy:
    """Forwarding proxy to ``target_host:target_port`` with injectable faults.

    Args:
        target_host: Upstream host (the broker).
        target_port: Upstream port.
        listen_host: Address to listen on (loopback by default).
    """

    def __init__(self, target_host: str, target_port: int, listen_host: str = "127.0.0.1") -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.host = listen_host
        self.port = 0
        self.delay_ms = 0.0
        self.refuse = False
        self.connections_total = 0
        self._server: asyncio.Server | None = None
        self._pairs: set[_Pair] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()

    @property
    def address(self) -> str:
        """``"host:port"`` to give a client as a bootstrap server."""
        return f"{self.host}:{self.port}"

    @property
    def open_connections(self) -> int:
        """Number of client connections currently proxied."""
        return len(self._pairs)

    async def start(self) -> None:
        """Start listening on an ephemeral port (``self.port``)."""
        self._server = await asyncio.start_server(self._on_client, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def __aenter__(self) -> FaultProxy:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def cut(self) -> None:
        """Abort every open connection, both towards the client and the broker."""
        for pair in list(self._pairs):
            pair.abort()

    def stall(self) -> None:
        """Stop forwarding in both directions; connections stay open."""
        self._flowing.clear()

    def resume(self) -> None:
        """Forward again after :meth:`stall`."""
        self._flowing.set()

    async def close(self) -> None:
        """Stop listening, abort all connections and await every task."""
        if self._server is not None:
            self._server.close()
        self.cut()
        tasks = [t for pair in self._pairs for t in pair.tasks] + list(self._handlers)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        self._pairs.clear()

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.connections_total += 1
        pair = _Pair(writer)
        try:
            if self.refuse:
                writer.transport.abort()
                return
            try:
                up_reader, up_writer = await asyncio.open_connection(
                    self.target_host, self.target_port
                )
            except OSError:
                writer.transport.abort()
                return
            pair.upstream_writer = up_writer
            self._pairs.add(pair)
            pair.tasks = [
                asyncio.create_task(self._pump(reader, up_writer)),
                asyncio.create_task(self._pump(up_reader, writer)),
            ]
            # When one direction ends, the other is torn down too: a half-open
            # proxied connection would hide faults instead of injecting them.
            await asyncio.wait(pair.tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            pair.abort()
            for t in pair.tasks:
                t.cancel()
            await asyncio.gather(*pair.tasks, return_exceptions=True)
            self._pairs.discard(pair)
            self._handlers.discard(task)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    return
                await self._flowing.wait()
                if self.delay_ms:
                    await asyncio.sleep(self.delay_ms / 1000)
                    await self._flowing.wait()
                writer.write(data)
                await writer.drain()
