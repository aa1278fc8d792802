"""The awaitable ``AIOKafkaConsumer.__anext__`` returns for a buffered record:
``_cready.ready`` (C) and its pure-Python stand-in give the same outcomes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import pytest

from aiokafka.consumer import ready as ready_module
from aiokafka.structs import ConsumerRecord

IMPLEMENTATIONS: list[Callable[[Any], Awaitable[Any]]] = [ready_module.ready_coroutine]
if ready_module._cready is not None:
    IMPLEMENTATIONS.append(ready_module._cready.ready)


def record() -> ConsumerRecord[bytes, bytes]:
    return ConsumerRecord("t", 0, 7, 1, 0, b"k", b"v", None, 1, 1, ())


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda f: f.__module__)
def ready(request: pytest.FixtureRequest) -> Callable[[Any], Awaitable[Any]]:
    return request.param  # type: ignore[no-any-return]


def test_the_extension_is_used_when_built() -> None:
    if ready_module._cready is None:
        pytest.skip("C extension not built (or AIOKAFKA_NO_EXTENSIONS set)")
    assert ready_module.ready is ready_module._cready.ready


async def test_await_gives_the_value(ready: Callable[[Any], Awaitable[Any]]) -> None:
    rec = record()
    assert await ready(rec) is rec
    # A tuple value comes back whole (not unpacked into StopIteration's arguments).
    assert await ready((1, 2)) == (1, 2)
    assert await ready(None) is None


async def test_gather_and_tasks_take_it(ready: Callable[[Any], Awaitable[Any]]) -> None:
    rec = record()
    assert await asyncio.gather(ready(rec), ready(2)) == [rec, 2]
    assert await asyncio.wait_for(ready(3), 1) == 3


def test_iterating_by_hand_stops_with_the_value(ready: Callable[[Any], Awaitable[Any]]) -> None:
    awaitable = ready((1, 2))
    iterator: Generator[Any, None, Any] = awaitable.__await__()  # type: ignore[attr-defined]
    with pytest.raises(StopIteration) as stop:
        next(iterator)
    assert stop.value.value == (1, 2)


async def test_awaited_twice_raises(ready: Callable[[Any], Awaitable[Any]]) -> None:
    awaitable = ready(1)
    assert await awaitable == 1
    with pytest.raises(RuntimeError, match="already awaited"):
        await awaitable


def test_throw_raises_the_exception(ready: Callable[[Any], Awaitable[Any]]) -> None:
    iterator = ready(1).__await__()  # type: ignore[attr-defined]
    with pytest.raises(KeyError):
        iterator.throw(KeyError("x"))
