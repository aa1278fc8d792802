"""Exactly-once consume-process-produce against a real broker.

A processor (this module run as a program, see :func:`process`) reads two input
partitions in a consumer group and, per poll, writes one output record per input
record and the consumed offsets in one transaction
(``send_offsets_to_transaction(..., consumer.group_metadata())``). The test kills it
with SIGKILL in the middle of the stream several times and restarts it; afterwards
the output read with ``read_committed`` must hold every input record's output
exactly once, in input order per partition, and the group's committed offsets must
be the input end offsets.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.errors import (
    KafkaError,
    TransactionErrorKind,
    transaction_error_kind,
)
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import OffsetAndMetadata, TopicPartition
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(420)

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = 2
PER_PARTITION = 1000
KILLS = 5


async def process(bootstrap: str, src: str, dst: str, group: str, tid: str) -> None:
    """The processor: runs until killed. Prints ``committed <n>`` after each commit
    (``n`` = records committed by this process so far)."""
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        # Static membership: a restarted processor takes the killed one's place at
        # once, without waiting for its session to time out.
        group_instance_id="processor",
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        fetch_max_wait_ms=100,
        max_poll_records=25,
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid, linger_ms=5)
    await consumer.start()
    await producer.start()
    consumer.subscribe([src])
    done = 0
    while True:
        batches = await consumer.getmany(timeout_ms=200, max_records=25)
        if not batches:
            continue
        try:
            async with producer.transaction():
                offsets: dict[TopicPartition, OffsetAndMetadata] = {}
                for tp, records in batches.items():
                    for r in records:
                        assert r.value is not None
                        await producer.send(dst, b"out:" + r.value, partition=tp.partition)
                    offsets[tp] = OffsetAndMetadata(records[-1].offset + 1, "")
                await producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
                # The records are in the log, not committed: a kill now leaves an
                # open transaction that the next processor's start must abort.
                await producer.flush()
                print(f"flushed {done}", flush=True)
                await asyncio.sleep(0.05)
        except KafkaError as exc:
            if transaction_error_kind(exc) is TransactionErrorKind.FATAL:
                raise
            # Aborted: rewind to the last committed offsets and process again.
            for tp in batches:
                committed = await consumer.committed(tp)
                consumer.seek(tp, committed if committed is not None else 0)
            continue
        done += sum(len(r) for r in batches.values())
        print(f"committed {done}", flush=True)


def start_processor(kafka: KafkaCluster, src: str, dst: str, group: str, tid: str) -> Any:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = [kafka.bootstrap_servers, src, dst, group, tid]
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.test_eos", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def wait_committed(proc: Any, at_least: int, timeout: float) -> bool:
    """Read the processor's progress lines until it committed ``at_least`` records
    and then flushed the records of its next transaction (not committed yet)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        try:
            line = await asyncio.wait_for(
                asyncio.to_thread(proc.stdout.readline), max(0.1, deadline - loop.time())
            )
        except asyncio.TimeoutError:
            return False
        if not line:
            return False  # the process ended
        if line.startswith("flushed ") and int(line.split()[1]) >= at_least:
            return True
    return False


def kill(proc: Any) -> str:
    """SIGKILL (no clean close of anything); returns the end of its stderr."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    if proc.stderr.closed:
        return ""
    tail = str(proc.stderr.read())[-3000:]
    proc.stderr.close()
    proc.stdout.close()
    return tail


async def group_offsets(kafka: KafkaCluster, group: str, tps: list[TopicPartition]) -> list[Any]:
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    async with consumer:
        consumer.assign(tps)
        return [await consumer.committed(tp) for tp in tps]


async def test_consume_process_produce_exactly_once_across_kills(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    src = new_topic(partitions=PARTITIONS)
    dst = new_topic(partitions=PARTITIONS)
    group = f"eos-{uuid.uuid4().hex}"
    tid = f"eos-{uuid.uuid4().hex}"
    in_tps = [TopicPartition(src, p) for p in range(PARTITIONS)]
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(PER_PARTITION):
            for p in range(PARTITIONS):
                await producer.send(src, b"%d-%05d" % (p, i), partition=p)
        await producer.flush()

    rng = random.Random(5)
    kills = 0
    stderr_tail = ""
    proc = start_processor(kafka, src, dst, group, tid)
    try:
        # Each run commits some records (its first transactions may redo the work of
        # the killed run's aborted one), then dies with SIGKILL at a random moment.
        while kills < KILLS:
            progressed = await wait_committed(proc, rng.randint(60, 200), 90)
            assert progressed, f"processor made no progress: {kill(proc)}"
            stderr_tail = kill(proc)
            kills += 1
            proc = start_processor(kafka, src, dst, group, tid)
        # The last run finishes the stream.
        total = PARTITIONS * PER_PARTITION
        deadline = time.monotonic() + 120
        offsets: list[Any] = []
        while time.monotonic() < deadline:
            offsets = await group_offsets(kafka, group, in_tps)
            if offsets == [PER_PARTITION] * PARTITIONS:
                break
            assert proc.poll() is None, f"processor died: {kill(proc)}"
            await asyncio.sleep(1)
        assert offsets == [PER_PARTITION] * PARTITIONS, (offsets, stderr_tail)
    finally:
        stderr_tail = kill(proc)

    out_tps = [TopicPartition(dst, p) for p in range(PARTITIONS)]
    got: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
    reader: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        fetch_max_wait_ms=100,
    )
    async with reader:
        reader.assign(out_tps)
        ends = await reader.end_offsets(out_tps)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for tp, records in (await reader.getmany(timeout_ms=300)).items():
                got[tp.partition].extend(r.value for r in records if r.value is not None)
            if all([await reader.position(tp) >= ends[tp] for tp in out_tps]):
                break
    for p in range(PARTITIONS):
        expected = [b"out:%d-%05d" % (p, i) for i in range(PER_PARTITION)]
        assert len(got[p]) == len(expected), (p, len(got[p]), total)
        assert got[p] == expected
    # Each kill left an open transaction with flushed records (aborted by the next
    # processor's InitProducerId): read_uncommitted sees them, read_committed not.
    uncommitted = 0
    raw: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        isolation_level="read_uncommitted",
        auto_offset_reset="earliest",
        fetch_max_wait_ms=100,
    )
    async with raw:
        raw.assign(out_tps)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for records in (await raw.getmany(timeout_ms=300)).values():
                uncommitted += len(records)
            if all([await raw.position(tp) >= ends[tp] for tp in out_tps]):
                break
    assert uncommitted > total


if __name__ == "__main__":
    asyncio.run(process(*sys.argv[1:6]))
