"""The connection over an in-memory stream (its ``stream_factory`` seam).

Byte-level cases no broker produces on demand: a response split at every byte
boundary, two responses in one read, a peer that goes away inside a frame, a write
that fails. No sockets: the stream is :class:`tests.support.memory_stream.MemoryStream`.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time

import pytest

from aiokafka.cluster.connections import ConnectionPool, NodeId
from aiokafka.errors import KafkaConnectionError, RequestTimedOutError, UnsupportedVersionError
from aiokafka.metrics.network import NetworkMetrics
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.connection import AIOKafkaConnection, CloseCallback
from aiokafka.net.failure_log import FailureLog
from aiokafka.protocol.messages import MetadataRequest, MetadataResponse
from tests.support.memory_stream import MemoryStream, Request, response_frame

METADATA = MetadataRequest.API_KEY


def metadata_response(request: Request, cluster_id: str) -> bytes:
    body = MetadataResponse(cluster_id=cluster_id).encode(request.version)
    return response_frame(METADATA, request.version, request.corr, body)


async def connected(
    stream: MemoryStream, config: ConnectionConfig | None = None
) -> AIOKafkaConnection:
    conn = AIOKafkaConnection(
        "broker.test", 9092, config or ConnectionConfig(), node_id=1, stream_factory=stream.open
    )
    await asyncio.wait_for(conn.connect(), 5)
    return conn


async def test_connects_over_the_factory_stream() -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    try:
        assert conn.connected
        assert conn.api_version(METADATA) == 12
        assert stream.opened == [("broker.test", 9092, None, None)]
    finally:
        await conn.close()
    assert stream.aborted


async def test_the_factory_gets_the_tls_context_and_server_name() -> None:
    context = ssl.create_default_context()
    config = ConnectionConfig(security_protocol="SSL", ssl_context=context)
    for server_hostname, expected in ((None, "broker.test"), ("kafka.example", "kafka.example")):
        stream = MemoryStream()
        conn = AIOKafkaConnection(
            "broker.test",
            9093,
            config,
            server_hostname=server_hostname,
            stream_factory=stream.open,
        )
        await asyncio.wait_for(conn.connect(), 5)
        await conn.close()
        assert stream.opened == [("broker.test", 9093, context, expected)]


async def test_a_response_split_at_every_byte_boundary_is_read_whole() -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    try:
        sample = metadata_response(Request(METADATA, 12, 0, b""), "c")
        for cut in range(1, len(sample)):
            sending = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
            request = await stream.request()
            data = metadata_response(request, f"cut-{cut}")
            stream.feed(data[:cut])
            await asyncio.sleep(0)  # the reader consumes the first part and waits
            assert not sending.done()
            stream.feed(data[cut:])
            response = await asyncio.wait_for(sending, 5)
            assert response.cluster_id == f"cut-{cut}"
        assert conn.connected
    finally:
        await conn.close()


async def test_a_response_fed_one_byte_at_a_time() -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    try:
        sending = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
        data = metadata_response(await stream.request(), "bytewise")
        for i in range(len(data)):
            assert not sending.done()
            stream.feed(data[i : i + 1])
            await asyncio.sleep(0)
        assert (await asyncio.wait_for(sending, 5)).cluster_id == "bytewise"
    finally:
        await conn.close()


async def test_pipelined_responses_in_one_read_complete_their_own_requests() -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    try:
        first = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
        second = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
        r1, r2 = await stream.request(), await stream.request()
        assert r1.corr != r2.corr
        stream.feed(metadata_response(r1, "one") + metadata_response(r2, "two"))
        assert (await asyncio.wait_for(first, 5)).cluster_id == "one"
        assert (await asyncio.wait_for(second, 5)).cluster_id == "two"
    finally:
        await conn.close()


@pytest.mark.parametrize("keep", [2, 4, 9], ids=["in-size", "after-size", "in-body"])
async def test_a_peer_closing_mid_frame_fails_the_requests_in_flight(keep: int) -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    sending = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
    other = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
    request = await stream.request()
    await stream.request()
    stream.feed(metadata_response(request, "never")[:keep])
    await asyncio.sleep(0)
    stream.close_by_peer()
    for task in (sending, other):
        with pytest.raises(KafkaConnectionError, match="closed by the peer"):
            await asyncio.wait_for(task, 5)
    assert conn.closed
    assert stream.aborted  # the connection let go of its stream
    await conn.close()


async def test_a_peer_closing_an_idle_connection_is_a_quiet_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    caplog.set_level(logging.DEBUG, logger="aiokafka")
    stream.close_by_peer()
    for _ in range(10):
        if conn.closed:
            break
        await asyncio.sleep(0)
    assert conn.closed
    assert isinstance(conn.close_error, KafkaConnectionError)
    # EOF at a frame boundary with nothing in flight: INFO, not a failure warning.
    assert [r.levelno for r in caplog.records if "closed by the broker" in r.message] == [
        logging.INFO
    ]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    await conn.close()


async def test_a_failed_write_closes_the_connection_and_fails_what_is_in_flight() -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    waiting = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
    await stream.request()
    stream.write_error = ConnectionResetError("reset by peer")
    with pytest.raises(KafkaConnectionError, match="reset by peer"):
        await asyncio.wait_for(conn.send(MetadataRequest(topics=None)), 5)
    with pytest.raises(KafkaConnectionError):
        await asyncio.wait_for(waiting, 5)
    assert conn.closed and stream.aborted
    await conn.close()


async def test_the_pool_builds_connections_with_its_factory() -> None:
    streams: list[MemoryStream] = []

    def factory(
        host: str,
        port: int,
        config: ConnectionConfig,
        *,
        node_id: NodeId,
        server_hostname: str | None,
        on_close: CloseCallback | None,
        failure_log: FailureLog,
        metrics: NetworkMetrics,
    ) -> AIOKafkaConnection:
        streams.append(MemoryStream())
        return AIOKafkaConnection(
            host,
            port,
            config,
            node_id=node_id,
            server_hostname=server_hostname,
            on_close=on_close,
            failure_log=failure_log,
            metrics=metrics,
            stream_factory=streams[-1].open,
        )

    pool = ConnectionPool(
        ConnectionConfig(),
        reconnect_backoff_ms=50,
        reconnect_backoff_max_ms=1000,
        connections_max_idle_ms=60000,
        connection_factory=factory,
    )
    try:
        conn = await asyncio.wait_for(pool.get(5, "b5.test", 9092), 5)
        assert conn.node_id == 5 and pool.connected(5) is conn
        assert [s.opened[0][:2] for s in streams] == [("b5.test", 9092)]
        assert pool.connection("boot.test", 9092, node_id="bootstrap-0") is not conn
        # The peer goes away: the pool drops the connection and makes a new one.
        streams[0].close_by_peer()
        for _ in range(10):
            if pool.connected(5) is None:
                break
            await asyncio.sleep(0)
        again = await asyncio.wait_for(pool.get(5, "b5.test", 9092), 5)
        assert again is not conn and again.connected and len(streams) == 3
    finally:
        await pool.close()
    assert all(s.aborted for s in (streams[0], streams[2]))


async def test_send_nowait_writes_at_once_and_its_future_gets_the_response() -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    try:
        first = conn.send_nowait(MetadataRequest(topics=None))
        second = conn.send_nowait(MetadataRequest(topics=None))
        assert first is not None and second is not None
        # Written before anything was awaited: no task, no loop turn.
        r1, r2 = await stream.request(), await stream.request()
        stream.feed(metadata_response(r2, "two") + metadata_response(r1, "one"))
        assert (await asyncio.wait_for(first, 5)).cluster_id == "one"
        assert (await asyncio.wait_for(second, 5)).cluster_id == "two"
    finally:
        await conn.close()


async def test_send_nowait_declines_when_it_would_wait() -> None:
    stream = MemoryStream()
    config = ConnectionConfig(max_in_flight_requests_per_connection=2)
    conn = AIOKafkaConnection("broker.test", 9092, config, stream_factory=stream.open)
    assert conn.send_nowait(MetadataRequest(topics=None)) is None  # not connected
    await asyncio.wait_for(conn.connect(), 5)
    try:
        futures = [conn.send_nowait(MetadataRequest(topics=None)) for _ in range(3)]
        assert futures[0] is not None and futures[1] is not None
        assert futures[2] is None  # both slots taken
        request = await stream.request()
        await stream.request()
        stream.feed(metadata_response(request, "one"))
        await asyncio.wait_for(futures[0], 5)
        assert conn.send_nowait(MetadataRequest(topics=None)) is not None  # a slot is free
    finally:
        await conn.close()
    assert conn.send_nowait(MetadataRequest(topics=None)) is None  # closed


async def test_send_nowait_without_a_common_version_raises_and_keeps_the_slot() -> None:
    # The slot is taken before the version is chosen: a request the broker cannot
    # take must give it back, or one such call per slot would wedge the connection.
    stream = MemoryStream()
    conn = await connected(stream, ConnectionConfig(max_in_flight_requests_per_connection=1))
    try:
        for _ in range(3):
            with pytest.raises(UnsupportedVersionError):
                conn.send_nowait(MetadataRequest(topics=None), max_version=-1)
        fut = conn.send_nowait(MetadataRequest(topics=None))
        assert fut is not None  # the one slot is still free
        stream.feed(metadata_response(await stream.request(), "after"))
        assert (await asyncio.wait_for(fut, 5)).cluster_id == "after"
    finally:
        await conn.close()


async def test_send_nowait_a_failed_write_fails_its_future_and_the_others() -> None:
    stream = MemoryStream()
    conn = await connected(stream)
    waiting = conn.send_nowait(MetadataRequest(topics=None))
    assert waiting is not None
    await stream.request()
    stream.write_error = ConnectionResetError("reset by peer")
    failed = conn.send_nowait(MetadataRequest(topics=None))
    assert failed is not None
    for fut in (failed, waiting):
        with pytest.raises(KafkaConnectionError):
            await asyncio.wait_for(fut, 5)
    assert conn.closed and stream.aborted
    await conn.close()


async def test_send_nowait_a_cancelled_future_frees_its_slot_when_the_response_comes() -> None:
    stream = MemoryStream()
    conn = await connected(stream, ConnectionConfig(max_in_flight_requests_per_connection=1))
    try:
        fut = conn.send_nowait(MetadataRequest(topics=None))
        assert fut is not None
        fut.cancel()
        request = await stream.request()
        assert conn.send_nowait(MetadataRequest(topics=None)) is None  # still in flight
        stream.feed(metadata_response(request, "dropped"))
        for _ in range(10):
            await asyncio.sleep(0)
        again = conn.send_nowait(MetadataRequest(topics=None))
        assert again is not None  # the response was read and dropped: slot free
        stream.feed(metadata_response(await stream.request(), "kept"))
        assert (await asyncio.wait_for(again, 5)).cluster_id == "kept"
    finally:
        await conn.close()


@pytest.mark.parametrize("answered", [True, False], ids=["answered", "unanswered"])
async def test_a_request_timer_late_after_a_loop_stall_looks_again(
    monkeypatch: pytest.MonkeyPatch, answered: bool
) -> None:
    # A process whose event loop did not run for longer than request_timeout_ms (a
    # paused process, a Spark worker between tasks, a callback that blocked): the
    # broker answered in time, and the answer and the timeout are due in the same
    # loop turn. The timeout runs first (asyncio runs due timers in that turn and
    # the reader only in the next), so it looks again once the reader has run; a
    # request with no answer still times out.
    monkeypatch.setattr("aiokafka.net.in_flight.LOOP_STALL", 0.1)
    stream = MemoryStream()
    conn = await connected(stream, ConnectionConfig(request_timeout_ms=200))
    try:
        fut = conn.send_nowait(MetadataRequest(topics=None))
        assert fut is not None
        request = await stream.request()
        if answered:
            response = metadata_response(request, "in time")
            asyncio.get_running_loop().call_later(0.05, stream.feed, response)
        time.sleep(0.5)  # noqa: ASYNC251 - the stall itself: all is due when it ends
        if answered:
            assert (await asyncio.wait_for(fut, 5)).cluster_id == "in time"
            assert conn.connected
        else:
            with pytest.raises(RequestTimedOutError):
                await asyncio.wait_for(fut, 5)
            assert conn.closed
    finally:
        await conn.close()


async def test_a_loop_that_keeps_stalling_still_times_requests_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A late timer looks again once, not every time: a loop that stalls every turn
    # must not keep a request without an answer alive.
    monkeypatch.setattr("aiokafka.net.in_flight.LOOP_STALL", 0.1)
    stream = MemoryStream()
    conn = await connected(stream, ConnectionConfig(request_timeout_ms=200))
    loop = asyncio.get_running_loop()
    stalling = True

    def stall() -> None:
        time.sleep(0.2)  # every turn of the loop stalls
        if stalling:
            loop.call_soon(stall)

    try:
        fut = conn.send_nowait(MetadataRequest(topics=None))
        assert fut is not None
        await stream.request()
        loop.call_soon(stall)
        with pytest.raises(RequestTimedOutError):
            await asyncio.wait_for(fut, 5)
    finally:
        stalling = False
        await conn.close()
