"""A work queue on Kafka: workers are members of one share group (KIP-932).

Every worker reads the same partition; the broker hands each job to one worker at a
time and locks it until that worker acknowledges it:

* ``accept``: the job is done and never delivered again;
* ``release``: the job failed for now; the broker delivers it again (to any worker),
  with a higher ``delivery_count``;
* ``reject``: the job can never succeed (a poison message); it is archived.

A job a worker neither accepts nor releases (because the worker crashed) goes back to
the others when its acquisition lock (``share.record.lock.duration.ms``) runs out, and
a job delivered ``share.delivery.count.limit`` times is archived by the broker.

This program queues ``--jobs`` jobs, then runs ``--workers`` workers until every job
is settled. Jobs whose number is a multiple of 7 fail on their first attempt; job 13
is poison. Run it::

    python examples/share_work_queue.py --bootstrap localhost:9092
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from collections import Counter

from aiokafka import AIOKafkaProducer, AIOKafkaShareConsumer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType, NewTopic
from aiokafka.share import ShareConsumerRecord


class PoisonJob(Exception):
    """A job that can never succeed."""


async def process(job: int, attempt: int) -> None:
    """The work itself: a short sleep; some jobs fail once, job 13 always."""
    await asyncio.sleep(0.005)
    if job == 13:
        raise PoisonJob(job)
    if job % 7 == 0 and attempt == 1:
        raise RuntimeError(f"job {job}: transient failure")


async def worker(
    name: str,
    bootstrap: str,
    topic: str,
    group: str,
    settled: Counter[str],
    jobs: int,
    stop: asyncio.Event,
) -> None:
    async with AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=bootstrap,
        acknowledgement_mode="explicit",  # every job acknowledged one by one
        max_poll_records=5,
    ) as consumer:
        while not stop.is_set():
            batch = await consumer.getmany(timeout_ms=500)
            for records in batch.values():
                for record in records:
                    settled[await handle(consumer, record)] += 1
            # Wait for the broker to confirm these acknowledgements.
            for tp, error in (await consumer.commit()).items():
                if error is not None:
                    print(f"{name}: acknowledgement for {tp} failed: {error}", flush=True)
            if settled["accepted"] + settled["rejected"] >= jobs:
                stop.set()  # every job settled: all workers finish


async def handle(consumer: AIOKafkaShareConsumer, record: ShareConsumerRecord[bytes, bytes]) -> str:
    job = int(record.value or b"0")
    try:
        await process(job, record.delivery_count)
    except PoisonJob:
        consumer.acknowledge(record, "reject")
        return "rejected"
    except RuntimeError:
        consumer.acknowledge(record, "release")
        return "released"
    consumer.acknowledge(record, "accept")
    return "accepted"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--workers", type=int, default=3)
    args = parser.parse_args()
    topic = f"share-jobs-{uuid.uuid4().hex[:8]}"
    group = f"share-workers-{uuid.uuid4().hex[:8]}"

    async with AIOKafkaAdminClient(bootstrap_servers=args.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
        # A new share group starts at the latest offset; this one reads what is queued.
        await admin.incremental_alter_configs(
            {
                ConfigResource(ConfigResourceType.GROUP, group): [
                    AlterConfigOp("share.auto.offset.reset", "earliest")
                ]
            }
        )
        async with AIOKafkaProducer(bootstrap_servers=args.bootstrap) as producer:
            for job in range(args.jobs):
                # One small batch per job: the broker hands out whole batches.
                await (await producer.send(topic, str(job).encode()))
        print(f"queued {args.jobs} jobs on {topic}", flush=True)

        settled: Counter[str] = Counter()
        stop = asyncio.Event()
        workers = [
            asyncio.create_task(
                worker(f"worker-{i}", args.bootstrap, topic, group, settled, args.jobs, stop)
            )
            for i in range(args.workers)
        ]
        await asyncio.wait_for(stop.wait(), 120)
        await asyncio.gather(*workers)
        print(
            f"accepted {settled['accepted']}, released {settled['released']} "
            f"(redelivered later), rejected {settled['rejected']}",
            flush=True,
        )
        await admin.delete_share_groups([group])
        await admin.delete_topics([topic])


if __name__ == "__main__":
    asyncio.run(main())
