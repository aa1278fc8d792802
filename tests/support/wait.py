"""Bounded waiting for tests that watch a real broker or a running client.

A broker applies what the controller committed a moment after the call that caused it
returns, and clients react to it in background tasks, so tests poll. Each helper here
polls with a bound and fails with a message that says what was awaited; none of them
waits without end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["drain", "eventually", "wait_until"]

T = TypeVar("T")

#: Upper bound for waits on a loaded 2-core machine; a passing test returns sooner.
DEFAULT_TIMEOUT = 60.0


async def wait_until(
    what: str,
    predicate: Callable[[], bool],
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = 0.05,
) -> None:
    """Poll ``predicate()`` until it holds.

    Raises:
        AssertionError: naming ``what``, when ``timeout`` seconds passed first.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting until {what}")
        await asyncio.sleep(interval)


async def eventually(
    read: Callable[[], Awaitable[T]],
    ok: Callable[[T], bool],
    timeout: float = 5.0,
    interval: float = 0.1,
) -> T:
    """Call ``read()`` until ``ok`` holds for its value, and return the last value.

    The caller asserts on what comes back, so a timeout shows the last value read
    instead of a bare "timed out".
    """
    deadline = time.monotonic() + timeout
    while True:
        value = await read()
        if ok(value) or time.monotonic() > deadline:
            return value
        await asyncio.sleep(interval)


async def drain(consumer: Any, count: int, timeout: float = DEFAULT_TIMEOUT) -> list[Any]:
    """Records from ``consumer.getmany()`` until ``count`` arrived or ``timeout`` passed.

    Returns what arrived (maybe fewer than ``count``), so the caller's assertion shows it.
    """
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < count and time.monotonic() < deadline:
        for records in (await consumer.getmany(timeout_ms=500)).values():
            out.extend(records)
    return out
