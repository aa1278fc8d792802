"""Record futures and the cyclic garbage collector (``aiokafka/producer/_cfuture.c``).

With the C extension, futures start untracked; these tests show that the cycles a
future can be on are still collected: through a registered callback or awaiting task
(the future is tracked first), and through its batch's error (callers get copies, so
the stored error's traceback never reaches their frames). Without the extension the
futures are ordinary tracked objects and the cycle tests hold trivially.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from aiokafka.errors import KafkaError, RequestTimedOutError
from aiokafka.producer import futures
from aiokafka.producer.futures import BatchResults, RecordFuture, _copy_error
from aiokafka.structs import TopicPartition

TP = TopicPartition("t", 0)
COMPILED = futures._cfuture is not None


class Marker:
    """Something a caller's frame holds; alive as long as the frame is."""


def make_futures(loop: asyncio.AbstractEventLoop, count: int) -> tuple[BatchResults, list[Any]]:
    results = BatchResults(loop, TP)
    results.timestamps.extend(range(count))
    return results, [futures.new_record_future(RecordFuture, results, i) for i in range(count)]


@pytest.fixture
def collected() -> Iterator[None]:
    """The test decides when collections happen."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.skipif(
    not COMPILED, reason="the C extension is not in use (not built, or AIOKAFKA_NO_EXTENSIONS)"
)
async def test_futures_start_untracked_and_are_tracked_when_something_can_refer_back() -> None:
    _, (plain, awaited, called) = make_futures(asyncio.get_running_loop(), 3)
    assert not gc.is_tracked(plain)
    called.add_done_callback(lambda f: None)
    assert gc.is_tracked(called)
    task = asyncio.ensure_future(awaited.__await__().__next__())
    assert gc.is_tracked(awaited)
    task.cancel()
    assert not gc.is_tracked(plain)
    assert (plain._index, called._index) == (0, 2)
    assert futures.RecordFuture(plain._results, 7)._index == 7  # the ordinary constructor


async def test_cycle_through_a_failed_batch_error_is_collected(collected: None) -> None:
    loop = asyncio.get_running_loop()
    probe: list[weakref.ref[Any]] = []

    async def caller() -> None:
        marker = Marker()
        probe.append(weakref.ref(marker))
        results, batch_futures = make_futures(loop, 3)
        results.fail(0, 3, RequestTimedOutError("late"))
        # The usual loop: await each, keep the error. The caught error's traceback
        # holds this frame, which holds the unawaited siblings.
        caught = []
        for fut in batch_futures[:1]:
            try:
                await fut
            except KafkaError as exc:
                caught.append(exc)
        marker.kept = (batch_futures, caught)  # type: ignore[attr-defined]

    await caller()
    gc.collect()
    assert probe[0]() is None, "the caller's frame was kept alive by a future's batch"


async def test_cycle_through_a_callback_is_collected_once_the_batch_settles(
    collected: None,
) -> None:
    loop = asyncio.get_running_loop()
    probe: list[weakref.ref[Any]] = []
    settle: list[BatchResults] = []

    def register() -> None:
        marker = Marker()
        probe.append(weakref.ref(marker))
        results, batch_futures = make_futures(loop, 2)
        # A callback that holds the futures, one of them never looked at (untracked).
        marker.futures = batch_futures  # type: ignore[attr-defined]
        batch_futures[0].add_done_callback(lambda f: marker)
        settle.append(results)

    register()
    # While the batch is pending its callbacks are alive, as with asyncio futures...
    gc.collect()
    assert probe[0]() is not None
    # ...and once it settles (every batch does: acknowledged, failed, or failed by
    # stop()), nothing of the caller's is held.
    settle.pop().resolve(0, 2, 0, -1, 0)
    await asyncio.sleep(0)  # the callback runs
    gc.collect()
    assert probe[0]() is None, "a settled batch's callback cycle was not collected"


def _add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``; by hand on Python 3.10, which has no ``add_note``:
    ``__notes__`` is the plain attribute it sets, and what ``_copy_error`` copies."""
    if sys.version_info >= (3, 11):
        exc.add_note(note)
    else:
        exc.__dict__["__notes__"] = [*exc.__dict__.get("__notes__", ()), note]


async def test_callers_get_copies_of_the_batch_error() -> None:
    results, (first, second) = make_futures(asyncio.get_running_loop(), 2)
    original = RequestTimedOutError("late")
    _add_note(original, "note")
    results.fail(0, 2, original)
    stored = results.segments[0][5]
    assert stored is not original
    one, two = first.exception(), second.exception()
    assert one is not two and one is not stored
    for exc in (one, two, stored):
        assert type(exc) is RequestTimedOutError
        assert exc is not None and exc.args == ("late",) and exc.__notes__ == ["note"]
    with pytest.raises(RequestTimedOutError, match="late") as info:
        first.result()
    with pytest.raises(RequestTimedOutError, match="late"):
        await second
    # Raising the copies and adding notes to them changed nothing stored.
    assert stored.__traceback__ is None
    _add_note(info.value, "more")
    assert stored.__notes__ == ["note"]


def test_copy_keeps_cause_context_attributes_and_traceback() -> None:
    try:
        try:
            raise OSError(5, "io")
        except OSError as inner:
            raise KafkaError("outer") from inner
    except KafkaError as exc:
        exc.extra = 1  # type: ignore[attr-defined]
        original = exc
    copy = _copy_error(original)
    assert copy is not original and type(copy) is KafkaError
    assert copy.args == original.args
    assert copy.__cause__ is original.__cause__ and copy.__suppress_context__
    assert copy.__context__ is original.__context__
    assert copy.__traceback__ is original.__traceback__
    assert copy.extra == 1  # type: ignore[attr-defined]
