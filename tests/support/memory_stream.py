"""An in-memory :class:`aiokafka.net.streams.ByteStream` for connection unit tests.

Passed to :class:`~aiokafka.net.connection.AIOKafkaConnection` as its
``stream_factory`` (``stream.open``), it stands where the socket would: every request
the connection writes is parsed and queued for the test (:meth:`MemoryStream.request`),
and the bytes the test feeds (:meth:`MemoryStream.feed`) are what the connection
reads, split wherever the test likes. ApiVersions is answered by the stream itself
unless told otherwise, so ``connect()`` works without a script.

Only for bytes and failures a real broker cannot produce on demand (a response split
at every byte, a peer gone mid-frame, a write that fails).
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass

from aiokafka.protocol.api import response_header_version
from aiokafka.protocol.messages import ApiVersion, ApiVersionsRequest, ApiVersionsResponse

API_VERSIONS = ApiVersionsRequest.API_KEY

#: ApiVersions and Metadata, what the connection tests send.
DEFAULT_RANGES = {API_VERSIONS: (0, 4), 3: (0, 12)}


@dataclass(frozen=True)
class Request:
    """A request the connection wrote: its header, and its bytes without the size."""

    api_key: int
    version: int
    corr: int
    payload: bytes


def response_frame(api_key: int, version: int, corr: int, body: bytes) -> bytes:
    """A whole response frame (size, header for ``api_key``/``version``, body)."""
    header = corr.to_bytes(4, "big", signed=True)
    if response_header_version(api_key, version) == 1:
        header += b"\x00"  # no tagged fields
    payload = header + body
    return len(payload).to_bytes(4, "big") + payload


class MemoryStream:
    """One connection's stream, scripted by the test.

    Args:
        ranges: The API version ranges the automatic ApiVersions answer lists.
        answer_api_versions: False to queue ApiVersions like any other request.
    """

    def __init__(
        self,
        ranges: dict[int, tuple[int, int]] | None = None,
        *,
        answer_api_versions: bool = True,
    ) -> None:
        self.ranges = dict(DEFAULT_RANGES if ranges is None else ranges)
        self.answer_api_versions = answer_api_versions
        #: ``(host, port, ssl, server_hostname)`` of each :meth:`open`.
        self.opened: list[tuple[str, int, ssl.SSLContext | None, str | None]] = []
        #: Raised by the next :meth:`write` (then cleared), to fail a write.
        self.write_error: BaseException | None = None
        self.aborted = False
        #: The peer closed its side (:meth:`close_by_peer`): it answers nothing more.
        self.peer_closed = False
        self._inbound = asyncio.StreamReader()
        self._outbound = bytearray()
        self._requests: asyncio.Queue[Request] = asyncio.Queue()

    # -- the StreamFactory ------------------------------------------------------------

    async def open(
        self, host: str, port: int, *, ssl: ssl.SSLContext | None, server_hostname: str | None
    ) -> MemoryStream:
        """A :class:`~aiokafka.net.streams.StreamFactory` that returns this stream."""
        self.opened.append((host, port, ssl, server_hostname))
        return self

    # -- the ByteStream the connection uses -------------------------------------------

    async def readexactly(self, n: int) -> bytes:
        return await self._inbound.readexactly(n)

    def write(self, data: bytes) -> None:
        error, self.write_error = self.write_error, None
        if error is not None:
            raise error
        self._outbound += data
        while len(self._outbound) >= 4:
            size = int.from_bytes(self._outbound[:4], "big")
            if len(self._outbound) < 4 + size:
                break
            payload = bytes(self._outbound[4 : 4 + size])
            del self._outbound[: 4 + size]
            self._received(payload)

    async def drain(self) -> None:
        return None

    def abort(self) -> None:
        if not self.aborted:
            self.aborted = True
            self.close_by_peer()

    # -- the test's side --------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Bytes the connection will read, as if the broker sent them."""
        self._inbound.feed_data(data)

    def close_by_peer(self) -> None:
        """End of stream, as when the broker closes its side."""
        if not self.peer_closed:
            self.peer_closed = True
            self._inbound.feed_eof()

    async def request(self, timeout: float = 5.0) -> Request:
        """The next request the connection wrote (ApiVersions excluded when the
        stream answers it)."""
        return await asyncio.wait_for(self._requests.get(), timeout)

    def _received(self, payload: bytes) -> None:
        request = Request(
            int.from_bytes(payload[0:2], "big"),
            int.from_bytes(payload[2:4], "big"),
            int.from_bytes(payload[4:8], "big", signed=True),
            payload,
        )
        if self.peer_closed:
            return  # written into the void: nobody reads it
        if request.api_key == API_VERSIONS and self.answer_api_versions:
            keys = [
                ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in self.ranges.items()
            ]
            body = ApiVersionsResponse(error_code=0, api_keys=keys).encode(request.version)
            self.feed(response_frame(API_VERSIONS, request.version, request.corr, body))
            return
        self._requests.put_nowait(request)
