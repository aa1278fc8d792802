"""Exponential back-off with jitter (Kafka's ``ExponentialBackoff``, KIP-144/KIP-580).

Used for reconnect attempts (``reconnect_backoff_ms`` .. ``reconnect_backoff_max_ms``)
and, with a constant term, for request retries (``retry_backoff_ms``). Jitter spreads
out clients that lost the same broker at the same moment so they do not all
reconnect in lock-step.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

__all__ = ["ExponentialBackoff"]


class ExponentialBackoff:
    """Delay ``initial_ms * multiplier**attempt``, times a random factor in
    ``[1 - jitter, 1 + jitter)``, never above ``max_ms``.

    Args:
        initial_ms: The delay after the first failure.
        max_ms: The largest delay ever returned. If not above ``initial_ms`` the
            delay is constant (with jitter, still capped).
        multiplier: Growth factor per failure.
        jitter: Relative random spread, 0 <= jitter < 1.
        rand: Source of uniform floats in ``[a, b)``; injectable for tests.
    """

    def __init__(
        self,
        initial_ms: float,
        max_ms: float,
        *,
        multiplier: float = 2.0,
        jitter: float = 0.2,
        rand: Callable[[float, float], float] = random.uniform,
    ) -> None:
        if initial_ms < 0:
            raise ValueError(f"initial_ms must be >= 0, got {initial_ms}")
        if max_ms < 0:
            raise ValueError(f"max_ms must be >= 0, got {max_ms}")
        if multiplier < 1:
            raise ValueError(f"multiplier must be >= 1, got {multiplier}")
        if not 0 <= jitter < 1:
            raise ValueError(f"jitter must be in [0, 1), got {jitter}")
        self.initial_ms = float(initial_ms)
        self.max_ms = float(max(max_ms, initial_ms))
        self.multiplier = float(multiplier)
        self.jitter = float(jitter)
        self._rand = rand
        # Past this exponent the term exceeds max_ms anyway; capping the exponent
        # keeps the float finite after thousands of failures.
        if self.initial_ms > 0 and self.multiplier > 1 and self.max_ms > self.initial_ms:
            self._exp_max = math.log(self.max_ms / self.initial_ms) / math.log(self.multiplier)
        else:
            self._exp_max = 0.0

    def delay_ms(self, attempts: int) -> float:
        """Return the delay in milliseconds after ``attempts`` consecutive failures
        (0 for the first retry)."""
        if attempts < 0:
            raise ValueError(f"attempts must be >= 0, got {attempts}")
        exponent = min(float(attempts), self._exp_max)
        term: float = self.initial_ms * self.multiplier**exponent
        factor = self._rand(1 - self.jitter, 1 + self.jitter) if self.jitter else 1.0
        return min(term * factor, self.max_ms)

    def delay(self, attempts: int) -> float:
        """Like :meth:`delay_ms`, in seconds (for ``asyncio.sleep``)."""
        return self.delay_ms(attempts) / 1000.0
