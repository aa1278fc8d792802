"""A relay in front of one real broker that breaks the framing of its answers on demand.

A healthy broker never sends half a frame, a wrong correlation id, a negative or huge
length, garbage, or nothing at all; this relay turns the broker's real answers into
those, while :attr:`FramingFaultRelay.fault` is set, for every API but ApiVersions (so
a new connection's handshake still passes and the fault hits a real request)::

    async with FramingFaultRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        client = AIOKafkaClient(bootstrap_servers=relay.bootstrap_servers)
        await client.start()
        relay.fault = "wrong_correlation_id"
        ...
        relay.fault = None  # healthy again

Metadata answers are rewritten to advertise the relay instead of the broker, so the
client's later connections go through it too; hence a single broker only. Runs on the
caller's event loop; leaving the ``async with`` aborts every connection and awaits
every task it started.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import struct
from types import TracebackType

from aiokafka.protocol._gen import metadata as _md
from aiokafka.protocol.api import response_header_version
from aiokafka.protocol.messages import ApiVersionsRequest
from tests.support.kafka_frames import framed, pump_until_either_ends, read_frame

__all__ = ["FAULTS", "FramingFaultRelay"]

#: What :attr:`FramingFaultRelay.fault` may be, and what the client then receives.
FAULTS = {
    "truncated": "a well-framed answer cut to half its body",
    "close_mid_response": "the length and half the answer, then the connection closes",
    "wrong_correlation_id": "the answer with a correlation id no request has",
    "negative_length": "a length prefix of -1, then the answer",
    "huge_length": "a length prefix of 2,000,000,000, then the answer",
    "garbage": "text instead of a frame",
    "silence": "nothing (the request stays unanswered)",
}

_HEAD = struct.Struct(">hhi")  # api key, version, correlation id
_INT32 = struct.Struct(">i")
_GARBAGE = b"garbage, not a Kafka frame\r\n" * 4


class FramingFaultRelay:
    """Loopback relay to one broker whose answers can be broken.

    Args:
        target_host: The broker's host.
        target_port: The broker's port (PLAINTEXT listener).

    Attributes:
        fault: ``None`` (forward unchanged) or a key of :data:`FAULTS`.
        faulted: Answers broken so far.
    """

    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self.host = "127.0.0.1"
        self.port = 0
        self.fault: str | None = None
        self.faulted = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    async def __aenter__(self) -> FramingFaultRelay:
        self._server = await asyncio.start_server(self._accept, self.host, 0)
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
        for writer in list(self._writers):
            writer.transport.abort()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), 5)

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        up_writer: asyncio.StreamWriter | None = None
        order: collections.deque[tuple[int, int]] = collections.deque()  # api key, version
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(*self._target)
            except OSError:
                return
            self._writers.add(up_writer)
            await pump_until_either_ends(
                self._requests(reader, up_writer, order),
                self._responses(up_reader, writer, order),
            )
        finally:
            for w in (writer, up_writer):
                if w is not None:
                    self._writers.discard(w)
                    w.transport.abort()

    @staticmethod
    async def _requests(
        reader: asyncio.StreamReader,
        up: asyncio.StreamWriter,
        order: collections.deque[tuple[int, int]],
    ) -> None:
        while (frame := await read_frame(reader)) is not None:
            api_key, version, _corr = _HEAD.unpack_from(frame)
            order.append((api_key, version))
            up.write(framed(frame))
            await up.drain()

    async def _responses(
        self,
        up: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        order: collections.deque[tuple[int, int]],
    ) -> None:
        while (frame := await read_frame(up)) is not None:
            api_key, version = order.popleft()
            if api_key == _md.MetadataRequest.API_KEY:
                frame = self._advertise_self(frame, version)
            fault = self.fault
            if fault is None or api_key == ApiVersionsRequest.API_KEY:
                writer.write(framed(frame))
            else:
                self.faulted += 1
                if not self._write_fault(writer, fault, frame):
                    return  # the connection ends here
            await writer.drain()

    @staticmethod
    def _write_fault(writer: asyncio.StreamWriter, fault: str, frame: bytes) -> bool:
        """Write ``frame`` broken by ``fault``; False if the connection must close."""
        half = frame[: len(frame) // 2]
        if fault == "truncated":
            writer.write(framed(half))
        elif fault == "close_mid_response":
            writer.write(_INT32.pack(len(frame)) + half)
            return False
        elif fault == "wrong_correlation_id":
            (corr,) = _INT32.unpack_from(frame)
            writer.write(framed(_INT32.pack(corr + 1000) + frame[4:]))
        elif fault == "negative_length":
            writer.write(_INT32.pack(-1) + frame)
        elif fault == "huge_length":
            writer.write(_INT32.pack(2_000_000_000) + frame)
        elif fault == "garbage":
            writer.write(_GARBAGE)
        elif fault != "silence":
            raise ValueError(f"fault must be one of {sorted(FAULTS)}, got {fault!r}")
        return True

    def _advertise_self(self, frame: bytes, version: int) -> bytes:
        head = 4 + (1 if response_header_version(_md.MetadataRequest.API_KEY, version) else 0)
        response = _md.MetadataResponse.decode(frame[head:], version)
        if len(response.brokers) != 1:
            return frame  # one broker behind one relay only
        response.brokers[0].host = self.host
        response.brokers[0].port = self.port
        return frame[:head] + response.encode(version)
