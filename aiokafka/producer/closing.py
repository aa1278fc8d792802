"""How long :meth:`Sender.close <aiokafka.producer.sender.Sender.close>` waits for
buffered records to be delivered, and the release of a producer dropped without
``stop()``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiokafka.errors import ProducerClosed

if TYPE_CHECKING:
    from aiokafka.cluster.client import AIOKafkaClient
    from aiokafka.producer.sender import Sender

__all__ = ["release_abandoned", "wait_delivered"]


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


#: Release tasks of producers dropped without stop() (see release_abandoned), owned
#: until done.
_RELEASING: set[asyncio.Task[None]] = set()


def release_abandoned(sender: Sender | None, client: AIOKafkaClient | None) -> None:
    """Stop what a producer garbage-collected without ``stop()`` left running, in one
    background task (called on its event loop from ``AIOKafkaProducer.__del__``):
    buffered records get the delivery ``stop()`` would give them, then the sender's
    tasks and the connections are closed."""

    async def release() -> None:
        try:
            if sender is not None:
                await sender.close(
                    None, ProducerClosed("the producer was garbage-collected without stop()")
                )
        finally:
            if client is not None:
                await client.close()

    task = asyncio.get_running_loop().create_task(release(), name="aiokafka-producer-release")
    _RELEASING.add(task)
    task.add_done_callback(_RELEASING.discard)
