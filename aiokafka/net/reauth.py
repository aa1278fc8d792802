"""When to re-authenticate a SASL session (KIP-368), and the errors when it fails.

A broker with ``connections.max.reauth.ms`` > 0 answers a successful SaslAuthenticate
(v1+) with ``session_lifetime_ms``: the smaller of that setting and what the
credential allows (an OAUTHBEARER token's expiry). A connection that sends a request
after its session expired is closed by the broker. The connection therefore runs the
SASL exchange again on the same socket before then (SaslHandshake + SaslAuthenticate
between its other requests), which gives it a new session.

:class:`ReauthSchedule` says when, as the Java client does: at a random point between
85% and 95% of the lifetime, counted from the start of the exchange that granted the
session (a little before the broker starts counting, so the client errs early). The
85% leaves room for latency and clock drift; the 10% of jitter spreads the
re-authentications of connections opened together. The connection owns the task that
waits for the due time and drives the exchange (:mod:`aiokafka.net.connection`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable

from aiokafka.errors import AuthenticationFailedError, KafkaConnectionError

__all__ = [
    "MIN_INTERVAL_S",
    "WINDOW_JITTER",
    "WINDOW_START",
    "ReauthSchedule",
    "reauth_failure",
]

#: Re-authenticate no earlier than this fraction of the session lifetime ...
WINDOW_START = 0.85
#: ... plus a random fraction of the lifetime up to this much (the Java client's window).
WINDOW_JITTER = 0.10
#: Brokers refuse a re-authentication that starts within a second of the previous one
#: (``KafkaChannel``'s minimum re-authentication interval).
MIN_INTERVAL_S = 1.0


class ReauthSchedule:
    """The due time of a connection's next re-authentication.

    Args:
        clock: Monotonic clock in seconds (a test seam).
        rng: Uniform random numbers in ``[0, 1)`` for the jitter (a test seam).
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self._clock = clock
        self._rng = rng
        self._due: float | None = None
        self._expires: float | None = None

    @property
    def due(self) -> float | None:
        """Clock time at which to re-authenticate; ``None`` when there is nothing to do
        (no session lifetime, or one too short to renew in time)."""
        return self._due

    @property
    def expires(self) -> float | None:
        """Clock time at which the current session ends, if the broker set a lifetime."""
        return self._expires

    def session_started(self, started: float, lifetime_ms: int) -> None:
        """Record the session the broker just granted.

        Args:
            started: Clock time at which the exchange that granted it began.
            lifetime_ms: The broker's ``session_lifetime_ms``; 0 (or less) for a
                session that does not expire, which needs no re-authentication.
        """
        if lifetime_ms <= 0:
            self._due = self._expires = None
            return
        lifetime = lifetime_ms / 1000
        self._expires = started + lifetime
        fraction = WINDOW_START + WINDOW_JITTER * self._rng()
        due = started + max(lifetime * fraction, MIN_INTERVAL_S)
        # A lifetime under about a second cannot be renewed before it ends: the broker
        # would refuse the early attempt and close the connection on a late one. Let it
        # lapse; the broker closes the connection at its next request and the owner
        # opens a new, freshly authenticated one.
        self._due = due if due < self._expires else None

    def delay(self) -> float | None:
        """Seconds from now until the due time (0 if it has passed), or ``None``."""
        if self._due is None:
            return None
        return max(0.0, self._due - self._clock())


def reauth_failure(
    exc: BaseException, peer: str, mechanism: str, timeout_ms: int
) -> tuple[AuthenticationFailedError, KafkaConnectionError]:
    """The errors of a failed re-authentication: the one the connection closes with,
    and the retriable one its requests in flight get (caused by the first).

    Requests in flight were sent before the re-authentication: they did not fail
    authentication, and are retried on a new connection, whose connect() then reports
    a lasting authentication failure itself. ``exc`` (a timeout when the broker did
    not answer within ``timeout_ms``) is the first one's cause.
    """
    # asyncio.TimeoutError: not yet the builtin TimeoutError on Python 3.10.
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        detail = f"no answer within {timeout_ms} ms"
    else:
        detail = str(exc) or type(exc).__name__
    error = AuthenticationFailedError(
        f"re-authentication to {peer} with SASL {mechanism} failed: {detail}"
    )
    error.__cause__ = exc
    lost = KafkaConnectionError(f"connection to {peer} closed: {error}")
    lost.__cause__ = error
    return error, lost
