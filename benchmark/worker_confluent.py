"""Benchmark worker for confluent-kafka: ``--api sync`` (Producer/Consumer) or ``--api aio``.

The command line and the result line are the worker contract of ``benchmark/README.md``;
the settings chosen per scenario are listed there too.
"""

from __future__ import annotations

import asyncio
import threading
import time
from argparse import Namespace
from collections.abc import Callable
from typing import Any

import confluent_kafka

try:
    from benchmark import workerlib
except ModuleNotFoundError:  # started as a script: benchmark/ itself is on sys.path
    import workerlib  # type: ignore[no-redef,import-not-found]

CLIENT_VERSION = f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"


def _producer_conf(args: Namespace, **extra: Any) -> dict[str, Any]:
    conf: dict[str, Any] = {"bootstrap.servers": args.bootstrap, "acks": args.acks}
    conf.update(extra)
    return conf


def _consumer_conf(args: Namespace) -> dict[str, Any]:
    return {
        "bootstrap.servers": args.bootstrap,
        "group.id": f"bench-{args.topic}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        # Once more than queued.min.messages (100,000) records are prefetched, librdkafka
        # (>= 2.4) postpones the next fetch by fetch.queue.backoff.ms, 1 s by default: a
        # reader that drains 100,000 records in well under a second then idles. 10 ms keeps
        # the prefetch going (librdkafka's docs say to lower it when the queue drains fast).
        "fetch.queue.backoff.ms": 10,
    }


def _assignment(args: Namespace) -> list[confluent_kafka.TopicPartition]:
    return [
        confluent_kafka.TopicPartition(args.topic, p, confluent_kafka.OFFSET_BEGINNING)
        for p in range(args.partitions)
    ]


def _result(meter: workerlib.Meter, args: Namespace, **kw: Any) -> dict[str, Any]:
    client = "confluent-aio" if args.api == "aio" else "confluent"
    return meter.result(client=client, client_version=CLIENT_VERSION, size=args.size, **kw)


def _warm_up(producer: confluent_kafka.Producer, args: Namespace) -> None:
    producer.produce(args.topic, workerlib.payload(args.size))
    if producer.flush(30) != 0:
        raise RuntimeError("warm-up record not delivered within 30 s")


# --------------------------------------------------------------------------- sync API


def sync_produce(args: Namespace) -> dict[str, Any]:
    producer = confluent_kafka.Producer(_producer_conf(args))
    _warm_up(producer, args)
    value = workerlib.payload(args.size)
    outcome = {"ok": 0, "failed": 0}

    def delivered(err: Any, _msg: Any) -> None:
        outcome["failed" if err is not None else "ok"] += 1

    produce, poll, topic = producer.produce, producer.poll, args.topic
    with workerlib.Meter() as meter:
        for _ in range(args.count):
            while True:
                try:
                    produce(topic, value, on_delivery=delivered)
                    break
                except BufferError:
                    # The local queue is full: serve delivery reports until there is room.
                    poll(0.05)
        if producer.flush(120) != 0:
            raise RuntimeError("flush timed out")
    return _result(
        meter, args, count=outcome["ok"], errors=outcome["failed"], notes="librdkafka defaults"
    )


def sync_latency(args: Namespace) -> dict[str, Any]:
    producer = confluent_kafka.Producer(_producer_conf(args, **{"linger.ms": 0}))
    _warm_up(producer, args)
    value = workerlib.payload(args.size)
    latencies: list[float] = []
    failed = 0
    with workerlib.Meter() as meter:
        for _ in range(args.count):
            t0 = time.perf_counter()
            producer.produce(args.topic, value)
            if producer.flush(30) != 0:
                failed += 1
            latencies.append((time.perf_counter() - t0) * 1e6)
    return _result(
        meter,
        args,
        count=args.count - failed,
        errors=failed,
        latencies_us=latencies,
        notes="linger.ms=0, produce()+flush() per call",
    )


async def _sync_concurrent(args: Namespace) -> dict[str, Any]:
    producer = confluent_kafka.Producer(_producer_conf(args, **{"linger.ms": args.linger_ms or 0}))
    _warm_up(producer, args)
    loop = asyncio.get_running_loop()
    stop = threading.Event()

    def poller() -> None:
        while not stop.is_set():
            producer.poll(0.05)

    thread = threading.Thread(target=poller, name="bench-poll", daemon=True)
    thread.start()
    value = workerlib.payload(args.size)
    latencies: list[float] = []
    remaining = [args.count]
    failed = [0]

    def resolve(fut: asyncio.Future[None], err: Any) -> None:
        if err is not None:
            fut.set_exception(confluent_kafka.KafkaException(err))
        else:
            fut.set_result(None)

    def report_to(fut: asyncio.Future[None]) -> Callable[[Any, Any], None]:
        # Runs on the poll thread: hand the outcome to the event loop's thread.
        def on_delivery(err: Any, _msg: Any) -> None:
            loop.call_soon_threadsafe(resolve, fut, err)

        return on_delivery

    async def sender() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            fut: asyncio.Future[None] = loop.create_future()
            t0 = time.perf_counter()
            producer.produce(args.topic, value, on_delivery=report_to(fut))
            try:
                await fut
            except confluent_kafka.KafkaException:
                failed[0] += 1
            latencies.append((time.perf_counter() - t0) * 1e6)

    try:
        with workerlib.Meter() as meter:
            await asyncio.gather(*(sender() for _ in range(args.concurrency)))
    finally:
        stop.set()
        thread.join()
    return _result(
        meter,
        args,
        count=len(latencies) - failed[0],
        errors=failed[0],
        latencies_us=latencies,
        notes=f"linger.ms={args.linger_ms or 0}, poll thread + call_soon_threadsafe bridge",
    )


def _sync_consume(args: Namespace, batch: bool) -> dict[str, Any]:
    consumer = confluent_kafka.Consumer(_consumer_conf(args))
    # Connect and fetch metadata before the clock starts, as the asyncio clients' start() does.
    consumer.list_topics(args.topic, timeout=30)
    consumer.assign(_assignment(args))
    count = nbytes = 0
    target = args.count
    deadline = time.monotonic() + 300
    with workerlib.Meter() as meter:
        if batch:
            consume = consumer.consume
            while count < target:
                for msg in consume(num_messages=min(1000, target - count), timeout=1.0):
                    if msg.error() is not None:
                        raise RuntimeError(str(msg.error()))
                    nbytes += len(msg.value() or b"")
                    count += 1
                if time.monotonic() > deadline:
                    break
        else:
            poll = consumer.poll
            while count < target:
                one = poll(1.0)
                if one is None:
                    if time.monotonic() > deadline:
                        break
                    continue
                if one.error() is not None:
                    raise RuntimeError(str(one.error()))
                nbytes += len(one.value() or b"")
                count += 1
    consumer.close()
    _check_read(args, count, nbytes)
    api = "consume(num_messages=1000)" if batch else "poll()"
    api += ", fetch.queue.backoff.ms=10"
    return _result(meter, args, count=count, notes=api)


# --------------------------------------------------------------------------- aio API


def _aio_module() -> Any:
    try:
        from confluent_kafka import aio
    except ImportError:
        workerlib.unsupported(f"confluent-kafka {CLIENT_VERSION} has no confluent_kafka.aio")
    return aio


async def _aio_produce(args: Namespace) -> dict[str, Any]:
    aio = _aio_module()
    # AIOProducer hands batches of 1000 to produce_batch(), which fails (not blocks) when
    # librdkafka's queue is full; a queue that holds the whole run keeps that out of the way.
    conf = _producer_conf(args, **{"queue.buffering.max.messages": 2 * args.count + 10})
    producer = aio.AIOProducer(conf)
    await (await producer.produce(args.topic, workerlib.payload(args.size)))
    value = workerlib.payload(args.size)
    outcome = {"ok": 0, "failed": 0}

    all_done = asyncio.Event()

    def done(fut: asyncio.Future[Any]) -> None:
        outcome["failed" if fut.exception() is not None else "ok"] += 1
        if outcome["ok"] + outcome["failed"] == args.count:
            all_done.set()

    with workerlib.Meter() as meter:
        for _ in range(args.count):
            (await producer.produce(args.topic, value)).add_done_callback(done)
        await producer.flush()
        # The futures are resolved from the executor's thread without waking the loop, so
        # their done-callbacks may still be queued when flush() returns.
        await asyncio.wait_for(all_done.wait(), 60)
    await producer.close()
    return _result(
        meter, args, count=outcome["ok"], errors=outcome["failed"], notes="AIOProducer defaults"
    )


async def _aio_send_and_wait(args: Namespace, concurrency: int) -> dict[str, Any]:
    aio = _aio_module()
    producer = aio.AIOProducer(
        _producer_conf(args, **{"linger.ms": 0}), batch_size=1, buffer_timeout=0
    )
    stop = asyncio.Event()

    async def poller() -> None:
        # AIOProducer serves delivery reports only inside poll()/flush(); this is the loop
        # an application has to run for send-and-wait to complete promptly.
        while not stop.is_set():
            await producer.poll(0.05)

    poll_task = asyncio.create_task(poller())
    value = workerlib.payload(args.size)
    await (await producer.produce(args.topic, value))
    latencies: list[float] = []
    remaining = [args.count]
    failed = [0]

    async def sender() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            t0 = time.perf_counter()
            try:
                await (await producer.produce(args.topic, value))
            except confluent_kafka.KafkaException:
                failed[0] += 1
            latencies.append((time.perf_counter() - t0) * 1e6)

    try:
        with workerlib.Meter() as meter:
            await asyncio.gather(*(sender() for _ in range(concurrency)))
    finally:
        stop.set()
        await poll_task
        await producer.close()
    return _result(
        meter,
        args,
        count=len(latencies) - failed[0],
        errors=failed[0],
        latencies_us=latencies,
        notes="batch_size=1, linger.ms=0, background poll(0.05) task",
    )


async def _aio_consume(args: Namespace, batch: bool) -> dict[str, Any]:
    aio = _aio_module()
    consumer = aio.AIOConsumer(_consumer_conf(args))
    await consumer.list_topics(args.topic, timeout=30)
    await consumer.assign(_assignment(args))
    count = nbytes = 0
    target = args.count
    deadline = time.monotonic() + 300
    with workerlib.Meter() as meter:
        while count < target and time.monotonic() < deadline:
            if batch:
                msgs = await consumer.consume(num_messages=min(1000, target - count), timeout=1.0)
            else:
                one = await consumer.poll(1.0)
                msgs = [] if one is None else [one]
            for msg in msgs:
                if msg.error() is not None:
                    raise RuntimeError(str(msg.error()))
                nbytes += len(msg.value() or b"")
                count += 1
    await consumer.close()
    _check_read(args, count, nbytes)
    api = "await consume(num_messages=1000)" if batch else "await poll()"
    api += ", fetch.queue.backoff.ms=10"
    return _result(meter, args, count=count, notes=api)


# --------------------------------------------------------------------------- entry point


def _check_read(args: Namespace, count: int, nbytes: int) -> None:
    if count != args.count or nbytes != count * args.size:
        raise RuntimeError(f"read {count} records / {nbytes} bytes, expected {args.count}")


def run(args: Namespace) -> dict[str, Any]:
    """Run ``args.scenario`` with the API variant ``args.api`` (default ``sync``)."""
    scenario = args.scenario
    if args.api in (None, "sync"):
        if scenario == workerlib.PRODUCE:
            return sync_produce(args)
        if scenario == workerlib.LATENCY:
            return sync_latency(args)
        if scenario == workerlib.CONCURRENT:
            return asyncio.run(_sync_concurrent(args))
        return _sync_consume(args, batch=scenario == workerlib.CONSUME_BATCH)
    if args.api == "aio":
        if scenario == workerlib.PRODUCE:
            return asyncio.run(_aio_produce(args))
        if scenario == workerlib.LATENCY:
            return asyncio.run(_aio_send_and_wait(args, 1))
        if scenario == workerlib.CONCURRENT:
            return asyncio.run(_aio_send_and_wait(args, args.concurrency))
        return asyncio.run(_aio_consume(args, batch=scenario == workerlib.CONSUME_BATCH))
    workerlib.unsupported(f"--api must be sync or aio, not {args.api!r}")


if __name__ == "__main__":
    workerlib.emit(run(workerlib.parse_args()))
