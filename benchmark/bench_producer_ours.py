"""Benchmark worker for our producer (``aiokafka.producer.AIOKafkaProducer``).

Two ways to run it:

* By the peer-comparison harness (``benchmark/run_all.py``), with the worker
  contract of ``benchmark/README.md``: ``--scenario produce|latency|concurrent
  --bootstrap HOST:PORT --topic T --count N ...``; prints one result line.
* Standalone: ``PYTHONPATH=. python benchmark/bench_producer_ours.py --standalone
  [--count 1000000]`` starts a broker with ``tools.kafka.rig``, runs every producer
  scenario (``send`` throughput, ``create_batch``/``send_batch`` throughput,
  sequential ``send_and_wait`` latency, 200 concurrent ``send_and_wait`` loops) and
  prints a table.

The throughput loop uses ``send()`` without awaiting each record's future: delivery
is counted by one callback per future, as the harness's other workers do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from argparse import Namespace
from collections import deque
from typing import Any

try:
    from benchmark import produce_patterns, workerlib
except ModuleNotFoundError:  # started as a script: benchmark/ itself is on sys.path
    import produce_patterns  # type: ignore[no-redef,import-not-found]
    import workerlib  # type: ignore[no-redef,import-not-found]

import aiokafka
from aiokafka.errors import KafkaError
from aiokafka.producer import AIOKafkaProducer

CLIENT = "ours"


def _result(meter: workerlib.Meter, args: Namespace, **kw: Any) -> dict[str, Any]:
    return meter.result(client=CLIENT, client_version=aiokafka.__version__, size=args.size, **kw)


async def _producer(args: Namespace, **options: Any) -> AIOKafkaProducer:
    producer = AIOKafkaProducer(
        bootstrap_servers=args.bootstrap, acks=workerlib.acks_value(args.acks), **options
    )
    await producer.start()
    await producer.send_and_wait(args.topic, workerlib.payload(args.size))  # warm-up
    return producer


async def produce(args: Namespace) -> dict[str, Any]:
    """``send()`` in a tight loop; futures checked in bulk, never awaited one by one."""
    producer = await _producer(args, linger_ms=5)
    value = workerlib.payload(args.size)
    pending: deque[asyncio.Future[Any]] = deque()
    outcome = [0, 0]

    def reap(all_: bool) -> None:
        # Count finished futures from the oldest; they finish in order per partition.
        while pending and (all_ or pending[0].done()):
            fut = pending.popleft()
            outcome[0 if not fut.cancelled() and fut.exception() is None else 1] += 1

    send, topic, append = producer.send, args.topic, pending.append
    try:
        with workerlib.Meter() as meter:
            for i in range(args.count):
                append(await send(topic, value))
                if not i & 0x3FFF:
                    reap(False)
            await producer.flush()
            reap(True)
    finally:
        await producer.stop()
    return _result(
        meter,
        args,
        count=outcome[0],
        errors=outcome[1] + args.count - sum(outcome),
        notes="send() without awaiting each future, linger_ms=5",
    )


async def produce_batches(args: Namespace) -> dict[str, Any]:
    """``create_batch()`` / ``send_batch()``: the lowest-overhead path."""
    producer = await _producer(args, linger_ms=5)
    value = workerlib.payload(args.size)
    partitions = sorted(await producer.partitions_for(args.topic))
    futures = []
    sent = 0
    try:
        with workerlib.Meter() as meter:
            i = 0
            while sent < args.count:
                batch = producer.create_batch()
                append = batch.append
                n = 0
                while sent + n < args.count and append(value=value) is not None:
                    n += 1
                futures.append(
                    await producer.send_batch(
                        batch, args.topic, partition=partitions[i % len(partitions)]
                    )
                )
                sent += n
                i += 1
            results = await asyncio.gather(*futures, return_exceptions=True)
    finally:
        await producer.stop()
    errors = sum(1 for r in results if isinstance(r, BaseException))
    return _result(
        meter,
        args,
        count=sent if not errors else 0,
        errors=errors,
        notes="create_batch/send_batch",
    )


async def produce_pattern(args: Namespace) -> dict[str, Any]:
    """``--pattern``: the same caller code and settings as aiokafka 0.14's worker
    (``produce_patterns``)."""
    producer = await _producer(args, **produce_patterns.SETTINGS)
    meter, ok, notes = await produce_patterns.measure(producer, args)
    # Every record not delivered is an error: failed, or never sent.
    return _result(meter, args, count=ok, errors=args.count - ok, notes=notes)


async def send_and_wait(args: Namespace, concurrency: int) -> dict[str, Any]:
    """``concurrency`` coroutines each awaiting ``send_and_wait`` in a loop."""
    linger = args.linger_ms or 0
    producer = await _producer(args, linger_ms=linger)
    value = workerlib.payload(args.size)
    latencies: list[float] = []
    remaining = [args.count]
    failed = [0]
    perf = time.perf_counter

    async def sender() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            t0 = perf()
            try:
                await producer.send_and_wait(args.topic, value)
            except KafkaError:
                failed[0] += 1
            latencies.append((perf() - t0) * 1e6)

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


def run(args: Namespace) -> dict[str, Any]:
    """Run ``args.scenario`` (the harness contract)."""
    if args.api not in (None, "aio", "batch"):
        workerlib.unsupported(f"no --api {args.api!r}")
    if args.api == "batch" and args.scenario != workerlib.PRODUCE:
        workerlib.unsupported("the batch API is measured for throughput only")
    if args.scenario == workerlib.PRODUCE:
        if args.pattern is not None:
            return workerlib.run(produce_pattern(args))
        return workerlib.run(produce_batches(args) if args.api == "batch" else produce(args))
    if args.scenario == workerlib.LATENCY:
        return workerlib.run(send_and_wait(args, 1))
    if args.scenario == workerlib.CONCURRENT:
        return workerlib.run(send_and_wait(args, args.concurrency))
    workerlib.unsupported("the producer worker has no consumer scenarios")


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


def standalone(argv: list[str]) -> None:
    """Start a broker, run every scenario, print a table (and JSON lines)."""
    from tools.kafka.rig import start_single

    parser = argparse.ArgumentParser()
    parser.add_argument("--standalone", action="store_true")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--latency-count", type=int, default=5000)
    parser.add_argument("--concurrent-count", type=int, default=40_000)
    parser.add_argument("--only", default="", help="comma list: produce,batch,latency,concurrent")
    opts = parser.parse_args(argv)
    only = set(filter(None, opts.only.split(",")))
    cluster = start_single()
    rows = []
    try:
        plan = [
            ("produce", workerlib.PRODUCE, None, opts.count),
            ("batch", workerlib.PRODUCE, "batch", opts.count),
            ("latency", workerlib.LATENCY, None, opts.latency_count),
            ("concurrent", workerlib.CONCURRENT, None, opts.concurrent_count),
        ]
        for name, scenario, api, count in plan:
            if only and name not in only:
                continue
            topic = cluster.create_topic(f"bench-{name}-{time.time_ns()}", 1)
            args = Namespace(
                scenario=scenario,
                bootstrap=cluster.bootstrap_servers,
                topic=topic,
                count=count,
                size=100,
                partitions=1,
                acks="1",
                concurrency=200,
                api=api,
            )
            result = run(args)
            result["max_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            rows.append((name, result))
            print(
                json.dumps(
                    {"scenario": name, **{k: v for k, v in result.items() if k != "latencies_us"}}
                ),
                flush=True,
            )
    finally:
        cluster.stop()
    print(
        f"{'scenario':<11} {'msgs/s':>10} {'MB/s':>7} {'CPU us/msg':>10} "
        f"{'p50 us':>8} {'p99 us':>8} {'RSS MB':>7}"
    )
    for name, r in rows:
        lat = r.get("latencies_us") or []
        p50 = f"{_percentile(lat, 50):8.0f}" if lat else f"{'':>8}"
        p99 = f"{_percentile(lat, 99):8.0f}" if lat else f"{'':>8}"
        print(
            f"{name:<11} {r['count'] / r['seconds']:>10.0f} "
            f"{r['count'] * 100 / r['seconds'] / 1e6:>7.1f} "
            f"{r['cpu_s'] / r['count'] * 1e6:>10.2f} {p50} {p99} "
            f"{r['max_rss_kb'] / 1024:>7.0f}"
        )


if __name__ == "__main__":
    if "--standalone" in sys.argv:
        standalone(sys.argv[1:])
    else:
        workerlib.emit(run(workerlib.parse_args()))
