"""Benchmark worker for aiokafka 0.14 from PyPI (the project we are replacing).

It runs in ``benchmark/.venvs/aiokafka014`` (created by the harness) because the PyPI
package has our import name; the harness starts it without the repository root on
``sys.path``, so ``import aiokafka`` finds the PyPI one. The command line and the result
line are the worker contract of ``benchmark/README.md``.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from argparse import Namespace
from typing import Any

try:
    from benchmark import produce_patterns, workerlib
except ModuleNotFoundError:  # started as a script: benchmark/ itself is on sys.path
    import produce_patterns  # type: ignore[no-redef,import-not-found]
    import workerlib  # type: ignore[no-redef,import-not-found]

# Imported by name so that type checkers run from the repository (which see OUR aiokafka
# under this name) do not check this worker against the wrong API.
aiokafka: Any = importlib.import_module("aiokafka")
CLIENT = "aiokafka-0.14"


def _check_version() -> None:
    if not aiokafka.__version__.startswith("0."):
        workerlib.unsupported(
            f"imported aiokafka {aiokafka.__version__} from {aiokafka.__file__}, not 0.x: "
            "run this worker with the benchmark/.venvs/aiokafka014 interpreter"
        )


def _result(meter: workerlib.Meter, args: Namespace, **kw: Any) -> dict[str, Any]:
    return meter.result(client=CLIENT, client_version=aiokafka.__version__, size=args.size, **kw)


async def _producer(args: Namespace, **options: Any) -> Any:
    producer = aiokafka.AIOKafkaProducer(
        bootstrap_servers=args.bootstrap, acks=workerlib.acks_value(args.acks), **options
    )
    await producer.start()
    await producer.send_and_wait(args.topic, workerlib.payload(args.size))  # warm-up
    return producer


async def produce(args: Namespace) -> dict[str, Any]:
    producer = await _producer(args)
    value = workerlib.payload(args.size)
    outcome = {"ok": 0, "failed": 0}

    all_done = asyncio.Event()

    def done(fut: asyncio.Future[Any]) -> None:
        outcome["failed" if fut.exception() is not None else "ok"] += 1
        if outcome["ok"] + outcome["failed"] == args.count:
            all_done.set()

    send, topic = producer.send, args.topic
    try:
        with workerlib.Meter() as meter:
            for _ in range(args.count):
                # send() waits only while the accumulator is full (backpressure).
                (await send(topic, value)).add_done_callback(done)
            await producer.flush()
            # flush() returns when batches are done; their futures' callbacks run next.
            await asyncio.wait_for(all_done.wait(), 60)
    finally:
        await producer.stop()
    return _result(meter, args, count=outcome["ok"], errors=outcome["failed"], notes="defaults")


async def produce_pattern(args: Namespace) -> dict[str, Any]:
    """``--pattern``: the same caller code and settings as our worker
    (``produce_patterns``)."""
    producer = await _producer(args, **produce_patterns.SETTINGS)
    meter, ok, notes = await produce_patterns.measure(producer, args)
    # Every record not delivered is an error: failed, or never sent.
    return _result(meter, args, count=ok, errors=args.count - ok, notes=notes)


async def send_and_wait(args: Namespace, concurrency: int) -> dict[str, Any]:
    linger = args.linger_ms or 0
    producer = await _producer(args, linger_ms=linger)
    value = workerlib.payload(args.size)
    latencies: list[float] = []
    remaining = [args.count]
    failed = [0]

    async def sender() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            t0 = time.perf_counter()
            try:
                await producer.send_and_wait(args.topic, value)
            except aiokafka.errors.KafkaError:
                failed[0] += 1
            latencies.append((time.perf_counter() - t0) * 1e6)

    try:
        with workerlib.Meter() as meter:
            await asyncio.gather(*(sender() for _ in range(concurrency)))
    finally:
        await producer.stop()
    return _result(
        meter,
        args,
        count=len(latencies) - failed[0],
        errors=failed[0],
        latencies_us=latencies,
        notes=f"send_and_wait, {concurrency} coroutine(s), linger_ms={linger}",
    )


async def consume(args: Namespace, batch: bool) -> dict[str, Any]:
    consumer = aiokafka.AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    consumer.assign([aiokafka.TopicPartition(args.topic, p) for p in range(args.partitions)])
    count = nbytes = 0
    target = args.count
    try:
        with workerlib.Meter() as meter:
            if batch:
                deadline = time.monotonic() + 300
                while count < target and time.monotonic() < deadline:
                    batches = await consumer.getmany(timeout_ms=1000, max_records=target - count)
                    for records in batches.values():
                        for msg in records:
                            nbytes += len(msg.value)
                        count += len(records)
            else:
                async for msg in consumer:
                    nbytes += len(msg.value)
                    count += 1
                    if count >= target:
                        break
    finally:
        await consumer.stop()
    if count != target or nbytes != count * args.size:
        raise RuntimeError(f"read {count} records / {nbytes} bytes, expected {target}")
    return _result(
        meter, args, count=count, notes="getmany()" if batch else "async for msg in consumer"
    )


def run(args: Namespace) -> dict[str, Any]:
    """Run ``args.scenario``."""
    _check_version()
    if args.api not in (None, "aio"):
        workerlib.unsupported(f"aiokafka has no --api {args.api!r}")
    if args.scenario == workerlib.PRODUCE:
        if args.pattern is not None:
            return workerlib.run(produce_pattern(args))
        return workerlib.run(produce(args))
    if args.scenario == workerlib.LATENCY:
        return workerlib.run(send_and_wait(args, 1))
    if args.scenario == workerlib.CONCURRENT:
        return workerlib.run(send_and_wait(args, args.concurrency))
    return workerlib.run(consume(args, batch=args.scenario == workerlib.CONSUME_BATCH))


if __name__ == "__main__":
    workerlib.emit(run(workerlib.parse_args()))
