"""aiokafka._timeout.wait_for: deadline, result, and no swallowed cancellation."""

from __future__ import annotations

import asyncio

import pytest

from aiokafka._timeout import wait_for


async def test_returns_result_within_deadline() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert await wait_for(answer(), 1.0) == 42


async def test_deadline_raises_timeout_error() -> None:
    with pytest.raises(asyncio.TimeoutError):
        await wait_for(asyncio.sleep(10), 0.01)


async def test_none_means_no_deadline() -> None:
    assert await wait_for(asyncio.sleep(0, result="ok"), None) == "ok"


async def test_cancel_when_inner_completes_at_the_same_time_is_not_swallowed() -> None:
    # The inner future gets its result and the outer task its cancellation in the
    # same loop iteration: the window in which 3.11's asyncio.wait_for dropped the
    # cancellation and returned the result instead.
    for _ in range(50):
        inner: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        reached_after = False

        async def caller(fut: asyncio.Future[str] = inner) -> None:
            nonlocal reached_after
            await wait_for(fut, 5.0)
            reached_after = True
            await asyncio.sleep(10)  # a swallowed cancellation would park here

        task = asyncio.create_task(caller())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        inner.set_result("done")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 2.0)
        assert not reached_after


def test_the_package_calls_no_asyncio_wait_for() -> None:
    # Every deadline in the package goes through aiokafka._timeout.wait_for: a call
    # of asyncio.wait_for brings back the lost cancellation above on Python < 3.12
    # (a stop() that hangs). The AST is read, so docstrings that name it are fine.
    import ast
    from pathlib import Path

    import aiokafka

    offenders = []
    for path in Path(aiokafka.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "wait_for"
                and isinstance(node.value, ast.Name)
                and node.value.id == "asyncio"
            ):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []
