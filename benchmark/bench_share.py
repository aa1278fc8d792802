"""Share-group consumption: records/s and client CPU per record with 1 and 3 members.

All members run in this process (so ``time.process_time()`` is the client's CPU for
every member together) against a single-node broker started with ``tools.kafka.rig``
(or ``--bootstrap``). Records are produced first, in the producer's normal batches;
each member acknowledges implicitly (the next poll accepts the previous one's
records). The clock starts when every member has its assignment. Run it::

    python -m benchmark.bench_share --count 100000
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from aiokafka import AIOKafkaProducer, AIOKafkaShareConsumer
from aiokafka._timeout import timeout
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType, NewTopic


@contextmanager
def broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap is not None:
        yield bootstrap
        return
    from benchmark.run_all import BROKER_RUNS_DIR
    from tools.kafka import rig

    rig.RUNS_DIR = BROKER_RUNS_DIR  # our own run directories (see run_all.Broker)
    cluster = rig.KafkaCluster(1, listeners=["PLAINTEXT"], heap="1g", label="bench-share")
    cluster.start()
    try:
        yield cluster.bootstrap_servers
    finally:
        cluster.stop()


async def prepare(bootstrap: str, count: int) -> tuple[str, str]:
    topic = f"bench-share-{uuid.uuid4().hex[:8]}"
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    async with AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        value = b"x" * 100
        for _ in range(count):
            await producer.send(topic, value)
        await producer.flush()
    return topic, value.decode()


async def run(bootstrap: str, topic: str, count: int, members: int) -> tuple[float, float]:
    group = f"bench-share-{uuid.uuid4().hex[:8]}"
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource(ConfigResourceType.GROUP, group): [
                    AlterConfigOp("share.auto.offset.reset", "earliest")
                ]
            }
        )
    consumers = [
        AIOKafkaShareConsumer(topic, group_id=group, bootstrap_servers=bootstrap)
        for _ in range(members)
    ]
    for c in consumers:
        await c.start()
    seen = 0
    done = asyncio.Event()

    async def work(c: AIOKafkaShareConsumer) -> None:
        nonlocal seen
        while not done.is_set():
            batch = await c.getmany(timeout_ms=200)
            seen += sum(len(r) for r in batch.values())
            if seen >= count:
                done.set()

    # Joining takes a few heartbeats; measure consumption only.
    async with timeout(60):
        while not all(c.assignment() for c in consumers):  # noqa: ASYNC110 - no event to wait on
            await asyncio.sleep(0.05)
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(work(c) for c in consumers))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    for c in consumers:
        await c.stop()
    return count / wall, cpu / count * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--bootstrap")
    args = parser.parse_args()
    with broker(args.bootstrap) as bootstrap:
        print("| members | records/s | client CPU per record |")
        print("|---|---|---|")
        for members in (1, 3):
            topic, _ = await prepare(bootstrap, args.count)
            rate, cpu_us = await run(bootstrap, topic, args.count, members)
            print(f"| {members} | {rate:,.0f} | {cpu_us:.1f} µs |", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
