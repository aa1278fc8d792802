"""The produce patterns of ``--pattern`` (``workerlib.PATTERNS``), for any producer with
aiokafka's API: ``send()`` returning a future, ``flush()``, ``create_batch()`` and
``send_batch()``.

Shared by our worker and aiokafka 0.14's, so both clients run the very same caller
code. Standard library only: aiokafka 0.14's worker runs without the repository root on
``sys.path``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

try:
    from benchmark import workerlib
except ModuleNotFoundError:  # started as a script: benchmark/ itself is on sys.path
    import workerlib  # type: ignore[no-redef,import-not-found]


def _failed(fut: asyncio.Future[Any]) -> bool:
    return fut.cancelled() or fut.exception() is not None


async def done_checks(producer: Any, topic: str, value: bytes, count: int) -> tuple[int, int]:
    """Futures kept, counted with ``done()`` from the oldest every 16,384 sends."""
    pending: deque[asyncio.Future[Any]] = deque()
    outcome = [0, 0]

    def reap(all_: bool) -> None:
        while pending and (all_ or pending[0].done()):
            outcome[_failed(pending.popleft())] += 1

    send, append = producer.send, pending.append
    for i in range(count):
        append(await send(topic, value))
        if not i & 0x3FFF:
            reap(False)
    await producer.flush()
    reap(True)
    return outcome[0], outcome[1]


async def gather(producer: Any, topic: str, value: bytes, count: int) -> tuple[int, int]:
    """Futures collected and awaited with ``asyncio.gather`` every 10,000."""
    ok = failed = 0
    futures: list[asyncio.Future[Any]] = []
    send, append = producer.send, futures.append
    for i in range(1, count + 1):
        append(await send(topic, value))
        if not i % workerlib.GATHER_EVERY or i == count:
            for r in await asyncio.gather(*futures, return_exceptions=True):
                if isinstance(r, BaseException):
                    failed += 1
                else:
                    ok += 1
            futures.clear()
    return ok, failed


async def callbacks(producer: Any, topic: str, value: bytes, count: int) -> tuple[int, int]:
    """``add_done_callback`` on every future; done when every callback ran."""
    outcome = [0, 0]
    all_done = asyncio.get_running_loop().create_future()

    def done(fut: asyncio.Future[Any]) -> None:
        outcome[_failed(fut)] += 1
        if outcome[0] + outcome[1] == count and not all_done.done():
            all_done.set_result(None)

    send = producer.send
    for _ in range(count):
        (await send(topic, value)).add_done_callback(done)
    await producer.flush()
    # flush() returns when the batches are done; their futures' callbacks run next.
    await asyncio.wait_for(all_done, 60)
    return outcome[0], outcome[1]


async def flush(producer: Any, topic: str, value: bytes, count: int) -> tuple[int, int]:
    """``await send()`` for every record, then ``await flush()``; outcomes read after."""
    futures: list[asyncio.Future[Any]] = []
    send, append = producer.send, futures.append
    for _ in range(count):
        append(await send(topic, value))
    await producer.flush()
    failed = sum(1 for f in futures if not f.done() or _failed(f))
    return count - failed, failed


async def batches(
    producer: Any, topic: str, value: bytes, count: int, partitions: list[int]
) -> tuple[int, int]:
    """``create_batch()`` filled until full, ``send_batch()``, futures gathered at the end."""
    futures = []
    sent = i = 0
    while sent < count:
        batch = producer.create_batch()
        append = batch.append
        n = 0
        while sent + n < count and append(key=None, value=value, timestamp=None) is not None:
            n += 1
        futures.append(
            (n, await producer.send_batch(batch, topic, partition=partitions[i % len(partitions)]))
        )
        sent += n
        i += 1
    results = await asyncio.gather(*(f for _, f in futures), return_exceptions=True)
    failed = sum(
        n for (n, _), r in zip(futures, results, strict=True) if isinstance(r, BaseException)
    )
    return sent - failed, failed


async def run(producer: Any, pattern: str, topic: str, value: bytes, count: int) -> tuple[int, int]:
    """Send ``count`` records the way ``pattern`` says; ``(delivered, failed)``."""
    if pattern == "batch":
        partitions = sorted(await producer.partitions_for(topic))
        return await batches(producer, topic, value, count, partitions)
    patterns = {"done": done_checks, "gather": gather, "callback": callbacks, "flush": flush}
    return await patterns[pattern](producer, topic, value, count)


#: The settings both workers give the producer for ``--pattern`` (ours are the defaults).
SETTINGS: dict[str, Any] = {"linger_ms": 5, "max_batch_size": 262144}


async def measure(producer: Any, args: Any) -> tuple[workerlib.Meter, int, str]:
    """Run ``args.pattern`` on a started producer under a meter, then stop it.

    Returns the meter, the records delivered and the result's notes; both workers
    (ours and aiokafka 0.14's) build their result line from these.
    """
    try:
        with workerlib.Meter() as meter:
            ok, _ = await run(
                producer, args.pattern, args.topic, workerlib.payload(args.size), args.count
            )
    finally:
        await producer.stop()
    notes = f"pattern {args.pattern}, " + ", ".join(f"{k}={v}" for k, v in SETTINGS.items())
    return meter, ok, notes
