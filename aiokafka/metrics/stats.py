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
from typing import TYPE_CHECKING

from aiokafka._extensions import compiled_or

__all__ = ["WINDOW", "Combined", "Sensor", "TopicSensors", "topic_metric_names"]

#: Length of one sample window, in seconds.
WINDOW = 30.0


class _PySensorFields:
    """The window fields of :class:`Sensor` and its :meth:`record`: the pure-Python
    base, and the reference for the C one (``_csensor.SensorFields``, same slots and
    the same ``record``)."""

    __slots__ = (
        "_base_n",
        "_base_sum",
        "_max",
        "_n",
        "_p_max",
        "_p_n",
        "_p_start",
        "_p_sum",
        "_start",
        "_sum",
    )

    _base_n: int
    _base_sum: float
    _max: float
    _n: int
    _p_max: float
    _p_n: int
    _p_start: float
    _p_sum: float
    _start: float
    _sum: float

    def record(self, value: float = 1.0, now: float | None = None) -> None:
        """Add one value (``now`` is ``time.monotonic()``, passed when the caller has it)."""
        if now is None:
            now = time.monotonic()
        if now - self._start >= WINDOW:
            self._roll(now)
        # The sum first: a value that is not a number then changes nothing.
        self._sum += value
        self._n += 1
        if value > self._max:
            self._max = value

    def _roll(self, now: float) -> None:
        raise NotImplementedError


if TYPE_CHECKING:
    _SensorFields = _PySensorFields
else:
    _SensorFields = compiled_or("aiokafka.metrics._csensor", "SensorFields", _PySensorFields)


class Sensor(_SensorFields):
    """Totals since creation plus two sample windows of values.

    ``count`` and ``total`` are the windows' values plus what older windows held, so
    recording touches the current window only.
    """

    __slots__ = ()

    def __init__(self) -> None:
        # What windows that were dropped held.
        self._base_n = 0
        self._base_sum = 0.0
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

    @property
    def count(self) -> int:
        """Values recorded since creation."""
        return self._base_n + self._p_n + self._n

    @property
    def total(self) -> float:
        """Their sum."""
        return self._base_sum + self._p_sum + self._sum

    def _roll(self, now: float) -> None:
        self._base_n += self._p_n
        self._base_sum += self._p_sum
        if now - self._start >= 2 * WINDOW:
            self._base_n += self._n
            self._base_sum += self._sum
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

    def windowed(self, now: float | None = None) -> tuple[int, float]:
        """How many values the last one to two windows hold, and their sum."""
        self._current(time.monotonic() if now is None else now)
        return self._n + self._p_n, self._sum + self._p_sum

    def avg(self, now: float | None = None) -> float:
        """Average of the values of the last one to two windows (0.0 without any)."""
        n, total = self.windowed(now)
        return total / n if n else 0.0

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


class Combined:
    """Several sensors read as one (e.g. every broker's request latency), so a value
    recorded for one of them is recorded once, not also into a client-wide sensor."""

    __slots__ = ("_now", "_sensors", "count", "total")

    def __init__(self, sensors: list[Sensor], now: float | None = None) -> None:
        self._sensors = sensors
        self._now = time.monotonic() if now is None else now
        self.count = sum(s.count for s in sensors)
        self.total = sum(s.total for s in sensors)

    def avg(self) -> float:
        """Average over every sensor's windows."""
        windows = [s.windowed(self._now) for s in self._sensors]
        n = sum(count for count, _ in windows)
        return sum(total for _, total in windows) / n if n else 0.0

    def max(self) -> float:
        """Largest value in any sensor's windows."""
        return max((s.max(self._now) for s in self._sensors), default=0.0)

    def rate(self) -> float:
        """Sum of the sensors' rates."""
        return sum(s.rate(self._now) for s in self._sensors)

    def count_rate(self) -> float:
        """Sum of the sensors' count rates."""
        return sum(s.count_rate(self._now) for s in self._sensors)


def topic_metric_names(*sensors: str) -> tuple[str, ...]:
    """The metrics a :class:`TopicSensors` of ``sensors`` reports for each topic."""
    return tuple(f"{name}-{kind}" for name in sensors for kind in ("total", "rate"))


class TopicSensors:
    """The same sensors for every topic (the Java client's ``*-topic-metrics``), each
    topic's made on its first use.

    Args:
        sensors: Each topic's sensors, named by the prefix of the two metrics each
            is reported as: ``"byte"`` as ``byte-total`` and ``byte-rate``.
    """

    __slots__ = ("_names", "_topics")

    def __init__(self, *sensors: str) -> None:
        self._names = sensors
        self._topics: dict[str, dict[str, Sensor]] = {}

    def __call__(self, topic: str) -> dict[str, Sensor]:
        """``topic``'s sensors by name."""
        sensors = self._topics.get(topic)
        if sensors is None:
            sensors = self._topics[topic] = {name: Sensor() for name in self._names}
        return sensors

    def snapshot(self, now: float) -> dict[str, dict[str, float]]:
        """``{topic: {metric: value}}``, named as :func:`topic_metric_names` says."""
        out: dict[str, dict[str, float]] = {}
        for topic, sensors in self._topics.items():
            values = out[topic] = {}
            for name, sensor in sensors.items():
                values[f"{name}-total"] = sensor.total
                values[f"{name}-rate"] = sensor.rate(now)
        return out
