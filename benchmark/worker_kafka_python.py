"""Benchmark worker for kafka-python (synchronous; threads stand in for coroutines).

The command line and the result line are the worker contract of ``benchmark/README.md``.
"""

from __future__ import annotations

import threading
import time
import warnings
from argparse import Namespace
from typing import Any

with warnings.catch_warnings():
    # kafka-python reads its bundled schemas with deprecated importlib.resources calls.
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

try:
    from benchmark import workerlib
except ModuleNotFoundError:  # started as a script: benchmark/ itself is on sys.path
    import workerlib  # type: ignore[no-redef,import-not-found]

CLIENT = "kafka-python"
CLIENT_VERSION = kafka.__version__


def _producer(args: Namespace) -> Any:
    producer = KafkaProducer(bootstrap_servers=args.bootstrap, acks=workerlib.acks_value(args.acks))
    producer.send(args.topic, workerlib.payload(args.size)).get(timeout=30)  # warm-up
    return producer


def _result(meter: workerlib.Meter, args: Namespace, **kw: Any) -> dict[str, Any]:
    return meter.result(client=CLIENT, client_version=CLIENT_VERSION, size=args.size, **kw)


def produce(args: Namespace) -> dict[str, Any]:
    producer = _producer(args)
    value = workerlib.payload(args.size)
    failed = [0]

    def on_error(_exc: BaseException) -> None:
        failed[0] += 1

    send, topic = producer.send, args.topic
    with workerlib.Meter() as meter:
        for _ in range(args.count):
            send(topic, value).add_errback(on_error)
        # flush() returns once every batch is done; failures went to the errbacks.
        producer.flush(timeout=300)
    producer.close()
    return _result(meter, args, count=args.count - failed[0], errors=failed[0], notes="defaults")


def latency(args: Namespace) -> dict[str, Any]:
    producer = _producer(args)
    value = workerlib.payload(args.size)
    latencies: list[float] = []
    with workerlib.Meter() as meter:
        for _ in range(args.count):
            t0 = time.perf_counter()
            producer.send(args.topic, value).get(timeout=30)
            latencies.append((time.perf_counter() - t0) * 1e6)
    producer.close()
    return _result(
        meter, args, count=args.count, latencies_us=latencies, notes="send().get() per call"
    )


def concurrent(args: Namespace) -> dict[str, Any]:
    producer = _producer(args)
    value = workerlib.payload(args.size)
    latencies: list[float] = []
    failed = [0]
    lock = threading.Lock()
    remaining = [args.count]

    def sender() -> None:
        while True:
            with lock:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
            t0 = time.perf_counter()
            try:
                producer.send(args.topic, value).get(timeout=60)
                ok = True
            except kafka.errors.KafkaError:
                ok = False
            elapsed = (time.perf_counter() - t0) * 1e6
            with lock:
                latencies.append(elapsed)
                failed[0] += not ok

    threads = [threading.Thread(target=sender, daemon=True) for _ in range(args.concurrency)]
    with workerlib.Meter() as meter:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    producer.close()
    return _result(
        meter,
        args,
        count=len(latencies) - failed[0],
        errors=failed[0],
        latencies_us=latencies,
        notes=f"{args.concurrency} threads, send().get()",
    )


def consume(args: Namespace, batch: bool) -> dict[str, Any]:
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        consumer_timeout_ms=30_000,  # iteration ends instead of hanging if records are missing
    )
    consumer.assign([TopicPartition(args.topic, p) for p in range(args.partitions)])
    consumer.topics()  # connect and fetch metadata before the clock starts
    count = nbytes = 0
    target = args.count
    deadline = time.monotonic() + 300
    with workerlib.Meter() as meter:
        if batch:
            while count < target and time.monotonic() < deadline:
                wanted = min(500, target - count)
                for records in consumer.poll(timeout_ms=1000, max_records=wanted).values():
                    for msg in records:
                        nbytes += len(msg.value)
                    count += len(records)
        else:
            for msg in consumer:
                nbytes += len(msg.value)
                count += 1
                if count >= target:
                    break
    consumer.close()
    if count != target or nbytes != count * args.size:
        raise RuntimeError(f"read {count} records / {nbytes} bytes, expected {target}")
    api = "poll() (max_poll_records=500)" if batch else "for msg in consumer"
    return _result(meter, args, count=count, notes=api)


def run(args: Namespace) -> dict[str, Any]:
    """Run ``args.scenario``."""
    if args.api not in (None, "sync"):
        workerlib.unsupported(f"kafka-python has no --api {args.api!r}")
    if args.scenario == workerlib.PRODUCE:
        return produce(args)
    if args.scenario == workerlib.LATENCY:
        return latency(args)
    if args.scenario == workerlib.CONCURRENT:
        return concurrent(args)
    return consume(args, batch=args.scenario == workerlib.CONSUME_BATCH)


if __name__ == "__main__":
    workerlib.emit(run(workerlib.parse_args()))
