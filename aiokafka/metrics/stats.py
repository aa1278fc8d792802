"""The one statistic every metric is built from: :class:`Sensor`.

A sensor counts what it is given (``total``, ``count``) since it was made, and keeps
two sample windows of :data:`WINDOW` seconds for the windowed values (average,
maximum, rate), as the Java client does with its default ``metrics.sample.window.ms``
(30 s) and ``metrics.num.samples`` (2). Recording is a few additions and one
comparison, so it can sit on a per-request or per-batch path; reading does the rest.
No asyncio, no locks: everything runs on the event loop's thread.
"""

from __future__ import annotations

import time

__all__ = ["WINDOW", "Sensor"]

#: Length of one sample window, in seconds.
WINDOW = 30.0


class Sensor:
    """Totals since creation plus two sample windows of values.

    Attributes:
        count: Values recorded since creation.
        total: Their sum.
    """

    __slots__ = (
        "_max",
        "_n",
        "_p_max",
        "_p_n",
        "_p_start",
        "_p_sum",
        "_start",
        "_sum",
        "count",
        "total",
    )

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        now = time.monotonic()
        # The current window ...
        self._start = now
        self._n = 0
        self._sum = 0.0
        self._max = float("-inf")
        # ... and the one before it (empty until the first roll).
        self._p_start = now
        self._p_n = 0
        self._p_sum = 0.0
        self._p_max = float("-inf")

    def record(self, value: float = 1.0, now: float | None = None) -> None:
        """Add one value (``now`` is ``time.monotonic()``, passed when the caller has it)."""
        if now is None:
            now = time.monotonic()
        self.count += 1
        self.total += value
        if now - self._start >= WINDOW:
            self._roll(now)
        self._n += 1
        self._sum += value
        if value > self._max:
            self._max = value

    def _roll(self, now: float) -> None:
        if now - self._start >= 2 * WINDOW:
            # Nothing was recorded for a whole window: the previous one is empty too.
            self._p_start, self._p_n, self._p_sum, self._p_max = now - WINDOW, 0, 0.0, float("-inf")
        else:
            self._p_start, self._p_n, self._p_sum, self._p_max = (
                self._start,
                self._n,
                self._sum,
                self._max,
            )
        self._start = now
        self._n = 0
        self._sum = 0.0
        self._max = float("-inf")

    def _current(self, now: float) -> None:
        if now - self._start >= WINDOW:
            self._roll(now)

    def avg(self, now: float | None = None) -> float:
        """Average of the values of the last one to two windows (0.0 without any)."""
        self._current(time.monotonic() if now is None else now)
        n = self._n + self._p_n
        return (self._sum + self._p_sum) / n if n else 0.0

    def max(self, now: float | None = None) -> float:
        """Largest value of the last one to two windows (0.0 without any)."""
        self._current(time.monotonic() if now is None else now)
        largest = max(self._max, self._p_max)
        return largest if self._n or self._p_n else 0.0

    def rate(self, now: float | None = None) -> float:
        """Sum of the values of the last windows per second (over at least one window,
        as the Java client: a sensor a few seconds old does not show a burst as a
        sustained rate)."""
        now = time.monotonic() if now is None else now
        self._current(now)
        return (self._sum + self._p_sum) / max(now - self._p_start, WINDOW)

    def count_rate(self, now: float | None = None) -> float:
        """Values recorded per second over the last windows (see :meth:`rate`)."""
        now = time.monotonic() if now is None else now
        self._current(now)
        return (self._n + self._p_n) / max(now - self._p_start, WINDOW)
