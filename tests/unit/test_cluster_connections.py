"""ConnectionPool reconnect back-off against an in-process server that counts accepts.

The server accepts and hangs up at once, so every attempt fails during ApiVersions
with a retriable :class:`~aiokafka.errors.KafkaConnectionError`. What is checked is
when the pool comes back: attempt times must be spaced by the back-off
(``reconnect_backoff_ms * 2**failures`` up to ``reconnect_backoff_max_ms``,
+/-20 % jitter, never above the maximum), however eagerly callers ask again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from aiokafka.cluster.connections import ConnectionPool
from aiokafka.errors import KafkaConnectionError
from aiokafka.net.config import ConnectionConfig

BACKOFF_MS = 50
BACKOFF_MAX_MS = 400
JITTER = 0.2  # ExponentialBackoff's default, which the pool uses
# Upper bounds allow for a loaded event loop (the machine is shared); lower bounds are
# exact, since an attempt can never start before its back-off ends.
SLACK_S = 0.25
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


async def test_reconnects_are_spaced_by_growing_capped_backoff(server: HangUpServer) -> None:
    pool = make_pool()
    attempts = 7  # back-offs ~50, 100, 200, then 320-400 (capped) ms: ~1.6 s in all
    failed_at: list[float] = []
    try:
        for _ in range(attempts):
            with pytest.raises(KafkaConnectionError):
                await pool.get(NODE, "127.0.0.1", server.port)
            failed_at.append(time.monotonic())
            assert pool.in_backoff(NODE)
            assert pool.connected(NODE) is None
    finally:
        await pool.close()
    assert len(server.accepts) == attempts  # one connection per get(), no hidden retries
    for n in range(1, attempts):
        low, high = bounds_s(n)
        gap = server.accepts[n] - server.accepts[n - 1]
        assert gap >= low, f"attempt {n + 1} came {gap * 1000:.0f} ms after the previous one"
        waited = server.accepts[n] - failed_at[n - 1]
        assert waited <= high + SLACK_S, f"attempt {n + 1} waited {waited * 1000:.0f} ms"
    # Growth up to the cap: the later pauses are well above the first ones (at least
    # the cap's lower jitter bound), and the cap holds (no 800 ms or 1600 ms pauses).
    for n in range(4, attempts):
        gap = server.accepts[n] - server.accepts[n - 1]
        assert gap >= BACKOFF_MAX_MS * (1 - JITTER) / 1000
        assert server.accepts[n] - failed_at[n - 1] <= BACKOFF_MAX_MS / 1000 + SLACK_S


async def test_concurrent_callers_do_not_hammer_a_failed_node(server: HangUpServer) -> None:
    pool = make_pool()
    try:
        with pytest.raises(KafkaConnectionError):
            await pool.get(NODE, "127.0.0.1", server.port)
        assert len(server.accepts) == 1
        callers = 5
        burst = [
            asyncio.create_task(pool.get(NODE, "127.0.0.1", server.port)) for _ in range(callers)
        ]
        # Nothing reaches the server before the first back-off's lower bound.
        await asyncio.sleep(bounds_s(1)[0] * 0.9)
        assert len(server.accepts) == 1
        results = await asyncio.wait_for(asyncio.gather(*burst, return_exceptions=True), 10)
    finally:
        await pool.close()
    assert all(isinstance(r, KafkaConnectionError) for r in results)
    # The callers take turns (one attempt at a time per node), each after the back-off
    # the previous failure set, so the burst is spread over ~50+100+200+400+400 ms
    # (the last two pauses capped: 320-400 ms each).
    assert len(server.accepts) == 1 + callers
    for n in range(1, callers + 1):
        gap = server.accepts[n] - server.accepts[n - 1]
        assert gap >= bounds_s(n)[0], f"attempt {n + 1}: {gap * 1000:.0f} ms after previous"


async def test_closed_pool_makes_no_attempt(server: HangUpServer) -> None:
    pool = make_pool()
    with pytest.raises(KafkaConnectionError):
        await pool.get(NODE, "127.0.0.1", server.port)
    await pool.close()
    with pytest.raises(KafkaConnectionError, match="closed"):
        await pool.get(NODE, "127.0.0.1", server.port)
    assert len(server.accepts) == 1
