"""``producer/eager.py``: a Produce request's coroutine runs at once up to its first
suspension, then in a task that passes results, errors and cancellation through."""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Any

import pytest

from aiokafka.producer.eager import start_eagerly


async def test_runs_now_until_it_suspends_then_in_a_task() -> None:
    steps: list[str] = []
    gate: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def request() -> None:
        steps.append("written")
        steps.append(await gate)

    task = start_eagerly(request())
    assert steps == ["written"]  # before start_eagerly returned
    assert task is not None and not task.done()
    gate.set_result("answered")
    await task
    assert steps == ["written", "answered"]


async def test_a_coroutine_that_never_suspends_needs_no_task() -> None:
    ran: list[int] = []

    async def request() -> None:
        ran.append(1)

    assert start_eagerly(request()) is None
    assert ran == [1]


async def test_errors_after_the_first_suspension_end_the_task() -> None:
    async def request() -> None:
        await asyncio.sleep(0)
        raise ValueError("refused")

    task = start_eagerly(request())
    assert task is not None
    with pytest.raises(ValueError, match="refused"):
        await task


async def test_cancelling_the_task_cancels_the_coroutine_where_it_waits() -> None:
    seen: list[str] = []
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def request() -> None:
        try:
            await never
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    task = start_eagerly(request())
    assert task is not None
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]


async def test_the_task_is_given_a_native_coroutine() -> None:
    """Python 3.12+ refuses a generator as a task's coroutine (a produce request that
    took this path failed with TypeError and its records were never sent); the check
    here is the strict one, so it holds on 3.11 too."""
    loop = asyncio.get_running_loop()
    given: list[Any] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        given.append(coro)
        return asyncio.Task(coro, loop=loop, **kwargs)

    await _start_under(loop, factory)
    assert len(given) == 1 and inspect.iscoroutine(given[0])


@pytest.mark.skipif(sys.version_info < (3, 12), reason="eager_task_factory is 3.12+")
async def test_under_the_eager_task_factory() -> None:
    eager = asyncio.eager_task_factory  # type: ignore[attr-defined,unused-ignore]
    await _start_under(asyncio.get_running_loop(), eager)


async def _start_under(loop: asyncio.AbstractEventLoop, factory: Any) -> None:
    """start_eagerly a coroutine that suspends once, with ``factory`` making the task."""
    loop.set_task_factory(factory)
    try:
        task = start_eagerly(_waits_once())
        assert task is not None
        await task
    finally:
        loop.set_task_factory(None)


async def _waits_once() -> None:
    await asyncio.sleep(0)
