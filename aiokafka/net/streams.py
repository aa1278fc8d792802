"""The byte stream a connection reads and writes, and how one is opened.

:class:`~aiokafka.net.connection.AIOKafkaConnection` needs four things from its
transport (:class:`ByteStream`): read exactly *n* bytes, queue bytes, wait until the
queue drains, and drop the transport at once. It gets the stream from a
:class:`StreamFactory`, by default :func:`open_tcp_stream` (``asyncio.open_connection``,
TLS when the config asks for it). A test passes its own factory, as httpcore's
connection takes a network backend, so framing and failures can be driven byte by
byte without a socket.

A stream reports trouble with the exceptions asyncio's streams raise: end of stream
as :class:`asyncio.IncompleteReadError` (its ``partial`` holds what was read), socket
and TLS failures as :class:`OSError` / :class:`ssl.SSLError`. The connection
translates them at its one boundary (:mod:`aiokafka.net.transport_errors`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from ssl import SSLContext
from typing import Any, Protocol

__all__ = ["AsyncioStream", "ByteStream", "StreamFactory", "open_tcp_stream"]


class ByteStream(Protocol):
    """What a connection needs from an open transport."""

    async def readexactly(self, n: int) -> bytes:
        """Return exactly ``n`` bytes; raise :class:`asyncio.IncompleteReadError` if
        the stream ends first."""
        ...

    def write(self, data: bytes) -> None:
        """Queue ``data`` for sending (does not block)."""
        ...

    async def drain(self) -> None:
        """Wait until the queued bytes are below the transport's high-water mark."""
        ...

    def abort(self) -> None:
        """Close the transport now, dropping unsent bytes; idempotent."""
        ...


class StreamFactory(Protocol):
    """Opens a :class:`ByteStream` to ``host:port``.

    ``ssl`` is the TLS context to wrap the socket in (``None`` for plain TCP) and
    ``server_hostname`` the name to check the certificate against.
    """

    async def __call__(
        self,
        host: str,
        port: int,
        *,
        ssl: SSLContext | None,
        server_hostname: str | None,
    ) -> ByteStream: ...


class AsyncioStream:
    """An :class:`asyncio.StreamReader` / :class:`asyncio.StreamWriter` pair as a
    :class:`ByteStream`.

    The reader's and writer's bound methods are the stream's methods (no wrapper
    call on the hot path: two reads per response, a write and a drain per request).
    """

    __slots__ = ("_transport", "drain", "readexactly", "write")

    readexactly: Callable[[int], Coroutine[Any, Any, bytes]]
    write: Callable[[bytes], None]
    drain: Callable[[], Coroutine[Any, Any, None]]

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.readexactly = reader.readexactly
        self.write = writer.write
        self.drain = writer.drain
        self._transport = writer.transport

    def abort(self) -> None:
        """Abort the transport (see :meth:`ByteStream.abort`)."""
        self._transport.abort()


async def open_tcp_stream(
    host: str,
    port: int,
    *,
    ssl: SSLContext | None = None,
    server_hostname: str | None = None,
) -> ByteStream:
    """Open a TCP connection (TLS with ``ssl``) with :func:`asyncio.open_connection`.

    The default :class:`StreamFactory`.
    """
    reader, writer = await asyncio.open_connection(
        host, port, ssl=ssl, server_hostname=server_hostname
    )
    return AsyncioStream(reader, writer)
