"""Run a coroutine now up to its first suspension, then in a task.

The sender's Produce request tasks start this way (:func:`start_eagerly`): the
request is written in the sender's own loop turn, not one turn later.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["start_eagerly"]


def start_eagerly(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
    """Run ``coro`` now up to its first suspension, then in a task (``None`` if it
    finished without suspending).

    A Produce request is written in the sender's own loop turn: a task made with
    ``create_task`` would only start on the next turn, one more turn between a
    lone ``send_and_wait`` and its request on the wire. (Python 3.12's eager task
    factory does this for every task; here it is for the produce tasks only.)
    ``coro`` must not rely on :func:`asyncio.current_task` before it first
    suspends (it is the sender's task then).
    """
    try:
        first = coro.send(None)
    except StopIteration:
        return None
    return asyncio.get_running_loop().create_task(_resume(coro, first))


async def _resume(coro: Coroutine[Any, Any, None], suspended_on: Any) -> None:
    # A native coroutine for the task: since Python 3.12 a task refuses a generator
    # (even a types.coroutine one), and so does the eager task factory's.
    await _drive(coro, suspended_on)


@types.coroutine
def _drive(coro: Coroutine[Any, Any, None], suspended_on: Any) -> Generator[Any, Any, None]:
    """Go on running ``coro``, suspended where it yielded ``suspended_on`` (the future
    it awaits, handed to the task running this): results and exceptions, including
    the task's cancellation, are passed through as ``await`` would."""
    while True:
        try:
            sent = yield suspended_on
        except BaseException as exc:
            try:
                suspended_on = coro.throw(exc)
            except StopIteration:
                return
        else:
            try:
                suspended_on = coro.send(sent)
            except StopIteration:
                return
