"""The logging policy for broker connection failures: seen once, then rate-limited.

A client retries a failing broker several times a second; logging every failure at
WARNING floods the logs, and logging none leaves an operator blind while the
producer or consumer quietly gets nowhere. The policy (the Java client's
``NetworkClient`` warnings and librdkafka's error callback work alike):

- The first failure of a kind (the error's class: ``KafkaConnectionError``,
  ``KafkaProtocolError``, ``CorrelationIdError``, ``RequestTimedOutError``,
  ``SaslAuthenticationFailed``, ...) on a broker is logged at WARNING, naming the
  broker (``host:port`` and node id) and the cause. A broker is its address: a
  bootstrap connection and a node's connection to the same ``host:port`` share
  their rate limits (the client falls back to bootstrap addresses when brokers fail,
  and the same endpoint failing the same way is one problem).
- Repeats of that kind on that broker within ``interval_s`` are logged at DEBUG; the
  next WARNING after the interval says how many were.
- The first success on a broker after failures is logged at INFO ("recovered after N
  failures") if a WARNING was logged since the last recovery, else at DEBUG: a broker
  that flaps gets at most one WARNING and one INFO per kind and interval.

One :class:`FailureLog` per client (the connection pool owns it, and hands it to
every connection it makes); connections report to it at their one failure boundary.
No asyncio here. Logger: ``aiokafka.net.failure_log`` (see ``docs/logging.md``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["DEFAULT_INTERVAL_S", "FailureLog"]

log = logging.getLogger(__name__)

#: At most one WARNING per broker and kind of failure in this many seconds.
DEFAULT_INTERVAL_S = 60.0


@dataclass(slots=True)
class _Kind:
    last_warning: float
    suppressed: int = 0  # repeats logged at DEBUG since last_warning


@dataclass(slots=True)
class _Broker:
    failures: int = 0  # since the last success
    warned: bool = False  # a WARNING went out since the last recovery message
    kinds: dict[str, _Kind] = field(default_factory=dict)


def _describe(error: BaseException) -> str:
    # The kind, then the cause; broker errors' messages already start with their name.
    name, text = type(error).__name__, str(error)
    return text if name in text else f"{name}: {text}"


class FailureLog:
    """Logs failures and recoveries of broker connections by the policy above.

    Args:
        interval_s: Minimum time between two WARNINGs for the same broker and kind.
        clock: Monotonic clock in seconds (a test seam).
    """

    def __init__(
        self,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._interval = interval_s
        self._clock = clock
        self._brokers: dict[str, _Broker] = {}

    def failure(self, address: str, error: BaseException, name: str | None = None) -> None:
        """Record a failed connect, a failed connection or an undecodable response.

        Args:
            address: The broker's ``"host:port"`` (what the state is kept by).
            error: What went wrong; its class is the kind, its message the cause.
            name: How the message names the broker (``"host:port (node id)"``);
                ``address`` by default.
        """
        broker = name or address
        state = self._brokers.setdefault(address, _Broker())
        state.failures += 1
        name = type(error).__name__
        now = self._clock()
        kind = state.kinds.get(name)
        if kind is None or now - kind.last_warning >= self._interval:
            repeats = ""
            if kind is not None and kind.suppressed:
                repeats = (
                    f" ({kind.suppressed} more in the last {now - kind.last_warning:.0f} s, "
                    "logged at DEBUG)"
                )
            log.warning(
                "Connection to broker %s failed: %s%s; repeats within %.0f s are logged at DEBUG",
                broker,
                _describe(error),
                repeats,
                self._interval,
            )
            state.kinds[name] = _Kind(last_warning=now)
            state.warned = True
            return
        kind.suppressed += 1
        log.debug("Connection to broker %s failed again: %s", broker, _describe(error))

    def success(self, address: str, name: str | None = None) -> None:
        """Record a response received and decoded from the broker at ``address``
        (``"host:port"``; ``name`` as in :meth:`failure`)."""
        state = self._brokers.get(address)
        if state is None or state.failures == 0:
            return
        broker = name or address
        level = logging.INFO if state.warned else logging.DEBUG
        log.log(
            level,
            "Connection to broker %s recovered after %d failure%s",
            broker,
            state.failures,
            "" if state.failures == 1 else "s",
        )
        state.failures = 0
        state.warned = False
        now = self._clock()
        if all(now - k.last_warning >= self._interval for k in state.kinds.values()):
            # Nothing left to rate-limit: forget the broker (addresses can churn).
            del self._brokers[address]

    def failures(self, address: str) -> int:
        """Failures of the broker at ``address`` since its last success."""
        state = self._brokers.get(address)
        return state.failures if state is not None else 0
