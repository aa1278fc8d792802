"""Benchmark worker for our consumer (contract: benchmark/README.md, "The worker contract").

Scenarios ``consume-batch`` (``getmany``) and ``consume-iter`` (``async for``); the
topic is pre-filled by the harness. Producer scenarios exit 3 (``bench_producer_ours.py``
implements them).

Extra options for manual runs (not used by the harness):

* ``--profile FILE``: run the measured loop under cProfile and write the stats to
  FILE (a summary of the top functions goes to stderr);
* ``--self-broker``: start a broker with ``tools.kafka.rig``, fill a topic with
  ``--count`` records of ``--size`` bytes using confluent-kafka, run, stop it
  (``--bootstrap``/``--topic`` are then ignored).
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import sys
from argparse import Namespace
from typing import Any

try:
    from benchmark import workerlib
except ImportError:  # run as a script without the repository root on sys.path
    import workerlib  # type: ignore[no-redef]

import aiokafka
from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.structs import TopicPartition

CLIENT = "ours"


async def consume(
    args: Namespace, batch: bool, profiler: cProfile.Profile | None
) -> dict[str, Any]:
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    tps = [TopicPartition(args.topic, p) for p in range(args.partitions)]
    consumer.assign(tps)
    for tp in tps:
        consumer.seek(tp, 0)
    count = nbytes = 0
    target = args.count
    try:
        with workerlib.Meter() as meter:
            if profiler is not None:
                profiler.enable()
            if batch:
                while count < target:
                    batches = await consumer.getmany(timeout_ms=1000, max_records=target - count)
                    for records in batches.values():
                        for msg in records:
                            nbytes += len(msg.value)  # type: ignore[arg-type]
                        count += len(records)
            else:
                async for msg in consumer:
                    nbytes += len(msg.value)  # type: ignore[arg-type]
                    count += 1
                    if count >= target:
                        break
            if profiler is not None:
                profiler.disable()
    finally:
        await consumer.stop()
    if count != target or nbytes != count * args.size:
        raise RuntimeError(f"read {count} records / {nbytes} bytes, expected {target}")
    return meter.result(
        client=CLIENT,
        client_version=aiokafka.__version__,
        count=count,
        size=args.size,
        notes="getmany(timeout_ms=1000)" if batch else "async for msg in consumer",
    )


def _fill(bootstrap: str, topic: str, count: int, size: int) -> None:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1000000}
    )
    value = workerlib.payload(size)
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush()


def main() -> int:
    parser = workerlib.build_parser(__doc__)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--self-broker", action="store_true")
    args = parser.parse_args()
    if args.scenario not in (workerlib.CONSUME_BATCH, workerlib.CONSUME_ITER):
        workerlib.unsupported(f"{args.scenario}: see bench_producer_ours.py")
    profiler = cProfile.Profile() if args.profile else None
    cluster = None
    if args.self_broker:
        from tools.kafka.rig import KafkaCluster

        cluster = KafkaCluster(1).start(timeout=120)
        args.bootstrap = cluster.bootstrap_servers
        args.topic = cluster.create_topic("bench-consumer", 1)
        args.partitions = 1
        _fill(args.bootstrap, args.topic, args.count, args.size)
    try:
        result = asyncio.run(consume(args, args.scenario == workerlib.CONSUME_BATCH, profiler))
    finally:
        if cluster is not None:
            cluster.stop()
    if profiler is not None:
        profiler.dump_stats(args.profile)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue(), file=sys.stderr)
    workerlib.emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
