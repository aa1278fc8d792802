"""The one owner of metadata refreshes: when one runs, and who waits for it.

Everything that wants fresher metadata asks :meth:`MetadataRefresher.request` (the
client's :meth:`~aiokafka.cluster.AIOKafkaClient.request_refresh`): the producer's
sender for a partition without a leader, the fetcher after NOT_LEADER, the group
membership for a new topic id, the client's periodic refresh. Before this each kept
its own throttle; now there is one:

* **Coalescing.** Requests made while none runs share the next refresh. A request
  made while one is in flight gets the refresh after it (the one in flight may have
  been sent before the error that prompted the request), unless it only waits for
  topics the request in flight already named (``interest_version``).
* **Throttle.** A refresh asked because something looks stale starts no earlier than
  ``retry_backoff_ms`` after the previous one ended; refreshes that follow each other
  without a pause of ``max_backoff_ms`` (the client's ``reconnect_backoff_max_ms``),
  or that fail, double that wait up to ``max_backoff_ms`` (with jitter): a leader that
  stays unknown costs a bounded rate of Metadata requests, never a loop. *Urgent*
  requests (new topic interest, an explicit ``refresh_metadata()``) skip the wait but
  still coalesce.

Each caller gets a future of its own, so one caller giving up (``wait_for`` timing
out) cancels nothing for the others. The refresh task is owned here: started when
a request arrives, it ends when nobody waits, and :meth:`close` cancels it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiokafka._clock import SYSTEM_CLOCK, Clock
from aiokafka._tasks import cancel_and_wait
from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.errors import KafkaConnectionError
from aiokafka.net.backoff import ExponentialBackoff

__all__ = ["MetadataRefresher", "as_bool"]

log = logging.getLogger(__name__)


class MetadataRefresher:
    """Runs metadata refreshes for the client, coalesced and throttled.

    Args:
        fetch: One refresh (tries the brokers, installs the snapshot, returns it).
        version: The topic interest's current version (read when a refresh starts).
        retry_backoff_ms: The wait between refreshes asked back to back.
        max_backoff_ms: Its upper bound, and the pause that resets it.
        clock: Times the throttle and waits it out (the system clock by default;
            tests pass a fake one and let time pass without waiting).
    """

    def __init__(
        self,
        fetch: Callable[[], Awaitable[ClusterMetadata]],
        version: Callable[[], int],
        *,
        retry_backoff_ms: float,
        max_backoff_ms: float,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._fetch = fetch
        self._version = version
        self._clock = clock
        self._backoff = ExponentialBackoff(retry_backoff_ms, max(retry_backoff_ms, max_backoff_ms))
        self._quiet = self._backoff.max_ms / 1000
        self._next: list[asyncio.Future[ClusterMetadata]] = []
        self._asked_at = 0.0  # when the first of ``_next`` asked
        self._start_at: float | None = None  # when the throttle lets ``_next`` start
        self._next_urgent = False
        self._reasons: dict[str, None] = {}
        self._current: list[asyncio.Future[ClusterMetadata]] = []
        self._current_version = -1
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._last_end = -float("inf")
        self._last_ok = True
        self._streak = 0
        self._closed = False
        #: Refreshes run so far, and the reasons of the last one (for tests, logs).
        self.refreshes = 0
        self.last_reasons: tuple[str, ...] = ()

    def request(
        self, reason: str, *, urgent: bool = False, interest_version: int | None = None
    ) -> asyncio.Future[ClusterMetadata]:
        """Ask for a refresh; the future resolves with the snapshot of a refresh that
        started after this call (or of the one in flight, if it was started with
        ``interest_version`` or later), or raises what that refresh raised.

        Args:
            reason: Why, for the debug log.
            urgent: Skip the throttle's wait (still coalesced).
            interest_version: The caller only needs topics the interest held at this
                version: a refresh in flight that started at it or later will do.
        """
        future: asyncio.Future[ClusterMetadata] = asyncio.get_running_loop().create_future()
        if self._closed:
            _fail(future, KafkaConnectionError("the client was closed"))
            return future
        if (
            interest_version is not None
            and self._current
            and self._current_version >= interest_version
        ):
            self._current.append(future)
            return future
        if not self._next:
            self._asked_at = self._clock.monotonic()
        self._next.append(future)
        self._reasons[reason] = None
        if urgent and not self._next_urgent:
            self._next_urgent = True
            self._wake.set()
        task = self._task
        if task is None or task.done():
            self._task = asyncio.create_task(self._run(), name="aiokafka-metadata-refresh")
        return future

    def _wait_time(self) -> float:
        """Seconds until the next, non-urgent, refresh may start (0 if now)."""
        if self._start_at is None:
            if self._last_ok and not self._back_to_back():
                self._streak = 0  # asked after a pause as long as the bound: from the start
            # Drawn once per refresh: the jitter must not move a start already set.
            self._start_at = self._last_end + self._backoff.delay(self._streak)
        return max(0.0, self._start_at - self._clock.monotonic())

    def _back_to_back(self) -> bool:
        # Whether the refresh waited for was asked within the bound of the last one's
        # end (judged by when it was asked, not by when the throttle let it start).
        return self._asked_at - self._last_end < self._quiet

    @property
    def in_flight(self) -> bool:
        """Whether a refresh is running now."""
        return bool(self._current)

    async def close(self) -> None:
        """Cancel the refresh task and wait for it; every waiter gets
        :class:`~aiokafka.errors.KafkaConnectionError` (idempotent)."""
        self._closed = True
        waiters = [*self._current, *self._next]
        self._current, self._next = [], []
        task, self._task = self._task, None
        await cancel_and_wait(task)
        closed = KafkaConnectionError("the client was closed")
        for future in waiters:
            _fail(future, closed)

    async def _run(self) -> None:
        if self._task is not asyncio.current_task():
            # Started by an eager task factory, inside the first request()'s
            # create_task() (self._task is assigned when it returns): yield once so
            # that the other callers of this loop turn share this refresh, as they do
            # when the task starts on the next turn; else they would wait for a
            # second one, throttled behind this one.
            await asyncio.sleep(0)
        while True:
            # Callers that gave up (cancelled their future) no longer need one.
            self._next = [f for f in self._next if not f.done()]
            if not self._next:
                self._next_urgent = False
                self._start_at = None
                self._reasons.clear()
                return
            wait = 0.0 if self._next_urgent else self._wait_time()
            if wait > 0:
                await self._throttle(wait)
                continue
            batch, self._next = self._next, []
            self._start_at = None
            urgent, self._next_urgent = self._next_urgent, False
            back_to_back = self._back_to_back()
            self.last_reasons = tuple(self._reasons)
            self._reasons.clear()
            self._current = batch
            self._current_version = self._version()
            log.debug("Refreshing metadata: %s", ", ".join(self.last_reasons))
            ok = False
            try:
                metadata = await self._fetch()
                ok = True
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                for future in self._current:
                    _fail(future, exc)
            else:
                for future in self._current:
                    if not future.done():
                        future.set_result(metadata)
            finally:
                self._current = []
                self.refreshes += 1
                if not ok or (not urgent and back_to_back):
                    self._streak += 1
                self._last_ok = ok
                self._last_end = self._clock.monotonic()

    async def _throttle(self, seconds: float) -> None:
        """Wait ``seconds`` on the clock, or until an urgent request wakes the task."""
        self._wake.clear()
        waits = (
            asyncio.ensure_future(self._clock.sleep(seconds)),
            asyncio.ensure_future(self._wake.wait()),
        )
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Both end before this returns (or before a cancellation of the refresh
            # task propagates): no task is left behind.
            await cancel_and_wait(*waits)


def _fail(future: asyncio.Future[ClusterMetadata], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
        # A caller that never awaits must not get "exception never retrieved".
        future.exception()


def as_bool(future: asyncio.Future[ClusterMetadata], failed: bool | None) -> asyncio.Future[bool]:
    """aiokafka's ``Future[bool]`` for a refresh: ``True`` once done; on failure
    ``failed``, or (``None``) the refresh's exception. Cancelling the result cancels
    ``future`` too (it is the caller's own)."""
    result: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def settle(f: asyncio.Future[ClusterMetadata]) -> None:
        if result.done():
            return
        error = KafkaConnectionError("the client was closed") if f.cancelled() else f.exception()
        if error is None:
            result.set_result(True)
        elif failed is not None:
            result.set_result(failed)
        else:
            result.set_exception(error)
            result.exception()

    def forward_cancel(r: asyncio.Future[bool]) -> None:
        if r.cancelled():
            future.cancel()

    future.add_done_callback(settle)
    result.add_done_callback(forward_cancel)
    return result
