"""A fake :class:`aiokafka._clock.Clock` for unit tests of time-based logic.

``monotonic()`` is virtual time. By default (``autojump``) ``sleep(d)`` moves it
forward by ``d`` at once and yields to the event loop once, so code that waits out a
back-off runs on without real waiting, and the test reads from :attr:`FakeClock.sleeps`
(or from times it records with :meth:`FakeClock.monotonic`) how long it waited.
:meth:`FakeClock.advance` moves time without a sleeper (time passing between calls).

With ``autojump=False`` a sleeper waits until :meth:`advance` moves the time past its
deadline: for tests that look at what happens while something is waiting (a wait cut
short by an event, a state held during a back-off); :meth:`until_sleeping` lets the
loop run until the code under test is waiting.
"""

from __future__ import annotations

import asyncio


class FakeClock:
    """Virtual time starting at ``start`` seconds."""

    def __init__(self, start: float = 1000.0, *, autojump: bool = True) -> None:
        self.now = start
        self.autojump = autojump
        #: Every sleep asked for, in seconds, in order.
        self.sleeps: list[float] = []
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if self.autojump:
            self.now += max(0.0, seconds)
            await asyncio.sleep(0)
            return
        entry = (self.now + seconds, asyncio.get_running_loop().create_future())
        self._sleepers.append(entry)
        try:
            await entry[1]
        finally:
            self._sleepers.remove(entry)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for deadline, waiter in self._sleepers:
            if deadline <= self.now and not waiter.done():
                waiter.set_result(None)

    @property
    def sleeping(self) -> int:
        """How many sleepers wait for :meth:`advance` (``autojump=False``)."""
        return len(self._sleepers)

    async def until_sleeping(self, count: int = 1) -> None:
        """Let the loop run (at most 100 turns) until ``count`` sleepers wait."""
        for _ in range(100):
            if len(self._sleepers) >= count:
                return
            await asyncio.sleep(0)
        raise AssertionError(f"{len(self._sleepers)} sleepers, expected {count}")
