"""How long :meth:`Sender.close <aiokafka.producer.sender.Sender.close>` waits for
buffered records to be delivered."""

from __future__ import annotations

import asyncio

__all__ = ["wait_delivered"]


async def wait_delivered(
    waiters: list[asyncio.Future[None]],
    timeout: float | None,
    delivery_timeout_ms: int,
    request_timeout_ms: int,
) -> str:
    """Wait for ``waiters`` (the batches' ``done`` futures); why it stopped waiting.

    ``timeout`` given: at most ``timeout`` seconds. ``None``: as long as deliveries
    make progress, giving up once none got an outcome for ``request_timeout_ms``, and
    never more than ``delivery_timeout_ms`` in all.
    """
    loop = asyncio.get_running_loop()
    if timeout is None:
        total = delivery_timeout_ms / 1000
        stall: float | None = request_timeout_ms / 1000
    else:
        total, stall = timeout, None
    deadline = loop.time() + total
    pending = set(waiters)
    while pending:
        remaining = deadline - loop.time()
        window = remaining if stall is None else min(stall, remaining)
        if window <= 0:
            break
        done, pending = await asyncio.wait(
            pending, timeout=window, return_when=asyncio.FIRST_COMPLETED
        )
        if not done and stall is not None and window == stall:
            return (
                "no batch was delivered within request_timeout_ms "
                f"({request_timeout_ms} ms), so stop() gave up waiting"
            )
    if timeout is None:
        return f"stop() waited delivery_timeout_ms ({delivery_timeout_ms} ms), the longest it waits"
    return f"stop()'s timeout ({timeout} s) passed"
