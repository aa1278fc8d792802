"""CPU per record of the producer's client-side path, without a broker.

``AIOKafkaProducer.send()`` runs for real (serializer checks, partitioner, accumulator,
record encoding, record futures); the sender is replaced by a stand-in that takes
every closed batch, encodes it (``build()``: header and CRC) and completes it with
made-up offsets, as a broker answering instantly would. What is left out: the
Produce request's encoding, the socket and the event loop's I/O, which cost per
batch, not per record.

The loop is the peer benchmark's: ``send()`` without awaiting each future, finished
futures counted in bulk (``done()``, ``cancelled()``, ``exception()``). It also
reports the garbage collector's share (CPU time inside collections).

With ``--pattern P`` it runs the caller code of the peer benchmark's ``--pattern``
(``produce_patterns.py``: ``done``, ``gather``, ``callback``, ``flush``, ``batch``)
instead, so each way of handling ``send()``'s futures can be profiled without a broker.

With ``--concurrency N`` it runs the web-service pattern instead: N coroutines, each
looping ``await producer.send_and_wait(...)``; the stand-in answers each batch on the
next turn of the event loop, so what is measured is the client's CPU per awaited
record: ``send()``, the wake-up of the awaiting task and the loop's bookkeeping.

Usage: ``python -m benchmark.bench_send_path [--count N] [--repeat R] [--await-each]
[--concurrency N] [--pattern P] [--profile FILE]``
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections import deque
from types import MappingProxyType
from typing import Any

from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata
from aiokafka.producer import AIOKafkaProducer
from aiokafka.producer.accumulator import RecordAccumulator
from aiokafka.structs import BrokerMetadata, PartitionMetadata
from benchmark import produce_patterns, workerlib

TOPIC = "bench"


class _GcMeter:
    """CPU seconds spent inside garbage collections while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.seconds += time.process_time() - self._start
            self.collections[info["generation"]] += 1


def _cluster(partitions: int) -> ClusterMetadata:
    parts = {p: PartitionMetadata(TOPIC, p, 1, (1,), (1,), 0, 0) for p in range(partitions)}
    return ClusterMetadata(
        MappingProxyType({1: BrokerMetadata(1, "127.0.0.1", 9092, None)}),
        MappingProxyType({TOPIC: TopicMetadata(TOPIC, partitions=MappingProxyType(parts))}),
        created_at=time.monotonic(),
    )


class _Interest:
    """The producer's topic interest as ``start()`` leaves it, for ``partitions_for()``
    (``--pattern batch``): the one topic, its metadata there."""

    topics = frozenset({TOPIC})


class _Client:
    """What ``send()`` reads from the cluster client: the metadata snapshot and the
    topics kept."""

    def __init__(self, cluster: ClusterMetadata) -> None:
        self.cluster = cluster
        self.topics = frozenset({TOPIC})


async def _run(
    count: int, size: int, partitions: int, await_each: bool, concurrency: int, pattern: str = ""
) -> dict[str, float]:
    producer = AIOKafkaProducer(bootstrap_servers="127.0.0.1:9", linger_ms=5)
    cluster = _cluster(partitions)
    loop = asyncio.get_running_loop()
    offsets = [0] * partitions
    scheduled = [False]

    def answer() -> None:
        # What the sender and a broker answering at once would do with full batches.
        scheduled[0] = False
        while True:
            drained = acc.drain(cluster, {1}, 1 << 40, time.monotonic()).get(1)
            if not drained:
                return
            for batch in drained:
                batch.builder.build()
                base = offsets[batch.tp.partition]
                offsets[batch.tp.partition] += batch.record_count
                acc.complete(batch, base, -1, 0)

    def wakeup() -> None:
        if not scheduled[0]:
            scheduled[0] = True
            loop.call_soon(answer)

    config = producer.config
    acc = RecordAccumulator.from_config(
        config, linger_ms=0, wakeup=wakeup, on_batch_closed=producer._on_batch_closed
    )
    # The producer as start() leaves it, minus the network.
    producer._loop = loop
    producer._client = _Client(cluster)  # type: ignore[assignment]
    producer._interest = _Interest()  # type: ignore[assignment]
    producer._acc = acc
    producer._state = "running"
    producer._accepting = True
    producer._entry_from(TOPIC, cluster)

    value = b"x" * size
    pending: deque[Any] = deque()
    outcome = [0, 0]

    def reap(all_: bool) -> None:
        while pending and (all_ or pending[0].done()):
            fut = pending.popleft()
            outcome[0 if not fut.cancelled() and fut.exception() is None else 1] += 1

    meter = _GcMeter()
    gc.collect()
    gc.callbacks.append(meter)
    send, append = producer.send, pending.append
    try:
        start = time.process_time()
        if pattern:
            outcome[:] = await produce_patterns.run(producer, pattern, TOPIC, value, count)
        elif concurrency:
            left = [count]

            async def caller() -> None:
                while left[0] > 0:
                    left[0] -= 1
                    await producer.send_and_wait(TOPIC, value)

            await asyncio.gather(*(caller() for _ in range(concurrency)))
            outcome[0] = count
        elif await_each:
            for _ in range(count):
                fut = await send(TOPIC, value)
                answer()  # the open batch goes at once, as with linger_ms=0
                await fut
            outcome[0] = count
        else:
            for i in range(count):
                append(await send(TOPIC, value))
                if not i & 0x3FFF:
                    reap(False)
                    await asyncio.sleep(0)
            answer()
            reap(True)
        cpu = time.process_time() - start
    finally:
        gc.callbacks.remove(meter)
    if outcome != [count, 0]:
        raise RuntimeError(f"delivered/failed {outcome}, expected {count}")
    return {
        "us_per_record": cpu / count * 1e6,
        "gc_us_per_record": meter.seconds / count * 1e6,
        "gen2_collections": meter.collections[2],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=300_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--await-each", action="store_true", help="await every future")
    parser.add_argument(
        "--concurrency", type=int, default=0, help="coroutines looping send_and_wait"
    )
    parser.add_argument("--pattern", choices=workerlib.PATTERNS, default="")
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the last run")
    args = parser.parse_args()

    def once() -> dict[str, float]:
        return asyncio.run(
            _run(
                args.count,
                args.size,
                args.partitions,
                args.await_each,
                args.concurrency,
                args.pattern,
            )
        )

    runs = [once() for _ in range(args.repeat)]
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.runcall(once)
        profiler.dump_stats(args.profile)
    best = min(runs, key=lambda r: r["us_per_record"])
    each = ", ".join(f"{r['us_per_record']:.2f}" for r in runs)
    print(
        f"send path: {best['us_per_record']:.2f} us CPU/record "
        f"(GC {best['gc_us_per_record']:.2f}, {best['gen2_collections']:.0f} full collections), "
        f"best of {args.repeat}: {each}"
    )


if __name__ == "__main__":
    main()
