"""A relay in front of one real broker that answers chosen requests itself, with an error.

librdkafka's mock cluster injects request errors, but it does not implement every API
(CreateTopics, for one). This relay gives the same on the real broker: the next
``count`` requests of an API are not forwarded; the relay answers them with the error
the broker would send when it cannot serve them (e.g. NOT_CONTROLLER), and lets every
other request through unchanged::

    async with InjectingRelay(kafka.nodes[0].host, kafka.nodes[0].ports["PLAINTEXT"]) as relay:
        relay.fail_next(CreateTopicsRequest.API_KEY, NOT_CONTROLLER, count=2)
        admin = AIOKafkaAdminClient(bootstrap_servers=relay.bootstrap_servers)

It can also rewrite the broker's answers of an API in flight
(:meth:`InjectingRelay.rewrite_responses`), for bytes a healthy broker never sends.

Metadata answers are rewritten to advertise the relay instead of the broker, so the
client's later connections go through it too; hence a single broker only. Answers
keep the order of their requests on each connection, as a broker's do. Runs on the
caller's event loop; :meth:`close` cancels and awaits every task it started.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import struct
from collections.abc import Callable
from types import TracebackType
from typing import TypeAlias

from aiokafka.protocol._gen import create_topics as _ct
from aiokafka.protocol._gen import metadata as _md
from aiokafka.protocol.api import request_header_version, response_header_version
from aiokafka.protocol.primitives import read_unsigned_varint
from tests.support.kafka_frames import framed, pump_until_either_ends, read_frame

__all__ = ["InjectingRelay"]

_HEAD = struct.Struct(">hhih")  # api key, version, correlation id, client id length


def _create_topics_error(body: memoryview, version: int, code: int) -> bytes:
    request = _ct.CreateTopicsRequest.decode(body, version)
    response = _ct.CreateTopicsResponse(
        topics=[
            _ct.CreatableTopicResult(
                name=t.name, error_code=code, error_message="injected by the test relay"
            )
            for t in request.topics
        ]
    )
    return response.encode(version)


# API key -> builder of an error answer's body from the request's body.
_ERROR_ANSWERS: dict[int, Callable[[memoryview, int, int], bytes]] = {
    _ct.CreateTopicsRequest.API_KEY: _create_topics_error,
}


#: Rewrites a response body (after the header): ``(body, version) -> new body``.
Rewrite: TypeAlias = Callable[[bytes, int], bytes]


def _body_offset(frame: memoryview, api_key: int, version: int, client_len: int) -> int:
    pos = _HEAD.size + max(client_len, 0)
    if request_header_version(api_key, version) >= 2:
        count, pos = read_unsigned_varint(frame, pos)
        for _ in range(count):
            _tag, pos = read_unsigned_varint(frame, pos)
            size, pos = read_unsigned_varint(frame, pos)
            pos += size
    return pos


def _response_header(api_key: int, version: int, correlation_id: int) -> bytes:
    head = struct.pack(">i", correlation_id)
    if response_header_version(api_key, version) >= 1:
        head += b"\x00"  # no tagged fields
    return head


class InjectingRelay:
    """Loopback relay to one broker that can answer the next requests of an API itself.

    Args:
        target_host: The broker's host.
        target_port: The broker's port (PLAINTEXT listener).
        listen_host: Where the relay listens (loopback).
    """

    def __init__(self, target_host: str, target_port: int, listen_host: str = "127.0.0.1") -> None:
        self._target = (target_host, target_port)
        self.host = listen_host
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._plan: dict[int, collections.deque[int]] = {}
        self._rewrites: dict[int, Rewrite] = {}
        self.injected: dict[int, int] = {}
        """API key -> how many requests the relay answered itself."""
        self.forwarded: dict[int, int] = {}
        """API key -> how many requests went to the broker."""
        self.recorded: dict[int, list[tuple[int, bytes]]] = {}
        """API key -> ``(version, request body)`` of each request, for the keys given
        to :meth:`record`, in the order they arrived."""

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def fail_next(self, api_key: int, error_code: int, count: int = 1) -> None:
        """Answer the next ``count`` requests of ``api_key`` with ``error_code``.

        Raises:
            ValueError: no error answer is implemented for ``api_key``, or ``count``
                is not positive.
        """
        if api_key not in _ERROR_ANSWERS:
            raise ValueError(f"api_key: no error answer for API {api_key}")
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        self._plan.setdefault(api_key, collections.deque()).extend([error_code] * count)

    def rewrite_responses(self, api_key: int, rewrite: Rewrite | None) -> None:
        """Pass every later answer of ``api_key`` through ``rewrite`` (``None``: stop).

        The response header is kept; it must carry no tagged fields (brokers send none).
        """
        if rewrite is None:
            self._rewrites.pop(api_key, None)
        else:
            self._rewrites[api_key] = rewrite

    def record(self, api_key: int) -> None:
        """Keep the body of every later request of ``api_key`` in :attr:`recorded`."""
        self.recorded.setdefault(api_key, [])

    async def start(self) -> InjectingRelay:
        self._server = await asyncio.start_server(self._accept, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        up_writer: asyncio.StreamWriter | None = None
        # In request order: (correlation id, api key, version, own answer or None).
        order: collections.deque[tuple[int, int, int, bytes | None]] = collections.deque()
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(*self._target)
            except OSError:
                return
            self._writers.add(up_writer)
            await pump_until_either_ends(
                self._requests(reader, up_writer, writer, order),
                self._responses(up_reader, writer, order),
            )
        finally:
            for w in (writer, up_writer):
                if w is not None:
                    self._writers.discard(w)
                    w.transport.abort()

    @staticmethod
    def _flush_own(
        writer: asyncio.StreamWriter, order: collections.deque[tuple[int, int, int, bytes | None]]
    ) -> None:
        # Own answers go out once every earlier request on the connection was answered.
        while order and order[0][3] is not None:
            answer = order.popleft()[3]
            assert answer is not None
            writer.write(framed(answer))

    async def _requests(
        self,
        reader: asyncio.StreamReader,
        up: asyncio.StreamWriter,
        client: asyncio.StreamWriter,
        order: collections.deque[tuple[int, int, int, bytes | None]],
    ) -> None:
        while (frame := await read_frame(reader)) is not None:
            api_key, version, correlation_id, client_len = _HEAD.unpack_from(frame)
            kept = self.recorded.get(api_key)
            if kept is not None:
                view = memoryview(frame)
                body = view[_body_offset(view, api_key, version, client_len) :]
                kept.append((version, bytes(body)))
            plan = self._plan.get(api_key)
            if plan:
                code = plan.popleft()
                view = memoryview(frame)
                body = view[_body_offset(view, api_key, version, client_len) :]
                answer = _response_header(api_key, version, correlation_id) + _ERROR_ANSWERS[
                    api_key
                ](body, version, code)
                order.append((correlation_id, api_key, version, answer))
                self.injected[api_key] = self.injected.get(api_key, 0) + 1
                self._flush_own(client, order)
                await client.drain()
                continue
            order.append((correlation_id, api_key, version, None))
            self.forwarded[api_key] = self.forwarded.get(api_key, 0) + 1
            up.write(framed(frame))
            await up.drain()

    def _advertise_self(self, frame: bytes, version: int) -> bytes:
        head = len(_response_header(_md.MetadataRequest.API_KEY, version, 0))
        response = _md.MetadataResponse.decode(frame[head:], version)
        if len(response.brokers) != 1:
            return frame  # one broker behind one relay only
        response.brokers[0].host = self.host
        response.brokers[0].port = self.port
        return frame[:head] + response.encode(version)

    async def _responses(
        self,
        up: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        order: collections.deque[tuple[int, int, int, bytes | None]],
    ) -> None:
        while (frame := await read_frame(up)) is not None:
            (correlation_id,) = struct.unpack_from(">i", frame)
            if not order or order[0][0] != correlation_id:
                raise RuntimeError(f"the broker answered {correlation_id} out of order")
            _corr, api_key, version, _own = order.popleft()
            if api_key == _md.MetadataRequest.API_KEY:
                frame = self._advertise_self(frame, version)
            rewrite = self._rewrites.get(api_key)
            if rewrite is not None:
                head = len(_response_header(api_key, version, 0))
                frame = frame[:head] + rewrite(frame[head:], version)
            writer.write(framed(frame))
            self._flush_own(writer, order)
            await writer.drain()

    async def close(self) -> None:
        """Stop listening, abort every connection and await every relay task."""
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    async def __aenter__(self) -> InjectingRelay:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
