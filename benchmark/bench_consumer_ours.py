"""Benchmark worker for our consumer (``AIOKafkaConsumer``): the consumer scenarios.

Started by ``benchmark/run_all.py`` with the repository root on ``PYTHONPATH``; the
command line and the result line are the worker contract of ``benchmark/README.md``.
Manual assignment from offset 0, no group and no commits, as for every peer.

Set ``AIOKAFKA_BENCH_PROFILE=FILE`` to run the measured loop under cProfile: the stats
go to FILE and the top functions by own time to stderr (the harness never sets it).
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import time
from argparse import Namespace
from typing import Any

try:
    from benchmark import workerlib
except ModuleNotFoundError:  # started as a script: benchmark/ itself is on sys.path
    import workerlib  # type: ignore[no-redef,import-not-found]

import aiokafka
from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.structs import TopicPartition

CLIENT = "ours"


async def consume(args: Namespace, batch: bool) -> dict[str, Any]:
    """Read ``args.count`` records with ``getmany()`` or ``async for``."""
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    consumer.assign([TopicPartition(args.topic, p) for p in range(args.partitions)])
    # Warm-up, as the producer workers send one record first: one fetch before the
    # measured loop, then back to the start. Our protocol modules load on first use
    # (the Fetch/ListOffsets codecs are compiled then when there is no cached bytecode,
    # ~0.2 s on this machine); the peers import theirs with the package, before the loop.
    await consumer.seek_to_beginning()
    await consumer.getmany(timeout_ms=10_000, max_records=1)
    await consumer.seek_to_beginning()
    count = nbytes = 0
    target = args.count
    profile_path = os.environ.get("AIOKAFKA_BENCH_PROFILE")
    profiler = cProfile.Profile() if profile_path else None
    try:
        with workerlib.Meter() as meter:
            if profiler is not None:
                profiler.enable()
            if batch:
                deadline = time.monotonic() + 300
                while count < target and time.monotonic() < deadline:
                    batches = await consumer.getmany(timeout_ms=1000, max_records=target - count)
                    for records in batches.values():
                        for record in records:
                            nbytes += len(record.value or b"")
                        count += len(records)
            else:
                async for record in consumer:
                    nbytes += len(record.value or b"")
                    count += 1
                    if count >= target:
                        break
            if profiler is not None:
                profiler.disable()
    finally:
        await consumer.stop()
    if profiler is not None and profile_path:
        profiler.dump_stats(profile_path)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
        print(out.getvalue(), file=sys.stderr)
    if count != target or nbytes != count * args.size:
        raise RuntimeError(f"read {count} records / {nbytes} bytes, expected {target}")
    return meter.result(
        client=CLIENT,
        client_version=aiokafka.__version__,
        count=count,
        size=args.size,
        notes=("getmany()" if batch else "async for record in consumer")
        + (", AIOKAFKA_NO_EXTENSIONS=1" if _no_extensions() else ""),
    )


def _no_extensions() -> bool:
    """Whether this run has the C extensions switched off (the ``ours-pure`` client)."""
    return os.environ.get("AIOKAFKA_NO_EXTENSIONS", "") not in ("", "0")


def run(args: Namespace) -> dict[str, Any]:
    """Run ``args.scenario`` (consumer scenarios only)."""
    if args.api not in (None, "aio"):
        workerlib.unsupported(f"no --api {args.api!r}")  # e.g. "batch": producer only
    if args.scenario not in (workerlib.CONSUME_BATCH, workerlib.CONSUME_ITER):
        workerlib.unsupported("the consumer worker runs only the consumer scenarios")
    return workerlib.run(consume(args, batch=args.scenario == workerlib.CONSUME_BATCH))


if __name__ == "__main__":
    workerlib.emit(run(workerlib.parse_args()))
