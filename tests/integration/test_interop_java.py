"""Interop with the Apache Kafka Java client, every codec, both directions.

Records the Java producer writes are read intact by AIOKafkaConsumer, and records
AIOKafkaProducer writes are read intact by the Java consumer: keys (including null),
values (including null and empty), headers (repeated keys, null and empty values),
explicit timestamps, partitions and offsets. Each direction starts one JVM for all codecs
(tools/javaclient), because JVM start-up is the slow part on a small machine.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import TopicPartition
from tools.javaclient import ConsumeJob, JavaRecord, ProduceJob, SentRecord, consume, produce
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
PARTITIONS = 2
PER_TOPIC = 40
BASE_TS = 1_700_000_000_000

pytestmark = pytest.mark.skipif(
    shutil.which("java") is None or shutil.which("javac") is None,
    reason="the Java interop tests need a JDK (java and javac on PATH)",
)


def sample_records(tag: str) -> list[JavaRecord]:
    """Records exercising every field: null/empty keys and values, odd headers, binary."""
    out = []
    for i in range(PER_TOPIC):
        key = None if i % 10 == 3 else f"{tag}-k{i}".encode()
        value: bytes | None
        if i % 10 == 5:
            value = None
        elif i % 10 == 7:
            value = b""
        else:
            # Repetitive payloads so the codecs actually compress; a binary tail too.
            value = f"{tag}-value-{i}-".encode() * 15 + bytes(range(256))
        headers: list[tuple[str, bytes | None]] = [
            ("trace", b"t%d" % i),
            ("empty", b""),
            ("none", None),
            ("trace", b"again"),
        ]
        out.append(JavaRecord(key, value, headers, partition=i % PARTITIONS, timestamp=BASE_TS + i))
    return out


async def read_ours(bootstrap: str, topic: str, expected: int) -> list[Any]:
    """Read ``expected`` records from every partition of ``topic`` (bounded wait)."""
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        out: list[Any] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while len(out) < expected and loop.time() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                out.extend(records)
        # Anything beyond `expected` would be a duplicate: look once more.
        for records in (await consumer.getmany(timeout_ms=300)).values():
            out.extend(records)
        return out
    finally:
        await consumer.stop()


def by_position(records: list[Any]) -> dict[tuple[int, int], Any]:
    return {(r.partition, r.offset): r for r in records}


async def test_java_producer_to_aiokafka_every_codec(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    jobs = [
        ProduceJob(new_topic(partitions=PARTITIONS), codec, sample_records(codec))
        for codec in CODECS
    ]
    # Idempotent producer (no transactions): producer id, epoch and sequences in the batches.
    jobs.append(
        ProduceJob(
            new_topic(partitions=PARTITIONS), "zstd", sample_records("idem"), idempotent=True
        )
    )
    sent = await asyncio.to_thread(produce, kafka.bootstrap_servers, jobs)
    assert len(sent) == len(jobs) * PER_TOPIC

    cursor = 0
    for job in jobs:
        meta = sent[cursor : cursor + PER_TOPIC]
        cursor += PER_TOPIC
        assert [m.partition for m in meta] == [r.partition for r in job.records]
        got = by_position(await read_ours(kafka.bootstrap_servers, job.topic, PER_TOPIC))
        assert len(got) == PER_TOPIC, (job.compression, job.idempotent, sorted(got))
        for original, md in zip(job.records, meta, strict=True):
            rec = got[(md.partition, md.offset)]
            what = (job.compression, job.idempotent, md.partition, md.offset)
            assert (rec.key, rec.value) == (original.key, original.value), what
            assert list(rec.headers) == original.headers, what
            assert (rec.timestamp, rec.timestamp_type) == (original.timestamp, 0), what
        # The Java producer's offsets are dense per partition, starting at 0.
        for p in range(PARTITIONS):
            offsets = sorted(m.offset for m in meta if m.partition == p)
            assert offsets == list(range(len(offsets)))


async def test_aiokafka_producer_to_java_every_codec(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    expected: dict[str, dict[tuple[int, int], JavaRecord]] = {}
    for codec in CODECS:
        topic = new_topic(partitions=PARTITIONS)
        records = sample_records(codec)
        async with AIOKafkaProducer(
            bootstrap_servers=kafka.bootstrap_servers,
            compression_type=None if codec == "none" else codec,
            linger_ms=5,
        ) as producer:
            futures = [
                await producer.send(
                    topic,
                    r.value,
                    key=r.key,
                    partition=r.partition,
                    timestamp_ms=r.timestamp,
                    headers=r.headers,
                )
                for r in records
            ]
            results = await asyncio.gather(*futures)
        expected[topic] = {
            (md.partition, md.offset): r for md, r in zip(results, records, strict=True)
        }

    got: list[SentRecord] = await asyncio.to_thread(
        consume,
        kafka.bootstrap_servers,
        [ConsumeJob(topic, PARTITIONS, PER_TOPIC) for topic in expected],
    )
    for topic, want in expected.items():
        read = {(r.partition, r.offset): r for r in got if r.topic == topic}
        assert sorted(read) == sorted(want), topic
        for position, original in want.items():
            rec = read[position]
            assert (rec.key, rec.value) == (original.key, original.value), (topic, position)
            assert rec.headers == original.headers, (topic, position)
            # 0 = CreateTime: the timestamps we set, not the broker's.
            assert (rec.timestamp, rec.timestamp_type) == (original.timestamp, 0)
