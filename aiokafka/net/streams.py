"""The byte stream a connection reads and writes, and how one is opened.

:class:`~aiokafka.net.connection.AIOKafkaConnection` needs four things from its
transport (:class:`ByteStream`): read exactly *n* bytes, queue bytes, wait until the
queue drains, and drop the transport at once. It gets the stream from a
:class:`StreamFactory`, by default :func:`open_tcp_stream` (TCP, TLS when the config
asks for it). A test passes its own factory, as httpcore's connection takes a network
backend, so framing and failures can be driven byte by byte without a socket.

The default stream, :class:`TcpStream`, reads differently: it is the transport's
protocol and hands each whole response frame to the connection from the transport's
``data_received`` (:meth:`TcpStream.start_reading`), so no reader task is woken per
response. A :class:`ByteStream` is read by a task of the connection's.

A stream reports trouble with the exceptions asyncio's streams raise: end of stream
as :class:`asyncio.IncompleteReadError` (its ``partial`` holds what was read), socket
and TLS failures as :class:`OSError` / :class:`ssl.SSLError`. The connection
translates them at its one boundary (:mod:`aiokafka.net.transport_errors`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from ssl import SSLContext
from typing import Protocol, cast

__all__ = ["ByteStream", "StreamFactory", "TcpStream", "open_tcp_stream", "read_frames"]


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
    ) -> ByteStream | TcpStream: ...


#: Raises if a response announcing ``size`` bytes (its length prefix ``prefix``) must
#: not be read: checked before its body is buffered.
CheckFrameSize = Callable[[int, bytes], None]
#: Takes a whole response frame, without its length prefix.
OnFrame = Callable[[memoryview], None]
#: Told once why reading stopped: :class:`asyncio.IncompleteReadError` at the end of
#: the stream, a transport error, or what the two callbacks above raised.
OnReadEnd = Callable[[BaseException], None]


#: Bytes of a :class:`TcpStream`'s receive buffer (a larger frame gets its own).
READ_BUFFER = 65536


class TcpStream(asyncio.BufferedProtocol):
    """A TCP (or TLS) transport that hands whole response frames to the connection as
    they arrive (:meth:`start_reading`), with :class:`ByteStream`'s ``write``,
    ``drain`` and ``abort``.

    The frames are split in the transport's ``buffer_updated`` callback: a response
    reaches the connection in the loop turn its bytes were read in, with no reader
    task to wake (one loop turn, a task step and two ``readexactly`` calls less per
    response than with an :class:`asyncio.StreamReader`). The socket is read into one
    reused buffer (no allocation per read); a frame is copied out of it, except one
    larger than what the buffer holds, which gets a buffer of its announced size that
    the socket is read into directly.
    """

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._on_frame: OnFrame | None = None  # set while reading
        self._check_size: CheckFrameSize = _no_check
        self._on_end: OnReadEnd = _ignore_end
        self._buf = bytearray(READ_BUFFER)
        self._view = memoryview(self._buf)
        self._start = 0  # the unparsed bytes are _buf[_start:_end]
        self._end = 0
        self._body: bytearray | None = None  # a frame read into a buffer of its own
        self._filled = 0
        self._lost = False
        self._end_error: BaseException | None = None  # reading ended before start_reading()
        self._paused = False
        self._drain_waiters: list[asyncio.Future[None]] = []

    # -- asyncio.BufferedProtocol -------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A cast, not an isinstance check: uvloop's transports have the methods of
        # asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)

    def get_buffer(self, sizehint: int) -> memoryview:
        body = self._body
        if body is not None:
            return memoryview(body)[self._filled :]
        if self._start == self._end:
            self._start = self._end = 0
        elif self._end == len(self._buf):
            if self._start:  # move the start of a frame's length prefix to the front
                kept = self._end - self._start
                self._buf[:kept] = self._buf[self._start : self._end]
                self._start, self._end = 0, kept
            else:  # only before start_reading(): keep what arrives
                grown = bytearray(2 * len(self._buf))
                grown[: self._end] = self._buf
                self._buf, self._view = grown, memoryview(grown)
        return self._view[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        on_frame = self._on_frame
        try:
            body = self._body
            if body is not None:
                self._filled += nbytes
                if self._filled < len(body) or on_frame is None:
                    return
                self._body = None
                on_frame(memoryview(body))
            else:
                self._end += nbytes
            if on_frame is not None:
                self._split(on_frame)
        except BaseException as exc:
            self._stop_reading(exc)
            if isinstance(exc, (SystemExit, KeyboardInterrupt)):
                raise

    def eof_received(self) -> bool:
        return False  # the transport closes itself; connection_lost() reports it

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_exception(ConnectionResetError("Connection lost"))
        end: BaseException
        if exc is not None:
            end = exc
        else:  # end of stream: what asyncio's readexactly() raises there
            body = self._body
            if body is not None:
                end = asyncio.IncompleteReadError(bytes(body[: self._filled]), len(body))
            else:
                end = asyncio.IncompleteReadError(bytes(self._buf[self._start : self._end]), 4)
        if self._on_frame is None:
            self._end_error = end  # for a start_reading() still to come
        else:
            self._stop_reading(end)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # -- the stream ---------------------------------------------------------------------

    def start_reading(
        self, on_frame: OnFrame, on_end: OnReadEnd, check_size: CheckFrameSize
    ) -> None:
        """Hand frames to ``on_frame`` from now on (what arrived before, first), each
        length prefix checked by ``check_size`` first; ``on_end`` is told once why
        reading stopped, and nothing is handed on after that (nor after
        :meth:`abort`)."""
        self._on_frame = on_frame
        self._on_end = on_end
        self._check_size = check_size
        if self._end > self._start:
            self.buffer_updated(0)
        end, self._end_error = self._end_error, None
        if end is not None and self._on_frame is on_frame:
            self._stop_reading(end)

    def write(self, data: bytes) -> None:
        """Queue ``data`` on the transport (see :meth:`ByteStream.write`)."""
        assert self._transport is not None
        self._transport.write(data)

    async def drain(self) -> None:
        """Wait while the transport's buffer is above its high-water mark."""
        if self._lost:
            raise ConnectionResetError("Connection lost")
        assert self._transport is not None
        if self._transport.is_closing():
            # As StreamWriter.drain: let connection_lost() run and say why.
            await asyncio.sleep(0)
            if self._lost:
                raise ConnectionResetError("Connection lost")
        if not self._paused:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._drain_waiters.append(waiter)
        await waiter

    def abort(self) -> None:
        """Close the transport now; nothing is delivered any more (idempotent)."""
        self._on_frame = None
        self._end_error = None
        self._body = None
        if self._transport is not None:
            self._transport.abort()

    # -- framing ------------------------------------------------------------------------

    def _stop_reading(self, exc: BaseException) -> None:
        reading, self._on_frame = self._on_frame, None
        self._body = None
        if reading is not None:
            self._on_end(exc)

    def _split(self, on_frame: OnFrame) -> None:
        """Hand every whole frame in the buffer on; a frame that is not whole yet
        gets its own buffer if it needs more room than the buffer has left."""
        buf = self._buf
        check_size = self._check_size
        pos, end = self._start, self._end
        while end - pos >= 4:
            if self._on_frame is not on_frame:
                return  # the connection failed meanwhile: nothing more is read
            prefix = bytes(buf[pos : pos + 4])
            size = int.from_bytes(prefix, "big", signed=True)
            check_size(size, prefix)
            start = pos + 4
            if start + size > end:
                # Not all here: read the rest into the frame's own buffer, unless it
                # fits in what is left of this one.
                if start + size > len(buf):
                    body = self._body = bytearray(size)
                    self._filled = end - start
                    body[: self._filled] = buf[start:end]
                    pos = end
                break
            pos = start + size
            self._start = pos
            on_frame(memoryview(bytes(buf[start:pos])))
        self._start = pos


async def read_frames(
    reader: ByteStream,
    check_size: Callable[[int, bytes], None],
    on_frame: Callable[[memoryview], None],
) -> None:
    """Read size-prefixed frames from ``reader`` until it fails, as :class:`TcpStream`
    hands them over: ``check_size(size, prefix)`` before a body is read (it raises to
    refuse one; ``readexactly`` would buffer all of it), then ``on_frame(body)``.

    Raises:
        Exception: what ``reader``, ``check_size`` or ``on_frame`` raised (at the end
            of the stream ``asyncio.IncompleteReadError``).
    """
    while True:
        size_bytes = await reader.readexactly(4)
        size = int.from_bytes(size_bytes, "big", signed=True)
        check_size(size, size_bytes)
        frame = await reader.readexactly(size)
        on_frame(memoryview(frame))
        del frame


def _no_check(size: int, prefix: bytes) -> None:
    pass


def _ignore_end(exc: BaseException) -> None:
    pass


async def open_tcp_stream(
    host: str,
    port: int,
    *,
    ssl: SSLContext | None = None,
    server_hostname: str | None = None,
) -> TcpStream:
    """Open a TCP connection (TLS with ``ssl``) as a :class:`TcpStream`.

    The default :class:`StreamFactory`.
    """
    loop = asyncio.get_running_loop()
    _, stream = await loop.create_connection(
        TcpStream, host, port, ssl=ssl, server_hostname=server_hostname
    )
    return stream
