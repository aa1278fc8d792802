"""A fake :class:`aiokafka._clock.Clock` for unit tests of time-based logic.

``monotonic()`` is virtual time. ``sleep(d)`` moves it forward by ``d`` at once and
yields to the event loop once, so code that waits out a back-off runs on without real
waiting, and the test reads from :attr:`FakeClock.sleeps` (or from times it records
with :meth:`FakeClock.monotonic`) how long it waited. :meth:`FakeClock.advance` moves
time without a sleeper (time passing between calls).
"""

from __future__ import annotations

import asyncio


class FakeClock:
    """Virtual time starting at ``start`` seconds."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        #: Every sleep asked for, in seconds, in order.
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        self.now += seconds
