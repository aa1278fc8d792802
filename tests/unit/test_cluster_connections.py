"""ConnectionPool reconnect back-off.

Every attempt fails during ApiVersions with a retriable
:class:`~aiokafka.errors.KafkaConnectionError`: the peer hangs up at once (an
in-memory stream through the pool's connection factory; a real socket in the last
test). What is checked is when the pool comes back: attempt times must be spaced by
the back-off (``reconnect_backoff_ms * 2**failures`` up to
``reconnect_backoff_max_ms``, +/-20 % jitter, never above the maximum), however
eagerly callers ask again. The back-off runs on a fake clock, so no test waits it out.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator

import pytest

from aiokafka.cluster.connections import ConnectionPool, NodeId
from aiokafka.errors import KafkaConnectionError
from aiokafka.metrics.network import NetworkMetrics
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.connection import AIOKafkaConnection, CloseCallback
from aiokafka.net.failure_log import FailureLog
from aiokafka.net.streams import ByteStream
from tests.support.fake_clock import FakeClock
from tests.support.memory_stream import MemoryStream

BACKOFF_MS = 50
BACKOFF_MAX_MS = 400
JITTER = 0.2  # ExponentialBackoff's default, which the pool uses
NODE = 3


class HangUpServer:
    """Accepts on 127.0.0.1, records when, closes the connection."""

    def __init__(self) -> None:
        self.accepts: list[float] = []
        self.server: asyncio.Server | None = None

    def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepts.append(time.monotonic())
        writer.close()

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])


@pytest.fixture
async def server() -> AsyncIterator[HangUpServer]:
    s = HangUpServer()
    s.server = await asyncio.start_server(s._handle, "127.0.0.1", 0)
    yield s
    s.server.close()
    await s.server.wait_closed()


def make_pool() -> ConnectionPool:
    return ConnectionPool(
        ConnectionConfig(request_timeout_ms=5000),
        reconnect_backoff_ms=BACKOFF_MS,
        reconnect_backoff_max_ms=BACKOFF_MAX_MS,
        connections_max_idle_ms=60000,
    )


def bounds_s(failures: int) -> tuple[float, float]:
    """The back-off after ``failures`` consecutive failures, as (min, max) seconds.

    As in Kafka's ExponentialBackoff the exponent stops growing at the cap and jitter
    still applies there, so a capped pause lies in ``[0.8 * max, max]``.
    """
    term = min(BACKOFF_MS * 2 ** (failures - 1), BACKOFF_MAX_MS)
    low = term * (1 - JITTER)
    high = min(term * (1 + JITTER), BACKOFF_MAX_MS)
    return low / 1000, high / 1000


class HangUps:
    """A pool's connection factory: every connection's peer hangs up at once (an
    in-memory stream, no socket), and each attempt's time on ``clock`` is recorded."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.attempts: list[float] = []

    def __call__(
        self,
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
        return AIOKafkaConnection(
            host,
            port,
            config,
            node_id=node_id,
            server_hostname=server_hostname,
            on_close=on_close,
            failure_log=failure_log,
            metrics=metrics,
            stream_factory=self.open,
        )

    async def open(
        self, host: str, port: int, *, ssl: ssl.SSLContext | None, server_hostname: str | None
    ) -> ByteStream:
        self.attempts.append(self.clock.monotonic())
        stream = MemoryStream()
        stream.close_by_peer()
        return stream


def hang_up_pool() -> tuple[ConnectionPool, HangUps, FakeClock]:
    clock = FakeClock()
    hang_ups = HangUps(clock)
    pool = ConnectionPool(
        ConnectionConfig(request_timeout_ms=5000),
        reconnect_backoff_ms=BACKOFF_MS,
        reconnect_backoff_max_ms=BACKOFF_MAX_MS,
        connections_max_idle_ms=60000,
        connection_factory=hang_ups,
        clock=clock,
    )
    return pool, hang_ups, clock


async def test_reconnects_are_spaced_by_growing_capped_backoff() -> None:
    pool, hang_ups, clock = hang_up_pool()
    attempts = 7  # back-offs ~50, 100, 200, then 320-400 (capped) ms
    try:
        for _ in range(attempts):
            with pytest.raises(KafkaConnectionError):
                await asyncio.wait_for(pool.get(NODE, "broker.test", 9092), 5)
            assert pool.in_backoff(NODE)
            assert pool.connected(NODE) is None
    finally:
        await pool.close()
    assert len(hang_ups.attempts) == attempts  # one connection per get(), no hidden retries
    # The pool waited out each back-off on its clock, once per attempt after the first.
    assert len(clock.sleeps) == attempts - 1
    for n in range(1, attempts):
        low, high = bounds_s(n)
        gap = hang_ups.attempts[n] - hang_ups.attempts[n - 1]
        assert low <= gap <= high, f"attempt {n + 1} came {gap * 1000:.0f} ms after the last"
    # Growth up to the cap: the later pauses are at least the cap's lower jitter bound,
    # and the cap holds (no 800 ms or 1600 ms pauses).
    for n in range(4, attempts):
        gap = hang_ups.attempts[n] - hang_ups.attempts[n - 1]
        assert BACKOFF_MAX_MS * (1 - JITTER) / 1000 <= gap <= BACKOFF_MAX_MS / 1000


async def test_back_off_ends_on_the_clock_not_before() -> None:
    pool, hang_ups, clock = hang_up_pool()
    try:
        with pytest.raises(KafkaConnectionError):
            await pool.get(NODE, "broker.test", 9092)
        low, high = bounds_s(1)
        clock.advance(low * 0.9)
        assert pool.in_backoff(NODE)
        clock.advance(high)
        assert not pool.in_backoff(NODE)
        # Nothing left to wait: the next attempt goes out at once.
        with pytest.raises(KafkaConnectionError):
            await pool.get(NODE, "broker.test", 9092)
        assert clock.sleeps == [] and len(hang_ups.attempts) == 2
    finally:
        await pool.close()


async def test_concurrent_callers_do_not_hammer_a_failed_node() -> None:
    pool, hang_ups, _ = hang_up_pool()
    try:
        with pytest.raises(KafkaConnectionError):
            await pool.get(NODE, "broker.test", 9092)
        assert len(hang_ups.attempts) == 1
        callers = 5
        burst = [asyncio.create_task(pool.get(NODE, "broker.test", 9092)) for _ in range(callers)]
        results = await asyncio.wait_for(asyncio.gather(*burst, return_exceptions=True), 10)
    finally:
        await pool.close()
    assert all(isinstance(r, KafkaConnectionError) for r in results)
    # The callers take turns (one attempt at a time per node), each after the back-off
    # the previous failure set: none comes before its back-off's lower bound.
    assert len(hang_ups.attempts) == 1 + callers
    for n in range(1, callers + 1):
        low, high = bounds_s(n)
        gap = hang_ups.attempts[n] - hang_ups.attempts[n - 1]
        assert low <= gap <= high, f"attempt {n + 1}: {gap * 1000:.0f} ms after the last"


async def test_closed_pool_makes_no_attempt(server: HangUpServer) -> None:
    pool = make_pool()
    with pytest.raises(KafkaConnectionError):
        await pool.get(NODE, "127.0.0.1", server.port)
    await pool.close()
    with pytest.raises(KafkaConnectionError, match="closed"):
        await pool.get(NODE, "127.0.0.1", server.port)
    assert len(server.accepts) == 1
