"""Done-callbacks of record futures: one loop callback runs every callback of a settled
batch, with the semantics of ``asyncio.Handle`` (order, own context, errors reported)."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from aiokafka.producer.futures import BatchResults, RecordFuture, new_record_future
from aiokafka.structs import TopicPartition

VAR: contextvars.ContextVar[int] = contextvars.ContextVar("VAR", default=-1)


def futures(n: int) -> tuple[BatchResults, list[RecordFuture]]:
    results = BatchResults(asyncio.get_running_loop(), TopicPartition("t", 0))
    out = []
    for i in range(n):
        results.timestamps.append(1000 + i)
        out.append(new_record_future(RecordFuture, results, i))
    return results, out


async def test_callbacks_run_in_order_in_their_context_and_errors_do_not_stop_others() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        results, futs = futures(4)
        seen: list[tuple[int, int, int]] = []

        def record(fut: RecordFuture) -> None:
            seen.append((fut.result().offset, VAR.get(), len(seen)))
            if fut.result().offset == 11:
                raise ValueError("boom")

        for i, fut in enumerate(futs):
            ctx = contextvars.copy_context()
            ctx.run(VAR.set, i)
            fut.add_done_callback(record, context=ctx)
        results.resolve(0, 4, 10, -1, 0)
        assert seen == []  # never called synchronously
        await asyncio.sleep(0)
        assert seen == [(10, 0, 0), (11, 1, 1), (12, 2, 2), (13, 3, 3)]
        assert len(reported) == 1 and isinstance(reported[0]["exception"], ValueError)
        assert VAR.get() == -1
    finally:
        loop.set_exception_handler(None)


async def test_gather_and_callbacks_on_a_split_batch() -> None:
    results, futs = futures(6)
    got: list[BaseException | None] = []
    futs[4].add_done_callback(lambda f: got.append(f.exception()))
    gathered = asyncio.gather(*futs[:3])
    results.resolve(0, 3, 100, -1, 0)  # the first part
    assert [md.offset for md in await asyncio.wait_for(gathered, 5)] == [100, 101, 102]
    assert got == [] and not futs[4].done()
    results.fail(3, 6, KeyError("x"))
    await asyncio.sleep(0)
    assert len(got) == 1 and isinstance(got[0], KeyError)


async def test_callbacks_added_once_done_run_on_a_later_turn_in_order_and_context() -> None:
    """Callbacks added to futures that are done already (``asyncio.gather`` of an
    acknowledged batch) share one loop callback, keeping asyncio's semantics:
    never run synchronously, in the order added, each in its own context, an error
    reported without stopping the others; a callback added by one of them runs on
    a later turn."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        results, futs = futures(3)
        results.resolve(0, 3, 50, -1, 0)
        seen: list[tuple[int, int]] = []

        def record(fut: RecordFuture) -> None:
            seen.append((fut.result().offset, VAR.get()))
            if fut.result().offset == 51:
                fut.add_done_callback(lambda f: seen.append((-1, VAR.get())))
                raise ValueError("boom")

        for i, fut in enumerate([futs[2], futs[0], futs[1]]):
            ctx = contextvars.copy_context()
            ctx.run(VAR.set, i)
            fut.add_done_callback(record, context=ctx)
        assert seen == []
        await asyncio.sleep(0)
        assert seen == [(52, 0), (50, 1), (51, 2)]
        assert len(reported) == 1 and isinstance(reported[0]["exception"], ValueError)
        await asyncio.sleep(0)
        assert seen[-1] == (-1, 2)  # added from the callback: in its context
        gathered = await asyncio.wait_for(asyncio.gather(*futs), 5)
        assert [md.offset for md in gathered] == [50, 51, 52]
    finally:
        loop.set_exception_handler(None)


async def test_remove_and_cancel_leave_the_other_callbacks_in_order() -> None:
    results, futs = futures(3)
    seen: list[str] = []

    def named(name: str) -> Any:
        def callback(fut: RecordFuture) -> None:
            seen.append(f"{name}:{'cancelled' if fut.cancelled() else fut.result().offset}")

        return callback

    a, b, c, d = named("a"), named("b"), named("c"), named("d")
    futs[0].add_done_callback(a)
    futs[1].add_done_callback(b)
    futs[1].add_done_callback(c)
    futs[2].add_done_callback(d)
    futs[0].add_done_callback(b)
    assert futs[1].remove_done_callback(b) == 1
    assert futs[1].remove_done_callback(a) == 0
    assert futs[2].cancel()
    await asyncio.sleep(0)
    assert seen == ["d:cancelled"]
    results.resolve(0, 3, 7, -1, 0)
    await asyncio.sleep(0)
    assert seen == ["d:cancelled", "a:7", "c:8", "b:7"]


async def test_keyboard_interrupt_in_a_callback_propagates_and_the_rest_run_later() -> None:
    # As with asyncio.Handle: the interrupt leaves the loop; the callbacks after the
    # one that raised it still run, on a later turn, in their order.
    results, futs = futures(4)
    seen: list[int] = []

    def record(fut: RecordFuture) -> None:
        seen.append(fut.result().offset)
        if fut.result().offset == 11:
            raise KeyboardInterrupt

    for fut in futs:
        fut.add_done_callback(record)
    due: list[Any] = []
    loop = asyncio.get_running_loop()
    original = loop.call_soon

    def capture(fn: Any, *args: Any, **kwargs: Any) -> Any:
        due.append((fn, args))
        return original(lambda: None)

    loop.call_soon = capture  # type: ignore[method-assign]
    try:
        results.resolve(0, 4, 10, -1, 0)
    finally:
        del loop.call_soon
    [(run_due, args)] = due
    due.clear()
    loop.call_soon = capture  # type: ignore[method-assign]
    try:
        try:
            run_due(*args)
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("the KeyboardInterrupt did not propagate")
    finally:
        del loop.call_soon
    assert seen == [10, 11]
    [(rest_fn, rest_args)] = due
    rest_fn(*rest_args)
    assert seen == [10, 11, 12, 13]
