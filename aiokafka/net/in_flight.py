"""A connection's requests in flight: what it keeps of each, and their one timer.

Every request written and not answered yet has a :class:`Pending` entry (its future
or callback, its decoder, when it was sent and when it times out). The timeouts share
one :class:`DeadlineTimer` per connection, set for the earliest deadline it knows of:
registering a request is a comparison (a timer only when it is due before the one
set), a response touches no timer, and when the timer fires it finds what is due and
is set again for what is left. A timer per request cost a ``call_later`` and a
``cancel`` on every request, and cancelled timers piled up in the loop's heap.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiokafka.net.versions import api_name

if TYPE_CHECKING:
    from aiokafka.errors import KafkaError

__all__ = [
    "LOOP_STALL",
    "DeadlineTimer",
    "OnAnswer",
    "Pending",
    "Slots",
    "deliver",
    "fail_pending",
]

#: Takes a response (``error`` None) or the error of a request written by
#: :meth:`~aiokafka.net.connection.AIOKafkaConnection.write_nowait`.
OnAnswer = Callable[[Any, "KafkaError | None"], None]

#: A request deadline passed this many seconds ago: the loop did not run (see
#: :meth:`DeadlineTimer.due`).
LOOP_STALL = 1.0
#: How long a request whose deadline passed during a loop stall gets (once).
_STALL_GRACE = 0.1


@dataclass(slots=True)
class Pending:
    """A request written (or being written) whose response has not arrived."""

    #: Its response's future; None for a request written by write_nowait().
    future: asyncio.Future[Any] | None
    on_answer: OnAnswer | None  # write_nowait()'s callback
    decode: Callable[[memoryview], Any]
    request_type: type[Any]
    version: int
    corr: int
    #: ``time.monotonic()`` when it was registered (request latency).
    started: float
    #: When it times out (``loop.time()``), and after how many seconds.
    deadline: float
    timeout: float
    stalled: bool = False  # its deadline passed during a loop stall once

    @property
    def description(self) -> str:
        """The request, for messages (made when one is needed, not per request)."""
        return f"{api_name(self.request_type)} v{self.version} (correlation id {self.corr})"


class DeadlineTimer:
    """One loop timer for the deadlines of a connection's requests.

    Args:
        fire: Called when the timer fires (the connection then asks :meth:`due`).
    """

    __slots__ = ("_at", "_fire", "_handle")

    def __init__(self, fire: Callable[[], None]) -> None:
        self._fire = fire
        self._handle: asyncio.TimerHandle | None = None
        self._at = 0.0

    def watch(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Make sure the timer fires by ``deadline`` (``loop.time()``)."""
        if self._handle is None or deadline < self._at:
            self._set(loop, deadline)

    def cancel(self) -> None:
        """Stop the timer (the connection closed)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def due(self, loop: asyncio.AbstractEventLoop, pending: Iterable[Pending]) -> Pending | None:
        """Call when the timer fired: the request that timed out first, if one did;
        else the timer is set again for the earliest deadline left.

        A deadline that passed more than :data:`LOOP_STALL` ago means the loop did
        not run (a paused process, a Spark worker between tasks), and asyncio runs due
        timers before the reader they wake: such a request is looked at again a
        little later, once, so an answer that came in time is read first.
        """
        self._handle = None
        now = loop.time()
        first: Pending | None = None
        after = float("inf")
        for entry in pending:
            deadline = entry.deadline
            if deadline <= now:
                if entry.stalled or now - deadline <= LOOP_STALL:
                    if first is None or deadline < first.deadline:
                        first = entry
                    continue
                entry.stalled = True
                deadline = entry.deadline = now + _STALL_GRACE
            if deadline < after:
                after = deadline
        if first is None and after != float("inf"):
            self._set(loop, after)
        return first

    def _set(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._at = deadline
        self._handle = loop.call_at(deadline, self._fire)


def deliver(pending: Pending, response: Any) -> None:
    """Hand a response to ``write_nowait()``'s callback, now."""
    on_answer = pending.on_answer
    assert on_answer is not None
    try:
        on_answer(response, None)
    except Exception as exc:  # the caller's bug must not fail the connection
        asyncio.get_running_loop().call_exception_handler(
            {"message": f"Exception in {on_answer!r}", "exception": exc}
        )


def fail_pending(pending: Pending, error: KafkaError) -> None:
    """Fail a request: its future, or ``write_nowait()``'s callback on the next loop
    turn (never from inside the connection's own failure handling)."""
    if pending.future is not None:
        if not pending.future.done():
            pending.future.set_exception(error)
    elif pending.on_answer is not None:
        asyncio.get_running_loop().call_soon(pending.on_answer, None, error)


class Slots:
    """A connection's request slots (``max_in_flight_requests_per_connection``):
    :class:`asyncio.Semaphore`'s counter and FIFO waiters, with :meth:`take_now`.

    ``asyncio.Semaphore`` can only be taken through its ``acquire()`` coroutine,
    which the write path ran one step to take a free slot without waiting: a
    coroutine object and a ``StopIteration`` per request. Same rules as there: a
    slot is free when the counter is positive and no waiter that is not cancelled
    is queued before it; a release wakes the first waiter that is not done.

    Args:
        value: The number of slots.
    """

    __slots__ = ("_value", "_waiters")

    def __init__(self, value: int) -> None:
        if value < 0:
            raise ValueError("Slots value must be >= 0")
        self._value = value
        self._waiters: deque[asyncio.Future[bool]] | None = None

    def locked(self) -> bool:
        """True if no slot can be taken at once."""
        return self._value == 0 or (
            self._waiters is not None and any(not w.cancelled() for w in self._waiters)
        )

    def take_now(self) -> bool:
        """Take a free slot without waiting; False if :meth:`locked`."""
        if self._value == 0 or (self._waiters and self.locked()):
            return False
        self._value -= 1
        return True

    async def acquire(self) -> bool:
        """Take a slot, waiting (in FIFO order) until one is free."""
        if self.take_now():
            return True
        if self._waiters is None:
            self._waiters = deque()
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            try:
                await fut
            finally:
                self._waiters.remove(fut)
        except asyncio.CancelledError:
            if not fut.cancelled():  # it was given a slot: pass it on
                self._value += 1
                self._wake_up_next()
            raise
        if self._value > 0:
            self._wake_up_next()
        return True

    def release(self) -> None:
        """Give a slot back, waking the first waiter."""
        self._value += 1
        if self._waiters:
            self._wake_up_next()

    def _wake_up_next(self) -> None:
        if not self._waiters:
            return
        for fut in self._waiters:
            if not fut.done():
                self._value -= 1
                fut.set_result(True)
                return
