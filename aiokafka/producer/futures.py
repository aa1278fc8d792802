"""The per-record future that :meth:`AIOKafkaProducer.send` returns.

A batch of records has one outcome: a base offset or an error. Giving each record its
own ``asyncio.Future`` and resolving them one by one cost more than encoding the
record (a future, a ``RecordMetadata`` and a ``set_result`` call per record, plus the
garbage collector walking every pending future again and again). Instead every batch
has one :class:`BatchResults` and each record gets a :class:`RecordFuture`, a
two-slot view ``(results, index)`` whose ``RecordMetadata`` is built only when asked
for. Nothing is done per record when a batch completes, except for records someone
is waiting on (``await``, ``add_done_callback``).

:class:`RecordFuture` follows the ``asyncio.Future`` protocol (``asyncio.isfuture`` is
true), so ``await fut``, ``fut.add_done_callback``, ``asyncio.gather``,
``asyncio.wait``, ``asyncio.wait_for``, ``asyncio.shield`` and ``fut.result()`` work
as with aiokafka's futures. It cannot be resolved from outside (no ``set_result``).
Differences: a failed future nobody looked at is not logged at garbage collection,
cancelling a task that awaits it does not cancel the record future itself, and each
``result()``, ``exception()`` or ``await`` of a failed future gives a copy of the
batch's error (same class, arguments, attributes, cause and traceback so far).

Garbage collection: with the optional C extension (``_cfuture.c``) futures are made
untracked by the cyclic collector, which otherwise walked every live future in
every collection (a quarter of the producer's CPU in a busy ``send()`` loop). A
future can only be on a reference cycle through its batch's callbacks (tracked
first, see :meth:`RecordFuture.add_done_callback` and ``__await__``) or through its
batch's error, if that error's traceback reached the frame holding the future: the
stored error is never handed out (copies are, see :func:`_copy_error`), so its
traceback stays the sender's. Callbacks are dropped when their batch settles, and every
batch settles (acknowledged, failed, or failed by ``stop()``); a producer dropped
without ``stop()`` may keep what its pending batches' callbacks hold.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, cast

from aiokafka._extensions import load_extension
from aiokafka.structs import RecordMetadata, TopicPartition

__all__ = ["BatchResults", "RecordFuture", "bind_append_to_open", "new_record_future"]

_new_tuple = tuple.__new__
_copy_context = contextvars.copy_context
_CREATE_TIME = 0
_LOG_APPEND_TIME = 1
#: base_offset of records sent with ``acks=0``: no answer, so (as in aiokafka) their
#: futures resolve to ``None`` rather than to metadata with made-up offsets.
_UNACKNOWLEDGED = -2

# One resolved range of records: (start, end, base_offset, log_append_time,
# log_start_offset, error). base_offset -1: the broker gave no offset (a duplicate
# batch), every offset is -1; _UNACKNOWLEDGED: sent with acks=0, the result is None.
_Segment = tuple[int, int, int, int, "int | None", "BaseException | None"]
# Registered done-callbacks, flat: future, its index, callback (None for a waiter),
# context (the waiter future for a waiter), then the next four. Flat, not a tuple per callback:
# each callback's tuple lived until the batch settled, one more object per record
# for every garbage collection to walk (a callback per record is the common case).
_Callbacks = list[Any]


class BatchResults:
    """Outcomes of the records of one batch, by their index in the batch.

    A batch that is split (too large for the broker) keeps its ``BatchResults``: each
    part resolves its own range of indexes, so the futures already handed out stay
    valid.

    The batch's records' futures (:class:`RecordFuture`) read its outcome from the
    read-only attributes below; every change goes through a method of this class.

    Attributes:
        loop: The event loop callbacks run on.
        tp: The partition.
        timestamps: Every record's timestamp, by index (CreateTime).
        segments: The resolved ranges of records so far (read-only).
        whole: The one segment when it covers every record (the batch was not
            split), else None (read-only): a future's checks then need no search.
        cancelled_indexes: The indexes of the cancelled futures, or None
            (read-only).
    """

    __slots__ = (
        "_callbacks",
        "_soon",
        "cancelled_indexes",
        "loop",
        "segments",
        "timestamps",
        "tp",
        "whole",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, tp: TopicPartition) -> None:
        self.loop = loop
        self.tp = tp
        self.timestamps: list[int] = []
        self.segments: list[_Segment] = []
        self.whole: _Segment | None = None
        self.cancelled_indexes: set[int] | None = None
        self._callbacks: _Callbacks | None = None
        # Callbacks added to futures that were done already, waiting for their one
        # loop callback (see call_soon).
        self._soon: _Callbacks | None = None

    def resolve(
        self, start: int, end: int, base_offset: int, log_append_time: int, log_start_offset: int
    ) -> None:
        """Records ``start`` to ``end - 1`` were written from ``base_offset`` on
        (-1: the broker did not say where)."""
        lso = None if log_start_offset < 0 else log_start_offset
        self._settle((start, end, base_offset, log_append_time, lso, None))

    def resolve_unacknowledged(self, start: int, end: int) -> None:
        """Records ``start`` to ``end - 1`` were sent with ``acks=0``: their futures
        resolve to ``None``."""
        self._settle((start, end, _UNACKNOWLEDGED, -1, None, None))

    def fail(self, start: int, end: int, error: BaseException) -> None:
        """Records ``start`` to ``end - 1`` failed with ``error`` (a copy is kept:
        ``error`` itself may be raised elsewhere, and gather the frames there)."""
        self._settle((start, end, -1, -1, None, _copy_error(error)))

    def _settle(self, segment: _Segment) -> None:
        self.segments.append(segment)
        if segment[0] == 0 and segment[1] == len(self.timestamps):
            self.whole = segment
        callbacks = self._callbacks
        if not callbacks:
            return
        start, end, base_offset, log_append_time, lso, error = segment
        if start == 0 and end == len(self.timestamps) and None not in callbacks[2::4]:
            # The whole batch, and only done-callbacks waiting (asyncio.gather's,
            # add_done_callback's): all are due, with no Python step per record here.
            self._callbacks = None
            self.loop.call_soon(self._run_due, callbacks)
            return
        tp = self.tp
        topic, partition = tp
        timestamps = self.timestamps
        cancelled = self.cancelled_indexes
        keep: _Callbacks = []
        due: _Callbacks = []
        # Per waiting record; inlined (no RecordFuture method calls) because with many
        # concurrent ``await producer.send_and_wait(...)`` every record has a waiter.
        entries = iter(callbacks)
        for fut, index, fn, ctx in zip(entries, entries, entries, entries, strict=True):
            if not start <= index < end:
                keep += (fut, index, fn, ctx)
            elif fn is not None:
                due += (fut, index, fn, ctx)
            elif ctx.done():
                pass  # the awaiting task was cancelled
            elif cancelled is not None and index in cancelled:
                ctx.cancel()
            elif error is not None:
                ctx.set_exception(_copy_error(error))
            elif base_offset == _UNACKNOWLEDGED:
                ctx.set_result(None)
            else:
                if log_append_time >= 0:
                    timestamp, ts_type = log_append_time, _LOG_APPEND_TIME
                else:
                    timestamp, ts_type = timestamps[index], _CREATE_TIME
                offset = base_offset + index - start if base_offset >= 0 else -1
                ctx.set_result(
                    _new_tuple(
                        RecordMetadata, (topic, partition, tp, offset, timestamp, ts_type, lso)
                    )
                )
        self._callbacks = keep or None
        if due:
            # One loop callback runs them all, in the order they were added: a
            # Handle and a trip through the loop per record cost as much as the
            # callbacks themselves (asyncio.gather adds one to every future).
            self.loop.call_soon(self._run_due, due)

    def _run_due(self, due: _Callbacks) -> None:
        """Run done-callbacks as the loop would have, one by one: each in its own
        context, an exception reported to the loop's handler and not stopping the
        rest (as ``asyncio.Handle`` does). ``due`` is laid out as ``_callbacks`` is:
        ``fut, index, fn, ctx`` per callback (the index is not used here)."""
        loop = self.loop
        entries = iter(due)
        for fut, _, fn, ctx in zip(entries, entries, entries, entries, strict=True):
            try:
                ctx.run(fn, fut)
            except (SystemExit, KeyboardInterrupt):
                rest = list(entries)  # zip took whole entries: the rest is what is left
                if rest:
                    loop.call_soon(self._run_due, rest)
                raise
            except BaseException as exc:
                loop.call_exception_handler(
                    {
                        "message": f"Exception in callback {fn!r}({fut!r})",
                        "exception": exc,
                        "future": fut,
                    }
                )

    def _run_callback(self, fut: RecordFuture, index: int, fn: Any, ctx: Any) -> None:
        if fn is None:  # the future an ``await`` waits on: pass the outcome on
            if not ctx.done():  # done: the awaiting task was cancelled
                _copy_outcome(fut, ctx)
        else:
            self.call_soon(fut, index, fn, ctx)

    def call_soon(self, fut: RecordFuture, index: int, fn: Any, ctx: Any) -> None:
        """Run the done-callback ``fn`` of ``fut`` (record ``index``), done already,
        in ``ctx`` on a later loop turn, as asyncio does.

        The callbacks added to this batch's futures until that turn share one loop
        callback (:meth:`_run_due`), in the order they were added: ``asyncio.gather``
        of many futures whose batch was acknowledged adds one callback to each, and
        a loop ``Handle`` per record cost more than the callbacks (and filled the
        garbage collector's young generation). The difference: a callback added
        later in the same turn runs before what others scheduled with
        ``call_soon`` in between, instead of after it.
        """
        soon = self._soon
        if soon is None:
            self._soon = [fut, index, fn, ctx]
            self.loop.call_soon(self._run_soon)
        else:
            soon += (fut, index, fn, ctx)

    def _run_soon(self) -> None:
        due = self._soon
        self._soon = None
        if due:
            self._run_due(due)

    def segment_of(self, index: int) -> _Segment | None:
        """The resolved range record ``index`` is in, or None (no outcome yet)."""
        for segment in self.segments:
            if segment[0] <= index < segment[1]:
                return segment
        return None

    def add_callback(self, fut: RecordFuture, index: int, fn: Any, ctx: Any) -> None:
        """Call ``fn(fut)`` in ``ctx`` on the loop once record ``index`` (of ``fut``)
        has its outcome, or soon if it has one (``fn`` None: ``ctx`` is the future
        an ``await`` waits on, given the outcome)."""
        # No outcome in the batch yet (the usual case): done() need not search.
        if (self.segments or self.cancelled_indexes) and fut.done():
            self._run_callback(fut, index, fn, ctx)
            return
        callbacks = self._callbacks
        if callbacks is None:
            self._callbacks = [fut, index, fn, ctx]
        else:
            callbacks += (fut, index, fn, ctx)

    def unregister(self, fut: RecordFuture, fn: Any) -> int:
        """Forget every registration of ``fn`` on ``fut``; how many there were."""
        callbacks = self._callbacks
        if not callbacks:
            return 0
        entries = iter(callbacks)
        keep: _Callbacks = []
        removed = 0
        for entry in zip(entries, entries, entries, entries, strict=True):
            if entry[0] is fut and entry[2] == fn:
                removed += 1
            else:
                keep += entry
        self._callbacks = keep or None
        return removed

    def cancel(self, fut: RecordFuture, index: int) -> None:
        """Mark record ``index`` (of ``fut``, not done yet) cancelled and run what
        waits on it."""
        if self.cancelled_indexes is None:
            self.cancelled_indexes = set()
        self.cancelled_indexes.add(index)
        callbacks = self._callbacks
        if not callbacks:
            return
        entries = iter(callbacks)
        mine = []
        others: _Callbacks = []
        for entry in zip(entries, entries, entries, entries, strict=True):
            if entry[0] is fut:
                mine.append(entry)
            else:
                others += entry
        self._callbacks = others or None
        for _, _, fn, ctx in mine:
            self._run_callback(fut, index, fn, ctx)


def _copy_outcome(fut: RecordFuture, waiter: asyncio.Future[RecordMetadata]) -> None:
    if fut.cancelled():
        waiter.cancel()
        return
    error = fut.exception()
    if error is not None:
        waiter.set_exception(error)
    else:
        waiter.set_result(fut.result())


def _copy_error(error: BaseException) -> BaseException:
    """A new exception equal to ``error``: same class, ``args``, attributes, cause,
    context and traceback so far; raising it adds frames to the copy only."""
    cls = type(error)
    copy = cls.__new__(cls)
    copy.args = error.args
    attributes = getattr(error, "__dict__", None)
    if attributes:
        copy.__dict__.update(attributes)
        notes = attributes.get("__notes__")
        if type(notes) is list:
            copy.__notes__ = list(notes)  # type: ignore[attr-defined]
    copy.__cause__ = error.__cause__
    copy.__context__ = error.__context__
    copy.__suppress_context__ = error.__suppress_context__
    copy.__traceback__ = error.__traceback__
    return copy


class _PyFutureMethods:
    """:class:`RecordFuture`'s per-record methods in Python.

    Without the C extension they are the future's methods. With it, ``_cfuture.c``
    has their common case (the batch has one outcome for all its records and nothing
    is cancelled: what ``asyncio.gather``, done-callbacks and bulk checks meet) and
    calls these for the rest, so the rules live here only.
    """

    __slots__ = ()

    if TYPE_CHECKING:
        _results: BatchResults
        _index: int

        def _track(self) -> None: ...

        def _make_cancelled_error(self) -> asyncio.CancelledError: ...

    # -- state --------------------------------------------------------------------------

    def done(self) -> bool:
        """True once the record has an outcome (or the future was cancelled)."""
        results = self._results
        if results.whole is not None:
            return True
        index = self._index
        for segment in results.segments:
            if segment[0] <= index < segment[1]:
                return True
        cancelled = results.cancelled_indexes
        return cancelled is not None and index in cancelled

    def cancelled(self) -> bool:
        """True if :meth:`cancel` was called before the record had an outcome."""
        cancelled = self._results.cancelled_indexes
        return cancelled is not None and self._index in cancelled

    def result(self) -> RecordMetadata:
        """The record's metadata (``None`` with ``acks=0``, as in aiokafka: typed
        ``RecordMetadata`` because that is what every other configuration gets).

        Raises:
            asyncio.InvalidStateError: no outcome yet.
            asyncio.CancelledError: the future was cancelled.
            KafkaError: the record's batch failed.
        """
        results = self._results
        segment = results.whole  # one outcome for the whole batch: no search
        if segment is None or results.cancelled_indexes is not None:
            segment = _PyFutureMethods._outcome(self)
        error = segment[5]
        if error is not None:
            raise _copy_error(error)
        tp = results.tp
        start, _, base_offset, log_append_time, lso, _ = segment
        if base_offset == _UNACKNOWLEDGED:
            return None  # type: ignore[return-value]  # acks=0: see the docstring
        index = self._index
        if log_append_time >= 0:
            timestamp, ts_type = log_append_time, _LOG_APPEND_TIME
        else:
            timestamp, ts_type = results.timestamps[index], _CREATE_TIME
        offset = base_offset + index - start if base_offset >= 0 else -1
        # tuple.__new__ skips the NamedTuple's Python-level __new__.
        return _new_tuple(
            RecordMetadata, (tp.topic, tp.partition, tp, offset, timestamp, ts_type, lso)
        )

    def exception(self) -> BaseException | None:
        """The error the record failed with, or None if it succeeded.

        Raises:
            asyncio.InvalidStateError: no outcome yet.
            asyncio.CancelledError: the future was cancelled.
        """
        # Callers check every future this way after a bulk send: the common case (one
        # outcome for the whole batch, nothing cancelled) skips the search.
        results = self._results
        segment = results.whole
        if segment is None or results.cancelled_indexes is not None:
            segment = _PyFutureMethods._outcome(self)
        error = segment[5]
        return None if error is None else _copy_error(error)

    def _outcome(self) -> _Segment:
        """The resolved range of this record (its batch split, or futures cancelled).

        Called as ``_PyFutureMethods._outcome(self)``: with the C extension a
        RecordFuture does not inherit from this class, and this is how its Python
        ``result()`` and ``exception()`` (the C ones' slow paths) reach it.
        """
        results = self._results
        cancelled = results.cancelled_indexes
        if cancelled is not None and self._index in cancelled:
            raise self._make_cancelled_error()
        segment = results.segment_of(self._index)
        if segment is None:
            raise asyncio.InvalidStateError("the record has no outcome yet")
        return segment

    # -- callbacks ----------------------------------------------------------------------

    def get_loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the future belongs to."""
        return self._results.loop

    def add_done_callback(
        self,
        fn: Callable[[RecordFuture], object],
        *,
        context: contextvars.Context | None = None,
    ) -> None:
        """Call ``fn(self)`` on the loop once the future is done."""
        if context is None:
            context = _copy_context()
        # Before anything refers back to this future (fn may hold it): see _cfuture.c.
        self._track()
        # Only RecordFuture has these methods (as a base: see RecordFuture).
        self._results.add_callback(cast(RecordFuture, self), self._index, fn, context)


_cfuture = load_extension("aiokafka.producer._cfuture")

if TYPE_CHECKING or _cfuture is None:

    class _FutureFields(_PyFutureMethods):
        """RecordFuture's two fields and methods (pure Python: always tracked by the GC)."""

        __slots__ = ("_index", "_results")

        def __init__(self, results: BatchResults, index: int) -> None:
            self._results = results
            self._index = index

        def _track(self) -> None:
            """Let the cyclic GC see this future (a no-op here: it always does)."""

else:
    _FutureFields = _cfuture.RecordFutureBase
    _cfuture.configure(
        RecordMetadata,
        _PyFutureMethods.done,
        _PyFutureMethods.cancelled,
        _PyFutureMethods.exception,
        _PyFutureMethods.result,
    )


#: :meth:`BatchResults.add_callback` as written above: the whole path, to which the C
#: one (``_cfuture.c``, when built) hands every call but a registration on a batch
#: with no outcome and nothing cancelled. Tests compare the two.
python_add_callback = BatchResults.add_callback
if _cfuture is not None:
    # asyncio.gather and add_done_callback register one callback per future: in C, no
    # Python frame per registration.
    BatchResults.add_callback = _cfuture.bind_add_callback(  # type: ignore[method-assign]
        BatchResults, python_add_callback
    )


class RecordFuture(_FutureFields):
    """The outcome of one record: an ``asyncio``-compatible future of its
    :class:`~aiokafka.structs.RecordMetadata`.

    Resolved when the broker acknowledged the record's batch, or failed with the
    batch's typed error. Cancelling it does not stop the record from being sent.
    """

    # Empty: the fields are the base's (in C, where the GC does not track them).
    __slots__ = ()

    # asyncio.isfuture() looks for this class attribute (not None).
    _asyncio_future_blocking = False

    # done(), cancelled(), result(), exception(), get_loop() and add_done_callback()
    # come from the base: _PyFutureMethods, or their C versions (_cfuture.c).

    def remove_done_callback(self, fn: Callable[[RecordFuture], object]) -> int:
        """Forget every registration of ``fn``; returns how many there were."""
        return self._results.unregister(self, fn)

    def cancel(self, msg: Any | None = None) -> bool:
        """Mark the future cancelled (the record is still sent); False if already done."""
        if self.done():
            return False
        self._results.cancel(self, self._index)
        return True

    # Read by asyncio.gather() for cancelled children.
    _cancel_message = None

    def _make_cancelled_error(self) -> asyncio.CancelledError:
        return asyncio.CancelledError()

    # -- awaiting -----------------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        # ``await`` waits on a plain asyncio.Future that gets this record's outcome:
        # the event loop's C code then does the waiting, and cancelling the awaiting
        # task cancels that future, not the record's.
        results = self._results
        waiter: asyncio.Future[RecordMetadata] = results.loop.create_future()
        # The waiter leads to the awaiting task and its frame, which may hold this
        # future: a cycle the GC must see (see _cfuture.c).
        self._track()
        results.add_callback(self, self._index, None, waiter)
        return waiter.__await__()

    __iter__ = __await__

    def __repr__(self) -> str:
        tp = self._results.tp
        if self.cancelled():
            state = "cancelled"
        elif not self.done():
            state = "pending"
        else:
            error = self.exception()
            state = f"error={error!r}" if error is not None else f"result={self.result()!r}"
        return f"<RecordFuture {tp.topic}-{tp.partition} #{self._index} {state}>"


def _python_new_future(cls: type[RecordFuture], results: BatchResults, index: int) -> RecordFuture:
    return cls(results, index)


#: ``new_record_future(RecordFuture, results, index)``: the accumulator's way to make
#: a future (in C: no ``__init__`` call, and untracked by the GC).
new_record_future: Callable[[type[RecordFuture], BatchResults, int], RecordFuture] = (
    _python_new_future if _cfuture is None else _cfuture.new_future
)


def bind_append_to_open(cls: type[Any], python_method: Callable[..., Any]) -> Callable[..., Any]:
    """``RecordAccumulator.append_to_open`` as the accumulator module installs it: the
    C one of ``_cfuture.c`` when built (the common record, no headers and room in the
    open batch, without a Python frame; it calls ``python_method`` for every other
    case), else ``python_method`` itself."""
    if _cfuture is None:
        return python_method
    return cast(
        "Callable[..., Any]", _cfuture.bind_append_to_open(cls, python_method, RecordFuture)
    )
