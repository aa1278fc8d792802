"""A connection's request slots (aiokafka.net.in_flight.Slots): asyncio.Semaphore's
rules (FIFO waiters, cancellation hands a given slot on), plus take_now()."""

from __future__ import annotations

import asyncio

import pytest

from aiokafka.net.in_flight import Slots


def test_take_now_until_locked_and_release() -> None:
    slots = Slots(2)
    assert not slots.locked()
    assert slots.take_now() and slots.take_now()
    assert slots.locked() and not slots.take_now()
    slots.release()
    assert not slots.locked() and slots.take_now()


def test_negative_value_is_refused() -> None:
    with pytest.raises(ValueError):
        Slots(-1)


async def test_waiters_are_served_in_order_before_take_now() -> None:
    slots = Slots(1)
    assert slots.take_now()
    order: list[int] = []

    async def waiter(n: int) -> None:
        await slots.acquire()
        order.append(n)

    tasks = [asyncio.create_task(waiter(n)) for n in range(3)]
    await asyncio.sleep(0)
    assert slots.locked()
    slots.release()
    # The freed slot is the first waiter's, not a take_now() caller's.
    assert not slots.take_now()
    await asyncio.sleep(0)
    assert order == [0]
    slots.release()
    slots.release()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2]


async def test_a_cancelled_waiter_given_a_slot_passes_it_on() -> None:
    slots = Slots(1)
    assert slots.take_now()
    first = asyncio.create_task(slots.acquire())
    second = asyncio.create_task(slots.acquire())
    await asyncio.sleep(0)
    slots.release()  # given to ``first`` ...
    first.cancel()  # ... which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await asyncio.wait_for(second, 1)
    assert slots.locked()
    slots.release()
    assert not slots.locked()


async def test_a_cancelled_waiter_does_not_lock() -> None:
    slots = Slots(1)
    assert slots.take_now()
    waiting = asyncio.create_task(slots.acquire())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    slots.release()
    assert not slots.locked() and slots.take_now()
