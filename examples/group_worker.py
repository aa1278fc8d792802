"""A consumer-group worker: ``async for``, manual commits, a rebalance listener and a
clean shutdown on SIGTERM.

Start several copies with the same ``--group``: Kafka splits the topic's partitions
among them and moves partitions when a worker joins or leaves. Offsets are committed
by the worker itself (``enable_auto_commit=False``) only for records it has
processed, so a record is processed at least once even if a worker crashes:

* every ``--commit-every`` records;
* in ``on_partitions_revoked``, for the partitions about to move to another worker
  (otherwise the new owner would process their records again);
* on SIGTERM or SIGINT, before leaving the group.

Run it::

    python examples/group_worker.py --bootstrap localhost:9092 --topic events --group workers
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener


def log(message: str) -> None:
    print(message, flush=True)


class Progress:
    """The offset to commit per partition: the one after the last processed record."""

    def __init__(self) -> None:
        self.pending: dict[TopicPartition, int] = {}
        self.processed = 0

    def done(self, record: ConsumerRecord[bytes, bytes]) -> None:
        self.pending[TopicPartition(record.topic, record.partition)] = record.offset + 1
        self.processed += 1

    def offsets(self, partitions: set[TopicPartition] | None = None) -> dict[TopicPartition, int]:
        """The offsets to commit (of ``partitions`` only, if given)."""
        return {
            tp: offset
            for tp, offset in self.pending.items()
            if partitions is None or tp in partitions
        }

    def committed(self, offsets: dict[TopicPartition, int]) -> None:
        """Forget what ``offsets`` committed (unless more was processed meanwhile)."""
        for tp, offset in offsets.items():
            if self.pending.get(tp) == offset:
                del self.pending[tp]

    def forget(self, partitions: set[TopicPartition]) -> None:
        for tp in partitions:
            self.pending.pop(tp, None)


class CommitOnRevoke(ConsumerRebalanceListener):
    def __init__(self, consumer: AIOKafkaConsumer[bytes, bytes], progress: Progress) -> None:
        self.consumer = consumer
        self.progress = progress

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        # The member still owns these partitions while this runs: commit what was
        # processed so that their next owner starts right after it.
        offsets = self.progress.offsets(revoked)
        try:
            if offsets:
                await self.consumer.commit(offsets)
        finally:
            # Not ours any more, committed or not.
            self.progress.forget(revoked)
        log(f"revoked {sorted(revoked)}, committed {sorted(offsets.items())}")

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        log(f"assigned {sorted(assigned)}")

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        # Dropped from the group (e.g. no poll within max_poll_interval_ms): others
        # may own these partitions already, so a commit would fail. Forget them;
        # their records will be processed again by the new owner.
        self.progress.forget(lost)
        log(f"lost {sorted(lost)}")


def process(record: ConsumerRecord[bytes, bytes]) -> None:
    """The application's work (here: nothing)."""


async def consume(
    consumer: AIOKafkaConsumer[bytes, bytes], progress: Progress, commit_every: int
) -> None:
    async for record in consumer:
        process(record)
        progress.done(record)
        if progress.processed % commit_every == 0:
            # Read, commit, then forget: if a SIGTERM cancels the commit, the offsets
            # are still pending and the final commit includes them.
            offsets = progress.offsets()
            await consumer.commit(offsets)
            progress.committed(offsets)
        if progress.processed % 100 == 0:
            log(f"processed {progress.processed}")


async def run(bootstrap: str, topic: str, group: str, commit_every: int, protocol: str) -> None:
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        group_protocol=protocol,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    progress = Progress()
    consumer.subscribe([topic], listener=CommitOnRevoke(consumer, progress))
    await consumer.start()
    try:
        worker = asyncio.create_task(consume(consumer, progress, commit_every))
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            # Cancelling the loop interrupts it where it awaits: waiting for records
            # or committing. process() is not interrupted (it does not await here;
            # if yours does, shield it or check a flag between records instead).
            loop.add_signal_handler(signum, worker.cancel)
        # wait() returns when the worker ends, also by cancellation, and lets a
        # cancellation of run() itself propagate.
        await asyncio.wait([worker])
        if not worker.cancelled():
            worker.result()  # the loop ended with an error: raise it
        final = progress.offsets()
        if final:
            await consumer.commit(final)
        log(f"stopping: committed {sorted(final.items())}, processed {progress.processed}")
    finally:
        # Leaves the group, so the other workers take over the partitions at once.
        await consumer.stop()
    log("stopped cleanly")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument("--group", default="workers")
    parser.add_argument("--commit-every", type=int, default=1000)
    parser.add_argument("--group-protocol", choices=["classic", "consumer"], default="classic")
    args = parser.parse_args()
    asyncio.run(run(args.bootstrap, args.topic, args.group, args.commit_every, args.group_protocol))


if __name__ == "__main__":
    main()
