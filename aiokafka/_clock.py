"""The clock that time-based logic reads and sleeps on, injectable for tests.

Back-off, throttle and timeout logic asks a :class:`Clock` for the time and to sleep,
instead of calling :func:`time.monotonic` and :func:`asyncio.sleep` itself, where a
unit test needs to let time pass: the test passes a fake clock (``tests/support/
fake_clock.py``) and advances it, so it checks a 400 ms back-off without waiting
400 ms. Production code uses :data:`SYSTEM_CLOCK`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    """A monotonic clock and a sleep measured on it."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (as :func:`time.monotonic`)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once ``seconds`` have passed on this clock."""
        ...


class SystemClock:
    """:func:`time.monotonic` and :func:`asyncio.sleep`."""

    __slots__ = ()

    def monotonic(self) -> float:
        """See :meth:`Clock.monotonic`."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """See :meth:`Clock.sleep`."""
        await asyncio.sleep(seconds)


#: The real clock, the default wherever a clock can be passed.
SYSTEM_CLOCK: Clock = SystemClock()
