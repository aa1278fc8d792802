"""What the caller's own handling of ``send()``'s futures costs, per future.

The ``gather`` and ``callback`` produce patterns (``produce_patterns.py``) spend CPU in
asyncio itself: ``asyncio.gather`` wraps every child (``_ensure_future``, a done
callback, ``_done_callback`` reading ``cancelled()``, ``exception()``, ``result()``),
and a done-callback is a loop callback plus the caller's function. This benchmark
measures that part alone, with no producer and no broker, for:

- ``asyncio``: plain ``loop.create_future()`` futures resolved with ``set_result``,
  the cheapest futures asyncio has (its C ``Future``): no client can hand out
  futures that cost the caller less in these patterns;
- ``ours``: the producer's record futures (``producer/futures.py``), one batch of
  ``--batch`` records resolved at once, as an acknowledged batch is.

Each round makes ``--batch`` futures, then (``gather``) gathers them and resolves
them, or (``callback``) adds one callback each, resolves them and runs the
callbacks; the time of that step over ``--batch`` is the cost per future. Rounds
alternate between the two kinds; the median and the minimum of the rounds are
printed, with the load average (the machine is shared).

Run: ``python -m benchmark.bench_future_floor [--batch 10000] [--rounds 30]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any

from aiokafka.producer.futures import BatchResults, RecordFuture, new_record_future
from aiokafka.structs import TopicPartition

Make = Callable[[int], tuple[list[Any], Callable[[], None]]]


def plain_futures(n: int) -> tuple[list[Any], Callable[[], None]]:
    futures = [asyncio.get_running_loop().create_future() for _ in range(n)]

    def resolve() -> None:
        for i, fut in enumerate(futures):
            fut.set_result(i)

    return futures, resolve


def record_futures(n: int) -> tuple[list[Any], Callable[[], None]]:
    results = BatchResults(asyncio.get_running_loop(), TopicPartition("t", 0))
    results.timestamps.extend([0] * n)
    futures = [new_record_future(RecordFuture, results, i) for i in range(n)]
    return futures, lambda: results.resolve(0, n, 0, -1, 0)


async def gather(make: Make, n: int) -> float:
    futures, resolve = make(n)
    started = time.perf_counter()
    gathered = asyncio.gather(*futures, return_exceptions=True)
    resolve()
    await gathered
    return time.perf_counter() - started


async def callback(make: Make, n: int) -> float:
    futures, resolve = make(n)
    outcome = [0, 0]
    done = asyncio.get_running_loop().create_future()

    def count(fut: Any) -> None:  # the callback pattern's own callback
        outcome[fut.cancelled() or fut.exception() is not None] += 1
        if outcome[0] + outcome[1] == n:
            done.set_result(None)

    started = time.perf_counter()
    for fut in futures:
        fut.add_done_callback(count)
    resolve()
    await done
    return time.perf_counter() - started


async def run(batch: int, rounds: int) -> dict[tuple[str, str], list[float]]:
    patterns: dict[str, Callable[[Make, int], Coroutine[Any, Any, float]]] = {
        "gather": gather,
        "callback": callback,
    }
    kinds: dict[str, Make] = {"asyncio": plain_futures, "ours": record_futures}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for pattern, measure in patterns.items():
            for kind, make in kinds.items():
                seconds = await measure(make, batch)
                times.setdefault((pattern, kind), []).append(seconds / batch * 1e9)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    load_before = os.getloadavg()
    times = asyncio.run(run(args.batch, args.rounds))
    load_after = os.getloadavg()
    print(
        f"futures per round {args.batch:,}, rounds {args.rounds}; load average (1 min) "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after"
    )
    print("| pattern | futures | ns per future, median | min |")
    print("|---|---|---|---|")
    for (pattern, kind), values in times.items():
        print(f"| {pattern} | {kind} | {statistics.median(values):,.0f} | {min(values):,.0f} |")


if __name__ == "__main__":
    main()
