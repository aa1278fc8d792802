"""Exactly-once consume-process-produce with a transactional producer.

Reads ``eos-input`` (2 partitions) in the consumer group ``eos-demo``, upper-cases each
value and writes it to ``eos-output``; the output records and the consumed offsets are
committed in one transaction, so a crash at any point neither loses nor duplicates
output for ``read_committed`` readers.

Errors are handled the way the transactional API guide says
(:func:`aiokafka.errors.transaction_error_kind`):

* fatal (``ProducerFenced``: another instance with the same ``transactional_id``
  took over; authorization; broker too old): the producer cannot go on; close it
  and stop this instance.
* abortable (a record or the offset commit failed, the transaction timed out, the
  consumer is no longer a current group member): abort, rewind the consumer to the
  committed offsets and process those records again.
* a commit that timed out has an unknown outcome: commit again (never abort it).

Run ``python examples/transactional_consume_process_produce.py`` to start a local
broker the way ``make demo`` does, or pass ``--bootstrap host:port`` for a running one.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import (
    KafkaError,
    KafkaTimeoutError,
    TopicAlreadyExistsError,
    TransactionErrorKind,
    transaction_error_kind,
)
from aiokafka.structs import OffsetAndMetadata, TopicPartition

INPUT, OUTPUT, GROUP = "eos-input", "eos-output", "eos-demo"
RECORDS = 1000


async def create_topics_and_input(bootstrap: str) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        try:
            await admin.create_topics(
                [NewTopic(INPUT, 2, 1), NewTopic(OUTPUT, 2, 1)],
                timeout_ms=30000,
                raise_errors=True,
            )
        except TopicAlreadyExistsError:
            pass  # a second run: the topics are there (the others were created)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(RECORDS):
            await producer.send(INPUT, b"record %d" % i, key=b"%d" % (i % 10))
    print(f"wrote {RECORDS} input records to {INPUT}")


async def commit(producer: AIOKafkaProducer) -> None:
    """Commit; a timeout leaves the outcome unknown, so the same commit is retried."""
    for _ in range(10):
        try:
            await producer.commit_transaction()
            return
        except KafkaTimeoutError as exc:
            print(f"commit timed out, committing again: {exc}")
    await producer.commit_transaction()


async def rewind(consumer: AIOKafkaConsumer[Any, Any], tps: Any) -> None:
    """After an abort: consume again from the last committed offsets."""
    for tp in tps:
        committed = await consumer.committed(tp)
        if committed is None:
            await consumer.seek_to_beginning(tp)
        else:
            consumer.seek(tp, committed)


async def run(bootstrap: str) -> None:
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=GROUP,
        enable_auto_commit=False,  # offsets are committed by the transactions
        auto_offset_reset="earliest",
        isolation_level="read_committed",  # never process aborted input
    )
    # One transactional_id per input shard in a real deployment; the id is what
    # fences a zombie instance when its replacement starts.
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id="eos-demo-0")
    await consumer.start()
    await producer.start()
    processed = 0
    try:
        consumer.subscribe([INPUT])
        idle_since = time.monotonic()
        while time.monotonic() - idle_since < 10:  # stop after 10 s without input
            batches = await consumer.getmany(timeout_ms=1000, max_records=200)
            if not batches:
                continue
            idle_since = time.monotonic()
            await producer.begin_transaction()
            try:
                offsets = {}
                for tp, records in batches.items():
                    for r in records:
                        assert r.value is not None
                        await producer.send(OUTPUT, r.value.upper(), key=r.key)
                    offsets[tp] = OffsetAndMetadata(records[-1].offset + 1, "")
                await producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
                await commit(producer)
            except KafkaError as exc:
                if transaction_error_kind(exc) is TransactionErrorKind.FATAL:
                    print(f"fatal error, this instance stops: {exc!r}")
                    raise
                print(f"aborting the transaction and processing again: {exc!r}")
                await producer.abort_transaction()
                await rewind(consumer, batches)
                continue
            processed += sum(len(r) for r in batches.values())
            print(f"committed a transaction; {processed} records processed")
    finally:
        await producer.stop()
        await consumer.stop()

    # What read_committed consumers see: the committed output, once per input record
    # (more after repeated runs, which process the new input of each run).
    tps = [TopicPartition(OUTPUT, p) for p in range(2)]
    reader: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed"
    )
    seen = 0
    async with reader:
        reader.assign(tps)
        await reader.seek_to_beginning(*tps)
        ends = await reader.end_offsets(tps)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            seen += sum(len(r) for r in (await reader.getmany(timeout_ms=500)).values())
            if all([await reader.position(tp) >= ends[tp] for tp in tps]):
                break
    print(f"{OUTPUT} holds {seen} committed records")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", help="a running broker (default: start one)")
    args = parser.parse_args()
    if args.bootstrap:
        asyncio.run(create_topics_and_input(args.bootstrap))
        asyncio.run(run(args.bootstrap))
        return
    from tools.kafka.rig import start_single

    print("starting a local Apache Kafka broker (KRaft, loopback)...")
    cluster = start_single()
    try:
        asyncio.run(create_topics_and_input(cluster.bootstrap_servers))
        asyncio.run(run(cluster.bootstrap_servers))
    finally:
        cluster.stop()
        print("broker stopped")


if __name__ == "__main__":
    main()
