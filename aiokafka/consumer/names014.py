"""aiokafka 0.14's private ``AIOKafkaConsumer`` names that code built on it reads.

FastStream logs ``consumer._coordinator.member_id``, ``_group_id`` and
``_subscription.topics`` on every assignment; ddtrace and OpenTelemetry's
instrumentation read ``_group_id`` and ``_enable_auto_commit``; faust-streaming's driver
fetches through ``consumer._fetcher.fetched_records()``, reads ``_max_poll_records``,
``_closed`` and ``_coordinator.generation`` and sets ``_closed`` before it stops the
consumer. :class:`Consumer014Names`, a base of the consumer, answers them with
read-only views over the public state (``internals014.py``, loaded on first use);
nothing in this package uses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .config import ConsumerConfig
    from .internals014 import Coordinator014, Fetcher014, Subscription014, _FetchingConsumer

__all__ = ["Consumer014Names"]


class _Host(Protocol):
    """What the names read of the consumer (aiokafka.consumer.AIOKafkaConsumer)."""

    _state: str

    @property
    def config(self) -> ConsumerConfig: ...


class Consumer014Names:
    """aiokafka 0.14's private consumer attributes (see the module docstring)."""

    __slots__ = ()

    @property
    def _group_id(self: _Host) -> str | None:
        return self.config.group_id

    @property
    def _enable_auto_commit(self: _Host) -> bool:
        return self.config.enable_auto_commit

    @property
    def _max_poll_records(self: _Host) -> int | None:
        return self.config.max_poll_records

    @property
    def _coordinator(self: _Host) -> Coordinator014 | None:
        from .internals014 import Coordinator014

        return None if self._state == "new" else Coordinator014(self)  # type: ignore[arg-type]

    @property
    def _subscription(self: _Host) -> Subscription014:
        from .internals014 import Subscription014

        return Subscription014(self)  # type: ignore[arg-type]

    @property
    def _fetcher(self: _Host) -> Fetcher014 | None:
        """``fetched_records()`` over ``getmany()`` (None before ``start()``)."""
        from .internals014 import Fetcher014

        if self._state == "new":
            return None
        consumer: _FetchingConsumer = self  # type: ignore[assignment]
        return Fetcher014(consumer, lambda: self._state == "stopped")

    @property
    def _closed(self: _Host) -> bool:
        return self._state == "stopped"

    @_closed.setter
    def _closed(self: _Host, value: bool) -> None:
        """faust sets it before it stops the consumer: nothing to do, ``stop()`` is
        what stops it here."""
